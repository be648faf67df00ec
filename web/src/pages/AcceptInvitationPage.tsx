// /invitations/accept#token=inv_…: where the link of an invitation e-mail leads. The token rides in the
// fragment, which browsers never send to the site's host (no access log, no Referer). Signed in, the
// invitee sees what the invitation is for and joins only when they say so; the token is what proves
// the invitation is theirs, whatever address their account has.
import { useState } from "react";
import { api, ApiError, unwrap } from "../api/client.ts";
import { navigate } from "../router.tsx";
import { useSession } from "../session.tsx";
import { useAction, useLoad } from "../ui/hooks.ts";
import { ActionResult, ErrorBox, Loading } from "../ui/parts.tsx";

export const ACCEPT_INVITATION_PATH = "/invitations/accept";

const GONE = "This invitation link no longer works: it has expired, been withdrawn or already been used. " +
  "Ask an administrator of the organization to invite you again.";

export function AcceptInvitationPage() {
  const session = useSession();
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get("token") ?? "");
  const invitation = useLoad(async () => {
    if (!token) {
      throw new Error(
        "This link carries no invitation. Open the link from the e-mail again.",
      );
    }
    try {
      return await unwrap(
        api.POST("/webhooks/invitations/preview", { body: { token } }),
      );
    } catch (e) {
      throw e instanceof ApiError && e.status === 404 ? new Error(GONE) : e;
    }
  }, [token]);
  const accept = useAction();
  const [joined, setJoined] = useState<{ id: string; name: string } | null>(
    null,
  );
  const inv = invitation.data;
  const me = session.state.kind === "signed_in" ? session.state.session.user.email : "";

  return (
    <main className="narrow" id="main">
      <h1>Invitation</h1>
      {joined
        ? (
          <>
            <p role="status">You have joined {joined.name}.</p>
            <button
              type="button"
              className="primary"
              onClick={async () => {
                await session.switchOrganization(joined.id);
                navigate("/", { replace: true });
              }}
            >
              Open {joined.name}
            </button>
          </>
        )
        : invitation.error
        ? <ErrorBox error={invitation.error} />
        : !inv
        ? <Loading what="the invitation" />
        : (
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              const ok = await accept.run(async () => {
                await unwrap(
                  api.POST("/webhooks/invitations/accept", { body: { token } }),
                );
              });
              if (!ok) return;
              // Used up: keep it out of the history.
              history.replaceState(null, "", ACCEPT_INVITATION_PATH);
              await session.reloadMe();
              setJoined({
                id: inv.organization_id,
                name: inv.organization_name,
              });
            }}
          >
            <p>
              You are invited to join <strong>{inv.organization_name}</strong> as{" "}
              {inv.role === "admin" ? "an administrator" : "staff"}.
            </p>
            <p className="muted">
              It was sent to {inv.email}; you are signed in as {me}.
            </p>
            <ActionResult action={accept} />
            <div className="actions">
              <button
                type="submit"
                className="primary"
                disabled={accept.pending}
              >
                {accept.pending ? "Joining…" : `Join ${inv.organization_name}`}
              </button>
            </div>
          </form>
        )}
    </main>
  );
}
