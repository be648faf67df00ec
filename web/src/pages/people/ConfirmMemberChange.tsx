// Asking before every change of someone's standing: making them admin or staff (an admin's endpoints are
// disabled when they become staff), removing someone (they lose access at once, the API keys they made
// stop working and the webhook endpoints they made are disabled unless kept), leaving, and stepping down
// from admin. A refusal (the last admin) is said here, beside the button that caused it; focus stays on
// that button (it is never disabled while working).
import { useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { useSession } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { MadeEndpoints } from "./MadeEndpoints.tsx";
import type { Confirm } from "./MemberTable.tsx";
import { personName } from "./types.ts";

export const confirmTitle = (c: Confirm): string =>
  c.kind === "role"
    ? `Make ${personName(c.person)} ${c.person.role === "admin" ? "staff" : "admin"}?`
    : c.kind === "step_down"
    ? "Step down to staff?"
    : c.person.you
    ? "Leave this organization?"
    : "Remove this person?";

export function ConfirmMemberChange(
  { confirm, close, onDone }: {
    confirm: Confirm;
    close(): void;
    /** What happened, in words; `moved`: the row's button is gone (focus goes to the words). */
    onDone(text: string, moved: boolean): void;
  },
) {
  const session = useSession();
  const { kind, person } = confirm;
  const name = personName(person);
  const org = session.organization?.organization_name ?? "this organization";
  // Only another admin may keep someone's endpoints; the default disables them.
  const [keep, setKeep] = useState(false);
  const other = person.role === "admin" ? "staff" : "admin";
  const act = useAction(async () => {
    const path = { params: { path: { id: person.id } } };
    if (kind === "role") {
      try {
        const changed = await unwrap(api.PATCH("/webhooks/people/{id}", { ...path, body: { role: other } }));
        const n = changed.endpoints_disabled;
        return `${name} is ${other === "admin" ? "an admin" : "staff"} now.` +
          (n > 0
            ? ` ${n} webhook endpoint${n === 1 ? "" : "s"} ${name} made ${n === 1 ? "was" : "were"} disabled.`
            : "");
      } catch (e) {
        // Removed meanwhile: the refreshed list drops the row, so it is said above the list.
        if (e instanceof ApiError && e.status === 404) {
          return `GONE:${name} is no longer a member of this organization.`;
        }
        throw e;
      }
    }
    if (kind === "step_down") {
      await unwrap(
        api.PATCH("/webhooks/people/{id}", {
          ...path,
          body: { role: "staff" },
        }),
      );
      return;
    }
    const removed = await unwrap(
      api.DELETE("/webhooks/people/{id}", { ...path, body: { keep_endpoints: keep && !person.you } }),
    );
    const n = removed.endpoints_disabled;
    return `${name} was removed from ${org}.` +
      (n > 0
        ? ` ${n} webhook endpoint${n === 1 ? "" : "s"} they made ${n === 1 ? "was" : "were"} disabled.`
        : "");
  });
  const what = kind === "role"
    ? `Make ${other}`
    : kind === "step_down"
    ? "Step down"
    : person.you
    ? "Leave"
    : `Remove ${name}`;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        act.mutate(undefined, {
          onSuccess: async (said) => {
            close();
            if (person.you) {
              // No longer an admin here (or no longer here): the page follows who you are now.
              await session.reloadMe();
              return;
            }
            const text = said || `${name} was removed from ${org}.`;
            if (text.startsWith("GONE:")) onDone(text.slice(5), true);
            else onDone(text, kind === "remove");
          },
        });
      }}
    >
      {kind === "role" && other === "admin" && (
        <p>
          <strong>{name}</strong> will manage {org}'s settings, webhooks, API keys and people, at once.
        </p>
      )}
      {kind === "role" && other === "staff" && (
        <p>
          <strong>{name}</strong> will no longer manage{" "}
          {org}'s settings, webhooks, API keys or people; the API keys they made stop working and the webhook
          endpoints they made are disabled.
        </p>
      )}
      {kind === "step_down" && (
        <p>
          You will be staff of{" "}
          {org}: you will no longer manage its settings, webhooks, API keys or people, and the API keys you
          made stop working. Another admin can make you admin again.
        </p>
      )}
      {kind === "remove" && person.you && (
        <p>
          You will no longer be a member of{" "}
          {org}, and the API keys you made stop working. An admin would have to invite you again.
        </p>
      )}
      {kind === "remove" && !person.you && (
        <p>
          <strong>{name}</strong> loses access to {org}{" "}
          at once{person.role === "admin" ? ", and the API keys they made stop working" : ""}. You can invite
          them again later.
        </p>
      )}
      {kind !== "role" && (
        <MadeEndpoints
          person={person}
          keep={keep}
          onKeep={kind === "remove" && !person.you ? setKeep : undefined}
          settled={act.isPending || act.isSuccess}
        />
      )}
      <ActionResult action={act} />
      <div className="actions">
        <button type="submit" className="danger" aria-disabled={act.isPending || undefined}>
          {act.isPending ? "Working…" : what}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
