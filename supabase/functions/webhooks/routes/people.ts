// Settings > People: the members of the organization with their role, when they joined and when they
// last signed in; an admin changes a member's role or removes them. Through the SQL functions of
// 20261128130000_people.sql, which check again that the caller is an admin now with a live session;
// the last admin stays. Inviting, resending and withdrawing are invitations (routes/invitations.ts).
// @see docs/authentication.md#settings--people
import { z } from "@hono/zod-openapi";
import { AppError, badRequest, notFound } from "../../_shared/errors.ts";
import type { Tx } from "../../_shared/db.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory, userOf } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";

/** The most people one listing returns; `has_more` says there are more. */
export const PEOPLE_LIMIT = 1000;

const Role = z.enum(["admin", "staff"]);

const EXAMPLE = {
  id: "3f9c2d1e-8b7a-4c6d-9e0f-1a2b3c4d5e6f",
  user_id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  email: "grace@firstchurch.example",
  display_name: null,
  role: "staff" as const,
  joined_at: "2026-11-02T09:30:00.000Z",
  last_sign_in_at: "2026-11-27T18:04:12.000Z",
  you: false,
};

const Person = z.object({
  id: z.uuid().describe("The membership's id (one person has one per organization)"),
  user_id: z.uuid(),
  email: z.string().nullable(),
  display_name: z.string().nullable(),
  role: Role,
  joined_at: z.string().describe("When they joined this organization"),
  last_sign_in_at: z.string().nullable().describe(
    "Their last sign-in to the service (any organization); null: never",
  ),
  you: z.boolean().describe("This is the caller"),
}).openapi({ example: EXAMPLE });
type PersonRow = Omit<z.infer<typeof Person>, "you">;

const People = z.object({
  data: z.array(Person),
  has_more: z.boolean().describe(
    `More than ${PEOPLE_LIMIT} people: only the first ${PEOPLE_LIMIT} are listed`,
  ),
}).openapi({
  example: {
    data: [{
      ...EXAMPLE,
      id: "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
      user_id: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
      email: "ruth@firstchurch.example",
      display_name: "Ruth",
      role: "admin",
      joined_at: "2026-09-14T10:00:00.000Z",
      last_sign_in_at: "2026-11-28T07:41:09.000Z",
      you: true,
    }, EXAMPLE],
    has_more: false,
  },
});
const KEEP_ENDPOINTS = "true: the webhook endpoints they made (themselves or with an API key of theirs) " +
  "stay enabled; false (the default): they are disabled, saying why and who. Not for yourself.";
const ChangeRole = z.object({
  role: Role.describe("The member's new role"),
  keep_endpoints: z.boolean().optional().describe(`When they stop being admin: ${KEEP_ENDPOINTS}`),
}).strict()
  .openapi({ example: { role: "admin" } });
const Removal = z.object({
  keep_endpoints: z.boolean().optional().describe(KEEP_ENDPOINTS),
}).strict().openapi({ example: { keep_endpoints: false } });
const Changed = Person.extend({
  endpoints_disabled: z.number().int().describe("How many of their webhook endpoints this disabled"),
}).openapi({ example: { ...EXAMPLE, endpoints_disabled: 0 } });

const MadeEndpoint = z.object({
  id: z.uuid(),
  url: z.string(),
  description: z.string().nullable(),
  created_at: z.string(),
  api_key_name: z.string().nullable().describe("Made through this API key of theirs; null: by them"),
});
const MadeEndpoints = z.object({ data: z.array(MadeEndpoint) }).openapi({
  example: {
    data: [{
      id: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
      url: "https://crm.firstchurch.example/hooks",
      description: "Church CRM",
      created_at: "2026-11-20T10:00:00.000Z",
      api_key_name: null,
    }],
  },
});

const LAST_ADMIN =
  "The last admin of an organization cannot be removed or stop being admin; make another member admin first";

/** What the people functions raise, as API errors; `field` names what the last-admin refusal is about. */
function peopleError(err: unknown, field: string): unknown {
  const code = (err as { code?: string } | null)?.code;
  if (code === "P0002") return notFound("not_found", "No such member in this organization");
  if (code === "55000") {
    return new AppError(409, "last_admin", LAST_ADMIN, { fields: [{ field, message: LAST_ADMIN }] });
  }
  const e = err as { hint?: string; message?: string };
  if (code === "22023" && e.hint === "keep_endpoints") {
    return badRequest("invalid_request", "Invalid body: keep_endpoints", {
      fields: [{ field: "keep_endpoints", message: e.message ?? "cannot keep your own endpoints" }],
    });
  }
  return fromSqlError(err);
}

