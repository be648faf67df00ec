// Open and expired invitations: resend one (a new link replaces the old, once the address may be mailed
// again, which the row says) or withdraw it (`onWithdraw` asks first).
import { useId } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";
import { relativeTime } from "../../format.ts";
import { type Invitation, ROLE_WORDS } from "./types.ts";

export function InvitationTable(
  { invitations, onWithdraw, onResent }: {
    invitations: Invitation[];
    onWithdraw(i: Invitation): void;
    onResent(text: string): void;
  },
) {
  return (
    <div
      className="table-wrap"
      role="region"
      aria-label="Invitations"
      tabIndex={0}
    >
      <table>
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col" className="wide">Sent</th>
            <th scope="col" className="wide">Expires</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {invitations.map((i) => (
            <InvitationRow
              // By address: a resent invitation is a new one for the same person, and its row (with the
              // Resend button that has focus) stays.
              key={i.email}
              invitation={i}
              onWithdraw={onWithdraw}
              onResent={onResent}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function InvitationRow(
  { invitation: i, onWithdraw, onResent }: {
    invitation: Invitation;
    onWithdraw(i: Invitation): void;
    onResent(text: string): void;
  },
) {
  const id = useId();
  const resend = useAction(async () => {
    try {
      await unwrap(
        api.POST("/webhooks/invitations/{id}/resend", {
          params: { path: { id: i.id } },
        }),
      );
    } catch (e) {
      // Accepted, withdrawn or replaced meanwhile: the refreshed list drops this row, so it is said above.
      if (e instanceof ApiError && e.status === 404) {
        onResent(
          `The invitation to ${i.email} is no longer open: it was accepted, withdrawn or replaced.`,
        );
        return;
      }
      throw e;
    }
    onResent(
      `Invitation sent again to ${i.email}. The link in the earlier mail no longer works.`,
    );
  });
  const error = resend.error ? (resend.error as Error).message : null;
  const wait = i.resend_available_at && Date.parse(i.resend_available_at) > Date.now()
    ? `Another mail can go ${relativeTime(i.resend_available_at)}.`
    : null;
  const describedBy = [wait && `${id}-wait`, error && `${id}-err`].filter(Boolean).join(" ") ||
    undefined;
  return (
    <tr>
      <th scope="row">
        <span className="person-email">{i.email}</span>
        <div className="narrow-only muted small">
          {i.status === "expired"
            ? "Expired"
            : `Sent ${relativeTime(i.created_at)}; expires ${relativeTime(i.expires_at)}`}
        </div>
      </th>
      <td>{ROLE_WORDS[i.role]}</td>
      <td className="wide">
        <Time iso={i.created_at} />
      </td>
      <td className="wide">
        {i.status === "expired"
          ? <Badge status="expired" kind="disabled">Expired</Badge>
          : <Time iso={i.expires_at} />}
      </td>
      <td>
        <div className="people-actions">
          <button
            type="button"
            aria-label={`Resend the invitation to ${i.email}`}
            aria-describedby={describedBy}
            aria-disabled={resend.isPending || undefined}
            onClick={() => resend.mutate()}
          >
            {resend.isPending ? "Sending…" : "Resend"}
          </button>
          <button
            type="button"
            className="danger"
            aria-label={`Withdraw the invitation to ${i.email}`}
            onClick={() => onWithdraw(i)}
          >
            Withdraw
          </button>
          {wait && <p id={`${id}-wait`} className="help">{wait}</p>}
          {error && <p id={`${id}-err`} className="field-error" role="alert">{error}</p>}
        </div>
      </td>
    </tr>
  );
}
