// The invitation a link's token names, asked without signing in (POST /invitations/preview), and the
// sentence that says it: who invited, to which church, as what, and the address it was sent to. Shown
// once, above the sign-up or sign-in form or above Join.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import type { paths } from "../../api/schema.d.ts";
import { formatTime } from "../../format.ts";

export type Preview =
  paths["/webhooks/invitations/preview"]["post"]["responses"][200]["content"]["application/json"];

export const ACCEPT_INVITATION_PATH = "/invitations/accept";

const GONE = "This invitation link no longer works: it has expired, been withdrawn or already been used. " +
  "Ask an administrator of the organization to invite you again.";

/** The token of the link (#token=…): kept from the first render, as the address bar may change. */
export function useInvitationToken(): string {
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get("token") ?? "");
  return token;
}

export function useInvitationPreview(token: string, enabled = true) {
  return useQuery({
    enabled,
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
}

const roleWords = (role: Preview["role"]) => role === "admin" ? "an administrator" : "staff";

/** "Ruth Okafor invited you to join Hope Church as staff. It was sent to …, and works until …." */
export function InvitationSummary({ invitation }: { invitation: Preview }) {
  return (
    <div className="invitation-summary">
      <p>
        {invitation.invited_by ? <strong>{invitation.invited_by}</strong> : "An administrator"}{" "}
        invited you to join <strong>{invitation.organization_name}</strong> as {roleWords(invitation.role)}.
      </p>
      <p className="muted">
        It was sent to {invitation.email} and works until {formatTime(invitation.expires_at)}.
      </p>
    </div>
  );
}
