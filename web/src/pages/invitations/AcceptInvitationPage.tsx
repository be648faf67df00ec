// /invitations/accept#token=inv_…: where the link of an invitation e-mail leads. The token rides in the
// fragment, which browsers never send to the site's host (no access log, no Referer). Signed in, the
// invitee sees what the invitation is for and joins only when they say so; the token is what proves
// the invitation is theirs, whatever address their account has.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import type { paths } from "../../api/schema.d.ts";
import { errorText } from "../../api/queries.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { ORGANIZATION_PATH } from "../organization/paths.ts";
import { useSession } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { NewPasswordForm } from "./NewPasswordForm.tsx";

type Preview =
  paths["/webhooks/invitations/preview"]["post"]["responses"][200]["content"]["application/json"];

export const ACCEPT_INVITATION_PATH = "/invitations/accept";

const GONE = "This invitation link no longer works: it has expired, been withdrawn or already been used. " +
  "Ask an administrator of the organization to invite you again.";

export function AcceptInvitationPage() {
  const session = useSession();
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get("token") ?? "");
  // Once joined, the link is used up: the invitation is kept here and never asked for again (a switch
  // of organization clears the cache, and asking again answered 404).
  const [joined, setJoined] = useState(false);
  const kept = useRef<Preview | undefined>(undefined);
  const invitation = useQuery({
    enabled: !joined,
    queryKey: ["invitation", token],
    queryFn: async () => {
      // Refusals stay ApiErrors, which are not asked again: a used link said so only after two retries
      // (about 4.6 s of "Loading the invitation…"), and no retry can make it work.
      if (!token) {
        throw new ApiError(
          "This link carries no invitation. Open the link from the e-mail again.",
          400,
          "no_token",
        );
      }
      try {
        return await unwrap(api.POST("/webhooks/invitations/preview", { body: { token } }));
      } catch (e) {
        throw e instanceof ApiError && e.status === 404 ? new ApiError(GONE, 404, e.code) : e;
      }
    },
  });
  const accept = useMutation({
    mutationFn: async () => {
      await unwrap(api.POST("/webhooks/invitations/accept", { body: { token } }));
      kept.current = invitation.data;
      setJoined(true);
      // Used up: keep it out of the history.
      history.replaceState(null, "", ACCEPT_INVITATION_PATH);
      await session.reloadMe();
    },
  });
  // The account existed unconfirmed when invited: its password first (NewPasswordForm), then join.
  const renew = accept.error instanceof ApiError && accept.error.code === "new_password_required";
  const inv = invitation.data ?? kept.current;
  const me = session.state.kind === "signed_in" ? session.state.session.user.email : "";

  return (
    <main className="narrow" id="main">
      <h1>Invitation</h1>
      {accept.isSuccess && inv
        ? (
          <>
            <p role="status">You have joined {inv.organization_name}.</p>
            <button
              type="button"
              className="primary"
              onClick={async () => {
                await session.switchOrganization(inv.organization_id);
                // Staff land where they may look (the church's details), not on an administrators' page.
                navigate(inv.role === "admin" ? HOME : ORGANIZATION_PATH, { replace: true });
              }}
            >
              Open {inv.organization_name}
            </button>
          </>
        )
        : invitation.error
        ? <ErrorBox error={errorText(invitation.error)!} />
        : !inv
        ? <Loading what="the invitation" />
        : renew
        ? (
          <>
            <p>
              You are invited to join <strong>{inv.organization_name}</strong> as{" "}
              {inv.role === "admin" ? "an administrator" : "staff"}.
            </p>
            <NewPasswordForm done={() => accept.mutate()} />
          </>
        )
        : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              if (!accept.isPending) accept.mutate();
            }}
          >
            <p>
              You are invited to join <strong>{inv.organization_name}</strong> as{" "}
              {inv.role === "admin" ? "an administrator" : "staff"}.
            </p>
            <p className="muted">It was sent to {inv.email}; you are signed in as {me}.</p>
            <ActionResult action={accept} />
            <div className="actions">
              <button type="submit" className="primary" aria-disabled={accept.isPending || undefined}>
                {accept.isPending ? "Joining…" : `Join ${inv.organization_name}`}
              </button>
            </div>
          </form>
        )}
    </main>
  );
}