async function person(tx: Tx, id: string): Promise<PersonRow> {
  const [row] = await tx<PersonRow[]>`select * from private.organization_person(${id})`;
  return row!;
}

const id = { id: z.uuid() };
const access = { tag: "People", access: "user", refusal: "API keys cannot manage people" } as const;

export const peopleRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/people",
      summary: "List the organization's members (admins)",
      description:
        `With their role, when they joined and when they last signed in, admins first; at most ${PEOPLE_LIMIT}.`,
      ...access,
      responses: {
        200: {
          description: "Members",
          schema: People,
        },
      },
    },
    async (c) => {
      const me = userOf(c).userId;
      const rows = await asAdmin(deps, c, async (tx) => {
        try {
          return await tx<PersonRow[]>`select * from private.organization_people(${PEOPLE_LIMIT + 1})`;
        } catch (err) {
          throw peopleError(err, "id");
        }
      });
      return c.json({
        data: rows.slice(0, PEOPLE_LIMIT).map((p) => ({ ...p, you: p.user_id === me })),
        has_more: rows.length > PEOPLE_LIMIT,
      });
    },
  ),
  route(
    {
      method: "get",
      path: "/people/:id/endpoints",
      summary: "The webhook endpoints a member made (admins)",
      description: "The enabled endpoints that removing them, or their demotion from admin, would disable: " +
        "those they made themselves and those made with an API key of theirs.",
      ...access,
      params: id,
      responses: {
        200: { description: "Their enabled endpoints, oldest first", schema: MadeEndpoints },
        404: { description: "No such member in this organization" },
      },
    },
    async (c) => {
      const memberId = c.req.valid("param").id;
      const data = await asAdmin(deps, c, async (tx) => {
        try {
          return await tx<z.infer<typeof MadeEndpoint>[]>`
            select id, url, description, created_at, api_key_name from private.member_endpoints(${memberId})`;
        } catch (err) {
          throw peopleError(err, "id");
        }
      });
      return c.json({ data });
    },
  ),
  route(
    {
      method: "patch",
      path: "/people/:id",
      summary: "Change a member's role (admins)",
      description: "It applies from their next request. The last admin of the organization stays admin. " +
        "A demotion from admin ends the API keys and invitations they made and disables their webhook " +
        "endpoints, unless `keep_endpoints` is true.",
      ...access,
      params: id,
      body: ChangeRole,
      bodyExample: { role: "staff", keep_endpoints: false },
      responses: {
        200: { description: "The member with their new role", schema: Changed },
        404: { description: "No such member in this organization" },
        409: {
          description: "`last_admin`: they are the organization's only admin (`details.fields` names `role`)",
        },
      },
    },
    async (c) => {
      const memberId = c.req.valid("param").id;
      const { role, keep_endpoints } = c.req.valid("json");
      const row = await asAdmin(deps, c, async (tx) => {
        try {
          // Read first: an admin who makes themselves staff may no longer read it afterwards.
          const before = await person(tx, memberId);
          const [{ n }] = await tx<[{ n: number }]>`
            select private.set_member_role(${memberId}, ${role}, ${keep_endpoints ?? false}) as n`;
          return { ...before, role, endpoints_disabled: n };
        } catch (err) {
          throw peopleError(err, "role");
        }
      });
      return c.json({ ...row, you: row.user_id === userOf(c).userId });
    },
  ),
  route(
    {
      method: "delete",
      path: "/people/:id",
      summary: "Remove a member from the organization (admins)",
      description: "They lose access at their next request; the API keys and invitations they made end, " +
        "and the webhook endpoints they made (themselves or with their API keys) are disabled, saying why " +
        "and who, unless the body says `keep_endpoints: true` (the body is optional). The last admin " +
        "cannot be removed.",
      ...access,
      params: id,
      body: Removal,
      bodyOptional: true,
      bodyExample: { keep_endpoints: false },
      responses: {
        200: { description: "The member as they were before removal", schema: Changed },
        404: { description: "No such member in this organization" },
        409: {
          description: "`last_admin`: they are the organization's only admin (`details.fields` names `id`)",
        },
      },
    },
    async (c) => {
      const memberId = c.req.valid("param").id;
      const { keep_endpoints } = c.req.valid("json");
      const row = await asAdmin(deps, c, async (tx) => {
        try {
          const before = await person(tx, memberId);
          const [{ n }] = await tx<[{ n: number }]>`
            select private.remove_member(${memberId}, ${keep_endpoints ?? false}) as n`;
          return { ...before, endpoints_disabled: n };
        } catch (err) {
          throw peopleError(err, "id");
        }
      });
      return c.json({ ...row, you: row.user_id === userOf(c).userId });
    },
  ),
];
