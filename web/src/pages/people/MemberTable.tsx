// The organization's members: role, joined, last sign-in, and what an admin can do about each. Every
// change asks first (`onConfirm`): making someone admin or staff, stepping down, removing, leaving. The
// only admin is not offered stepping down or leaving (the server would refuse): a note says why.
import { useId } from "react";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";
import { relativeTime } from "../../format.ts";
import { type Person, personName, ROLE_WORDS } from "./types.ts";

export type Confirm = { kind: "remove" | "step_down" | "role"; person: Person };

export function MemberTable(
  { people, onConfirm }: {
    people: Person[];
    onConfirm(c: Confirm): void;
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
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MemberRow(
  { person: p, onlyAdmin, onConfirm }: {
    person: Person;
    onlyAdmin: boolean;
    onConfirm(c: Confirm): void;
  },
) {
  const id = useId();
  const name = personName(p);
  const other = p.role === "admin" ? "staff" : "admin";
  const note = onlyAdmin ? "The only admin: make someone else admin before you step down or leave." : null;
  const describedBy = note ? `${id}-note` : undefined;
  // Yourself as the only admin: nothing to offer but the note.
  const locked = p.you && onlyAdmin;
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
          {locked ? null : p.you && p.role === "admin"
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
                onClick={() => onConfirm({ kind: "role", person: p })}
              >
                Make {other}
              </button>
            )}
          {!locked && (
            <button
              type="button"
              className="danger"
              aria-label={p.you ? undefined : `Remove ${name}`}
              aria-describedby={describedBy}
              onClick={() => onConfirm({ kind: "remove", person: p })}
            >
              {p.you ? "Leave" : "Remove"}
            </button>
          )}
          {note && <p id={`${id}-note`} className="help">{note}</p>}
        </div>
      </td>
    </tr>
  );
}
