// The organization's members: role, joined, last sign-in, and what an admin can do about each. Making
// someone else admin or staff happens at once (the answer shows at the button); stepping down oneself
// and removing anyone ask first (`onConfirm`).
import { useId } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";
import { relativeTime } from "../../format.ts";
import { type Person, personName, ROLE_WORDS } from "./types.ts";

export type Confirm = { kind: "remove" | "step_down"; person: Person };

export function MemberTable(
  { people, onConfirm, onGone }: {
    people: Person[];
    onConfirm(c: Confirm): void;
    onGone(text: string): void;
  },
) {
  const admins = people.filter((p) => p.role === "admin").length;
  return (
    <div className="table-wrap" role="region" aria-label="Members" tabIndex={0}>
      <table>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">Role</th>
            <th scope="col" className="wide">Joined</th>
            <th scope="col" className="wide">Last sign-in</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {people.map((p) => (
            <MemberRow
              key={p.id}
              person={p}
              onlyAdmin={p.role === "admin" && admins === 1}
              onConfirm={onConfirm}
              onGone={onGone}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MemberRow(
  { person: p, onlyAdmin, onConfirm, onGone }: {
    person: Person;
    onlyAdmin: boolean;
    onConfirm(c: Confirm): void;
    onGone(text: string): void;
  },
) {
  const id = useId();
  const name = personName(p);
  const other = p.role === "admin" ? "staff" : "admin";
  const change = useAction(async () => {
    try {
      const changed = await unwrap(
        api.PATCH("/webhooks/people/{id}", {
          params: { path: { id: p.id } },
          body: { role: other },
        }),
      );
      // No longer an admin: the endpoints they made send nothing more (Settings > Webhooks re-enables).
      const n = changed.endpoints_disabled;
      if (n > 0) {
        onGone(
          `${n} webhook endpoint${n === 1 ? "" : "s"} ${name} made ${n === 1 ? "was" : "were"} disabled.`,
        );
      }
    } catch (e) {
      // Removed meanwhile: the refreshed list drops this row, so it is said above the list.
      if (e instanceof ApiError && e.status === 404) {
        onGone(`${name} is no longer a member of this organization.`);
        return;
      }
      throw e;
    }
  });
  const error = change.error ? (change.error as Error).message : null;
  const note = onlyAdmin ? "The only admin: make someone else admin before you step down or leave." : null;
  const describedBy = [error && `${id}-err`, note && `${id}-note`].filter(Boolean).join(" ") ||
    undefined;
  return (
    <tr>
      <th scope="row">
        <span className="person-email">{name}</span>
        {p.you && <span className="you">(you)</span>}
        {p.display_name && p.email && <div className="muted small">{p.display_name}</div>}
        <div className="narrow-only muted small">
          Joined {relativeTime(p.joined_at)};{" "}
          {p.last_sign_in_at ? `last signed in ${relativeTime(p.last_sign_in_at)}` : "never signed in"}
        </div>
      </th>
      <td>
        <Badge
          status={p.role}
          kind={p.role === "admin" ? "delivered" : "pending"}
        >
          {ROLE_WORDS[p.role]}
        </Badge>
      </td>
      <td className="wide">
        <Time iso={p.joined_at} />
      </td>
      <td className="wide">
        <Time iso={p.last_sign_in_at} fallback="Never" />
      </td>
      <td>
        <div className="people-actions">
          {p.you && p.role === "admin"
            ? (
              <button
                type="button"
                aria-describedby={describedBy}
                onClick={() => onConfirm({ kind: "step_down", person: p })}
              >
                Step down to staff
              </button>
            )
            : (
              <button
                type="button"
                aria-label={`Make ${other}: ${name}`}
                aria-describedby={describedBy}
                disabled={change.isPending}
                onClick={() => change.mutate()}
              >
                Make {other}
              </button>
            )}
          <button
            type="button"
            className="danger"
            aria-label={p.you ? undefined : `Remove ${name}`}
            aria-describedby={describedBy}
            onClick={() => onConfirm({ kind: "remove", person: p })}
          >
            {p.you ? "Leave" : "Remove"}
          </button>
          {note && <p id={`${id}-note`} className="help">{note}</p>}
          {error && <p id={`${id}-err`} className="field-error" role="alert">{error}</p>}
        </div>
      </td>
    </tr>
  );
}
