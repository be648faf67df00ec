// Revealing an endpoint's signing secret: for administrators who signed in within the last 10 minutes
// (the settings page asks for the password again and signs in anew with Supabase Auth), written to the
// organization's audit log. The SQL function decides everything (private.webhook_reveal_secret, granted
// to config_api only, so the Data API cannot reach it); API keys are refused before it.
// @see docs/settings-ui.md#revealing-a-signing-secret
import { z } from "zod";
import { AppError, forbidden } from "../../_shared/errors.ts";
import { asCaller, organizationSuspended } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";

const Revealed = z.object({
  secret: z.string().describe("The endpoint's current signing secret"),
  revealed_at: z.string().describe("When it was revealed; the organization's audit log has the entry"),
}).openapi({
  example: {
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6Bj3Gq0+SbU=",
    revealed_at: "2026-12-01T10:00:00.000Z",
  },
});

/** The function's refusals as API errors. */
function revealError(err: unknown): unknown {
  const e = err as { code?: string; hint?: string; message?: string };
  if (e?.code === "42501" && e.hint === "reauthentication_required") {
    return new AppError(403, "reauthentication_required", e.message ?? "Sign in again to reveal a secret");
  }
  if (e?.code === "42501") {
    return forbidden("admin_required", "Only administrators of the organization can reveal a signing secret");
  }
  return fromSqlError(err);
}

export const secretRevealRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "post",
      path: "/endpoints/:id/reveal-secret",
      summary: "Reveal an endpoint's signing secret",
      description: "For an administrator of the endpoint's organization whose session signed in within the " +
        "last 10 minutes (the settings page asks for the password again); each reveal is written to the " +
        "organization's audit log (`endpoint.secret_revealed`). No body. API keys, staff and other " +
        "organizations are refused; a session signed in longer ago gets 403 `reauthentication_required`.",
      tag: "Endpoints",
      access: "user",
      refusal: "API keys cannot reveal a signing secret; an administrator can, in the settings area",
      // No body: the path and the caller's session say everything.
      params: { id: z.uuid().openapi({ example: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" }) },
      responses: {
        200: { description: "The secret; an audit entry records who revealed it and when", schema: Revealed },
        403: {
          description: "`admin_required` (staff, or not a member of the endpoint's organization), or " +
            "`reauthentication_required` (the session's sign-in is more than 10 minutes old: sign in again), " +
            "or `organization_suspended` (suspended by the platform's administrators)",
        },
        404: { description: "No such endpoint in the caller's organization" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const secret = await asCaller(deps, c, async (tx, { suspended }) => {
        if (suspended) throw organizationSuspended();
        try {
          const [r] = await tx<
            { secret: string }[]
          >`select private.webhook_reveal_secret(${endpointId}) as secret`;
          return r!.secret;
        } catch (err) {
          throw revealError(err);
        }
      });
      return c.json({ secret, revealed_at: new Date().toISOString() });
    },
  ),
];
