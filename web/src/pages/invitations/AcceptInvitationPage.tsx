// /invitations/accept#token=inv_…: where the link of an invitation e-mail leads. The token rides in the
// fragment, which browsers never send to the site's host (no access log, no Referer). Signed out, the
// invitee sees who invited them to which church above the sign-up form (AuthPage); signed in, the same
// sentence above Join, and they join only when they say so; the token is what proves the invitation is
// theirs, whatever address their account has.
import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { ORGANIZATION_PATH } from "../organization/paths.ts";
import { useSession } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { NewPasswordForm } from "./NewPasswordForm.tsx";
import {
  ACCEPT_INVITATION_PATH,
  InvitationSummary,
  type Preview,
  useInvitationPreview,
  useInvitationToken,
} from "./invitation.tsx";

export { ACCEPT_INVITATION_PATH };

export function AcceptInvitationPage() {
  const session = useSession();
  const token = useInvitationToken();
  // Once joined, the link is used up: the invitation is kept here and never asked for again (a switch
  // of organization clears the cache, and asking again answered 404).
  const [joined, setJoined] = useState<{ invitation: Preview; organizationId: string } | null>(null);
  const invitation = useInvitationPreview(token, !joined);
  const main = useRef<HTMLElement>(null);
  const done = useRef<HTMLParagraphElement>(null);
  // Arriving from the sign-in or sign-up form (which is gone now), keyboards start at this page.
  useEffect(() => {
    if (document.activeElement === document.body || !document.activeElement) main.current?.focus();
  }, []);
  const accept = useMutation({
    mutationFn: async () => {
      const membership = await unwrap(api.POST("/webhooks/invitations/accept", { body: { token } }));
      setJoined({ invitation: invitation.data!, organizationId: membership.organization_id });
      // Used up: keep it out of the history.
      history.replaceState(null, "", ACCEPT_INVITATION_PATH);
      await session.reloadMe();
    },
  });
  // The Join button is gone once joined: focus goes to what happened, not to <body>.
  useEffect(() => {
    if (joined) done.current?.focus();
  }, [joined]);
  // The account existed unconfirmed when invited: its password first (NewPasswordForm), then join.
  const renew = accept.error instanceof ApiError && accept.error.code === "new_password_required";
  const inv = invitation.data ?? joined?.invitation;
  const me = session.state.kind === "signed_in" ? session.state.session.user.email : "";

  return (
    <main className="narrow" id="main" ref={main} tabIndex={-1}>
      <h1>Invitation</h1>
      {joined
        ? (
          <>
            <p role="status" ref={done} tabIndex={-1}>
              You have joined {joined.invitation.organization_name}.
            </p>
            <button
              type="button"
              className="primary"
              onClick={async () => {
                await session.switchOrganization(joined.organizationId);
                // Staff land where they may look (the church's details), not on an administrators' page.
                navigate(joined.invitation.role === "admin" ? HOME : ORGANIZATION_PATH, { replace: true });
              }}
            >
              Open {joined.invitation.organization_name}
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
            <InvitationSummary invitation={inv} />
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
            <InvitationSummary invitation={inv} />
            <p className="muted">You are signed in as {me}.</p>
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
