// The signed-in person and their organizations, for the settings UI's organization switcher. Works the
// same against a hosted project (no PostgREST needed): list memberships, pick one, then refresh the
// session so the access-token hook puts the new organization_id into the token.
// @see docs/authentication.md#switching-organizations
import { z } from "zod";
import { forbidden } from "../../_shared/errors.ts";
import { asCaller, organizationSuspended } from "../actor.ts";
import { route, type RouteFactory, userOf } from "../route.ts";

const Membership = z.object({
  organization_id: z.uuid(),
  organization_name: z.string(),
  role: z.enum(["admin", "staff"]),
  suspended: z.boolean().describe(
    "Suspended by the platform's administrators: nobody acts for it, and it cannot be made active",
  ),
  suspension_reason: z.string().nullable().describe(
    "Why it is suspended, in the platform administrator's words: for its admins only (null for staff, " +
      "and when it is not suspended)",
  ),
});
const Me = z.object({
  user: z.object({ id: z.uuid(), email: z.string().nullable() }),
  active_organization_id: z.uuid().nullable()
    .describe(
      "The token's organization_id while the user is still a member there and it is not suspended, else null",
    ),
  memberships: z.array(Membership),
});
const SetActive = z.object({ organization_id: z.uuid() }).strict();
const Active = z.object({ active_organization_id: z.uuid() });

// The reference's examples (tests parse each with its schema).
const ORG = "0c0ffee0-1234-4abc-8def-0123456789ab";
const OTHER_ORG = "8f0c7c1e-3b5a-4d6e-9f10-2a3b4c5d6e7f";

export const meRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/me",
      summary: "The signed-in user and their memberships",
      description: "Who is signed in, their active organization, and every organization they belong to " +
        "with their role there.",
      tag: "Me",
      access: "user",
      refusal: "API keys have no memberships; sign in as a person",
      responses: {
        200: {
          description: "Who is signed in, and where",
          schema: Me,
          example: {
            user: { id: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a", email: "ruth@firstchurch.example" },
            active_organization_id: ORG,
            memberships: [
              {
                organization_id: ORG,
                organization_name: "First Church",
                role: "admin",
                suspended: false,
                suspension_reason: null,
              },
              {
                organization_id: OTHER_ORG,
                organization_name: "Grace Chapel",
                role: "staff",
                suspended: false,
                suspension_reason: null,
              },
            ],
          },
        },
      },
    },
    async (c) => {
      const { claims, userId } = userOf(c);
      // As the user: row-level security shows their own memberships and the organizations they are in.
      const memberships = await asCaller(
        deps,
        c,
        (tx) =>
          tx<z.infer<typeof Membership>[]>`
          select p.organization_id, o.name as organization_name, p.role,
                 private.membership_is_suspended(p.organization_id) as suspended,
                 private.membership_suspension_reason(p.organization_id) as suspension_reason
          from public.profiles p join public.organizations o on o.id = p.organization_id
          where p.user_id = ${userId}
          order by o.name, p.organization_id`,
      );
      const claimed = claims.organization_id ?? null;
      return c.json({
        user: { id: userId, email: claims.email ?? null },
        active_organization_id: memberships.some((m) => m.organization_id === claimed && !m.suspended)
          ? claimed
          : null,
        memberships,
      });
    },
  ),
  route(
    {
      method: "post",
      path: "/me/active-organization",
      summary: "Choose the active organization",
      description: "Then refresh the session (`supabase.auth.refreshSession()`): the new token carries it.",
      tag: "Me",
      access: "user",
      refusal: "API keys have no memberships; sign in as a person",
      body: SetActive,
      bodyExample: { organization_id: OTHER_ORG },
      responses: {
        200: {
          description: "Remembered; the next token refresh carries it",
          schema: Active,
          example: { active_organization_id: OTHER_ORG },
        },
        403: {
          description: "`not_a_member`: the user does not belong to that organization; " +
            "`organization_suspended`: it is suspended by the platform's administrators",
        },
      },
    },
    async (c) => {
      const { organization_id } = c.req.valid("json");
      try {
        await asCaller(deps, c, (tx) => tx`select public.set_active_organization(${organization_id})`);
      } catch (err) {
        if ((err as { code?: string }).code === "42501") {
          throw forbidden("not_a_member", "You are not a member of that organization");
        }
        if ((err as { hint?: string }).hint === "organization_suspended") throw organizationSuspended();
        throw err;
      }
      return c.json({ active_organization_id: organization_id });
    },
  ),
];
