// What an invitation link is for, asked before anyone signs in: the invitation page names the church,
// who invited and the address it was sent to, and opens on Create account with that address. The token
// is the only key (a POST body, so it stays out of URLs and access logs); whoever holds it was sent it.
// Unknown, expired, withdrawn and used tokens answer one 404; a client that presented too many wrong
// tokens answers 429 to every token, a right one's too, until its window ends.
// @see docs/authentication.md#joining-and-leaving-invitations
import { z } from "@hono/zod-openapi";
import { AppError, notFound } from "../../_shared/errors.ts";
import { FailureCounter } from "../../_shared/failure_counter.ts";
import { withClaims } from "../../_shared/db.ts";
import { requestOrigin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";
import { InvitationToken, TOKEN } from "./invitations.ts";

/** Wrong tokens one client address may present per window (an invitee presents one, a few times). */
export const PREVIEW_FAILURES_PER_CLIENT = 10;
export const PREVIEW_WINDOW_MS = 10 * 60_000;

const InvitationPreview = z.object({
  organization_name: z.string(),
  invited_by: z.string().nullable().describe(
    "Who invited: their name in the organization, else their e-mail address",
  ),
  role: z.enum(["admin", "staff"]),
  email: z.string().describe("The address it was sent to"),
  expires_at: z.string(),
});

export const invitationPreviewRoutes: RouteFactory = (deps) => {
  // Per instance of the function, as the messaging handshake's limiter (_shared/failure_counter.ts).
  const failures = new FailureCounter(PREVIEW_FAILURES_PER_CLIENT, PREVIEW_WINDOW_MS);
  return [
    route(
      {
        method: "post",
        path: "/invitations/preview",
        summary: "What an invitation is for, given its token (no sign-in)",
        description: "The church, who invited, the role, the address it was sent to and the expiry; " +
          "nothing is accepted, and nothing says whether the address has an account. " +
          `${PREVIEW_FAILURES_PER_CLIENT} wrong tokens from one client address in 10 minutes, and ` +
          "every token from it answers 429 until then.",
        tag: "People",
        access: "public",
        body: InvitationToken,
        bodyExample: { token: TOKEN },
        responses: {
          200: {
            description: "The open invitation the token names",
            schema: InvitationPreview,
            example: {
              organization_name: "First Church",
              invited_by: "Pastor Ruth Okafor",
              role: "staff",
              email: "grace@firstchurch.example",
              expires_at: "2026-12-05T09:00:00.000Z",
            },
          },
          404: { description: "No such open invitation (unknown, expired, withdrawn or used: alike)" },
          429: {
            description: "Too many wrong tokens from this client address (`too_many_attempts`, Retry-After)",
          },
        },
      },
      async (c) => {
        const origin = requestOrigin(c);
        const client = origin["x-forwarded-for"] ?? "unknown";
        const wait = failures.blockedFor(client);
        if (wait > 0) {
          const seconds = Math.ceil(wait / 1000);
          throw new AppError(
            429,
            "too_many_attempts",
            "Too many invitation links that do not work were tried from here; try again later",
            { retry_after: seconds },
            { "retry-after": String(seconds) },
          );
        }
        const { token } = c.req.valid("json");
        let rows: z.infer<typeof InvitationPreview>[];
        try {
          rows = await withClaims(
            deps.userSql ?? deps.sql,
            { role: "anon" },
            (tx) =>
              tx<z.infer<typeof InvitationPreview>[]>`
                select organization_name, invited_by, role, email, expires_at
                from public.preview_invitation(${token})`,
            "config_api",
            origin,
          );
        } catch (err) {
          if ((err as { code?: string }).code !== "P0002") throw fromSqlError(err);
          rows = [];
        }
        const invitation = rows[0];
        if (!invitation) {
          failures.fail(client);
          throw notFound(
            "not_found",
            "This invitation link does not work: it is unknown, expired, withdrawn or already used",
          );
        }
        return c.json(invitation);
      },
    ),
  ];
};
