// The confirmation before an erasure: what goes, what stays, and that it cannot be undone.
import { useId, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { useAction } from "../../ui/hooks.ts";
import { ActionResult } from "../../ui/parts.tsx";
import type { Candidate, Erasure } from "./types.ts";

export function ConfirmErase(
  { member, close, onStarted }: {
    member: Candidate;
    close(): void;
    onStarted(e: Erasure): void;
  },
) {
  const id = useId();
  const [sure, setSure] = useState(false);
  const action = useAction();
  const name = `${member.first_name} ${member.last_name}`.trim() ||
    member.email || "this member";
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        let started: Erasure | null = null;
        const ok = await action.run(async () => {
          started = await unwrap(
            api.POST("/webhooks/erasures", { body: { member_id: member.id } }),
          );
        });
        if (ok && started) {
          close();
          onStarted(started);
        }
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
      <div className="event-choice">
        <input
          id={`${id}-sure`}
          type="checkbox"
          checked={sure}
          onChange={(e) => setSure(e.target.checked)}
        />
        <label htmlFor={`${id}-sure`}>I understand this cannot be undone</label>
      </div>
      <ActionResult action={action} />
      <div className="actions">
        <button
          type="submit"
          className="danger"
          disabled={!sure || action.pending}
        >
          {action.pending ? "Erasing…" : `Erase ${name}`}
        </button>
        <button type="button" onClick={close} autoFocus>Cancel</button>
      </div>
    </form>
  );
}
