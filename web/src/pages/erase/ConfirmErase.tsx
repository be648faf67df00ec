// The confirmation before an erasure: what goes, what stays, and that it cannot be undone.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { useOrgKey } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import type { Candidate, Erasure } from "./types.ts";
import "./ConfirmErase.css";

export function ConfirmErase(
  { member, close, onStarted }: {
    member: Candidate;
    close(): void;
    onStarted(e: Erasure): void;
  },
) {
  const id = useId();
  const org = useOrgKey();
  const queries = useQueryClient();
  const [sure, setSure] = useState(false);
  const erase = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/webhooks/erasures", { body: { member_id: member.id } }),
      ),
    onSettled: () => queries.invalidateQueries({ queryKey: [org] }),
  });
  const name = `${member.first_name} ${member.last_name}`.trim() ||
    member.email || "this member";
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        erase.mutate(undefined, {
          onSuccess: (started) => {
            close();
            onStarted(started);
          },
        });
      }}
    >
      <p>
        <strong>{name}</strong>
        {member.email ? ` (${member.email})` : ""}{" "}
        and every copy of their data are removed: the member record and attendance, WhatsApp conversations,
        the bodies of webhook events about them and of payment notifications naming them, and e-mails to them.
        Webhook deliveries about them that are still due are not sent.
      </p>
      <p>
        What stays: donations (without the name), and the history without the data (times, statuses). A record
        of the erasure is kept: who did it, when, and how many rows of each kind.
      </p>
      <div className="confirm-check">
        <input
          id={`${id}-sure`}
          type="checkbox"
          checked={sure}
          onChange={(e) => setSure(e.currentTarget.checked)}
        />
        <label htmlFor={`${id}-sure`}>I understand this cannot be undone</label>
      </div>
      <ActionResult action={erase} />
      <div className="actions">
        <button
          type="submit"
          className="danger"
          disabled={!sure}
          aria-disabled={erase.isPending || undefined}
        >
          {erase.isPending ? "Erasing…" : `Erase ${name}`}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
