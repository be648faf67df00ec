// Settings > People: the members of the organization with their role, when they joined and when they
// last signed in; an admin changes a member's role or removes them. Through the SQL functions of
// 20261128130000_people.sql, which check again that the caller is an admin now with a live session;
// the last admin stays. Inviting, resending and withdrawing are invitations (routes/invitations.ts).
// @see docs/authentication.md#settings--people
import { z } from "@hono/zod-openapi";
import { AppError, notFound } from "../../_shared/errors.ts";
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
const ChangeRole = z.object({ role: Role.describe("The member's new role") }).strict()
  .openapi({ example: { role: "admin" } });

const LAST_ADMIN =
  "The last admin of an organization cannot be removed or stop being admin; make another member admin first";

/** What the people functions raise, as API errors; `field` names what the last-admin refusal is about. */
function peopleError(err: unknown, field: string): unknown {
  const code = (err as { code?: string } | null)?.code;
  if (code === "P0002") return notFound("not_found", "No such member in this organization");
  if (code === "55000") {
    return new AppError(409, "last_admin", LAST_ADMIN, { fields: [{ field, message: LAST_ADMIN }] });
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
      method: "patch",
      path: "/people/:id",
      summary: "Change a member's role (admins)",
      description: "It applies from their next request. The last admin of the organization stays admin.",
      ...access,
      params: id,
      body: ChangeRole,
      responses: {
        200: { description: "The member with their new role", schema: Person },
        404: { description: "No such member in this organization" },
        409: {
          description: "`last_admin`: they are the organization's only admin (`details.fields` names `role`)",
        },
      },
    },
    async (c) => {
      const memberId = c.req.valid("param").id;
      const { role } = c.req.valid("json");
      const row = await asAdmin(deps, c, async (tx) => {
        try {
          // Read first: an admin who makes themselves staff may no longer read it afterwards.
          const before = await person(tx, memberId);
          await tx`select private.set_member_role(${memberId}, ${role})`;
          return { ...before, role };
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
      description: "They lose access at their next request, and the API keys they made end. The last " +
        "admin cannot be removed.",
      ...access,
      params: id,
      responses: {
        200: { description: "The member as they were before removal", schema: Person },
        404: { description: "No such member in this organization" },
        409: {
          description: "`last_admin`: they are the organization's only admin (`details.fields` names `id`)",
        },
      },
    },
    async (c) => {
      const memberId = c.req.valid("param").id;
      const row = await asAdmin(deps, c, async (tx) => {
        try {
          const before = await person(tx, memberId);
          await tx`select private.remove_member(${memberId})`;
          return before;
        } catch (err) {
          throw peopleError(err, "id");
        }
      });
      return c.json({ ...row, you: row.user_id === userOf(c).userId });
    },
  ),
];
