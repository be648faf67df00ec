// Organizations a church makes and runs itself: a signed-in person creates one and becomes its admin
// (five a day), its admins change its name, time zone and contact address. Through the SQL functions of
// 20261128120000_organizations.sql, run as the caller, which check who may; the table checks the values
// again, so the Data API and this API hold the same rule. @see docs/authentication.md#organizations
import { z } from "@hono/zod-openapi";
import { AppError, badRequest, forbidden } from "../../_shared/errors.ts";
import type { Tx } from "../../_shared/db.ts";
import { asCaller, organizationSuspended } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";
import {
  MAX_NAME_LENGTH,
  NAME_RULE,
  normalizeOrganizationName,
  organizationNameProblem,
} from "../organization_name.ts";

const TIME_ZONE_RULE = "must be a time zone name such as Europe/London or America/Sao_Paulo";

// Normalized first (what is stored), then checked, so the error names what is left to fix.
const Name = z.string().overwrite(normalizeOrganizationName)
  .superRefine((name, ctx) => {
    const problem = organizationNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({ example: "Grace Chapel", description: NAME_RULE, minLength: 1, maxLength: MAX_NAME_LENGTH });
const TimeZone = z.string().min(1, TIME_ZONE_RULE).max(64, TIME_ZONE_RULE)
  .regex(/^[A-Za-z][A-Za-z0-9_+\-/]*$/, TIME_ZONE_RULE)
  .openapi({ example: "Europe/London", description: "An IANA time zone name" });
const ContactEmail = z.email().max(320).transform((e) => e.toLowerCase())
  .openapi({ example: "office@gracechapel.example", description: "Where people may write about the church" });

const Organization = z.object({
  id: z.uuid(),
  name: z.string(),
  time_zone: z.string(),
  contact_email: z.string().nullable(),
  created_at: z.string(),
  role: z.enum(["admin", "staff"]).describe("The caller's role in it"),
}).openapi({
  example: {
    id: "8f0c7c1e-3b5a-4d6e-9f10-2a3b4c5d6e7f",
    name: "Grace Chapel",
    time_zone: "Europe/London",
    contact_email: "office@gracechapel.example",
    created_at: "2026-11-28T12:00:00.000Z",
    role: "admin",
  },
});

const CreateOrganization = z.object({
  name: Name,
  time_zone: TimeZone.default("UTC"),
  contact_email: ContactEmail.optional(),
}).strict().openapi({
  example: { name: "Grace Chapel", time_zone: "Europe/London", contact_email: "office@gracechapel.example" },
});

const UpdateOrganization = z.object({
  name: Name.optional(),
  time_zone: TimeZone.optional(),
  contact_email: ContactEmail.nullable().optional().describe("null removes the contact address"),
}).strict()
  .refine((b) => Object.keys(b).length > 0, {
    message: "give at least one of name, time_zone, contact_email",
  })
  .openapi({ example: { name: "Grace Chapel Leeds", time_zone: "Europe/London" } });

const fieldError = (field: string, message: string, code = "invalid_request") =>
  badRequest(code, `Invalid body: ${field}`, { fields: [{ field, message }] });

/** What the organization functions raise, as API errors at the field they concern. */
function organizationError(err: unknown): unknown {
  const e = err as {
    code?: string;
    hint?: string;
    detail?: string;
    column_name?: string;
    constraint_name?: string;
  };
  if (e?.code === "23505" && e.hint === "duplicate_name") {
    return new AppError(409, "duplicate_name", "You already belong to an organization with this name", {
      fields: [{
        field: "name",
        message: "is the name of another organization you belong to; choose another",
      }],
    });
  }
  if (e?.code === "54000" && e.hint === "too_many_organizations") {
    return new AppError(
      429,
      "too_many_organizations",
      `You can create 5 organizations in 24 hours; try again after ${e.detail}`,
      { retry_at: e.detail },
    );
  }
  if (e?.code === "23514") {
    const column = e.column_name ?? e.constraint_name?.replace(/^organizations_|_check$/g, "");
    if (column === "name") return fieldError("name", NAME_RULE);
    if (column === "time_zone") return fieldError("time_zone", TIME_ZONE_RULE);
    if (column === "contact_email") return fieldError("contact_email", "must be an e-mail address");
  }
  if (e?.code === "42501") {
    return forbidden("admin_required", "Only administrators of the organization can do this");
  }
  return fromSqlError(err);
}

async function caughtAs<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw organizationError(err);
  }
}

/** The active organization with the caller's role there, or undefined. */
async function activeOrganization(tx: Tx) {
  const [row] = await tx<z.infer<typeof Organization>[]>`
    select o.id, o.name, o.time_zone, o.contact_email, o.created_at, p.role
    from public.organizations o join public.profiles p on p.organization_id = o.id and p.user_id = auth.uid()
    where o.id = private.active_organization_id()`;
  return row;
}

const noOrganization = () =>
  forbidden("no_active_organization", "Your token names no organization you belong to; pick one and refresh");

/** The active organization, or the refusal that says why there is none (suspended, or none named). */
async function activeOrRefused(tx: Tx, suspended: boolean) {
  const org = await activeOrganization(tx);
  if (org) return org;
  throw suspended ? organizationSuspended() : noOrganization();
}

export const organizationRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "post",
      path: "/organizations",
      summary: "Create an organization; the caller becomes its admin",
      description: "Anyone signed in, at most 5 in 24 hours.",
      tag: "Organizations",
      access: "user",
      refusal: "API keys belong to an organization; sign in as a person to create one",
      body: CreateOrganization,
      responses: {
        201: {
          description: "The new organization. Your active organization does not change: switch to it with " +
            "POST /me/active-organization, then refresh the session.",
          schema: Organization,
        },
        409: { description: "`duplicate_name`: you already belong to an organization with this name" },
        429: {
          description: "`too_many_organizations`: 5 created in 24 hours; `Retry-After` says when to try",
        },
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      try {
        const created = await caughtAs(() =>
          asCaller(deps, c, async (tx) => {
            const [r] = await tx<{ organization: z.infer<typeof Organization> }[]>`
              select private.create_organization(${input.name}, ${input.time_zone}, ${
              input.contact_email ?? null
            }) as organization`;
            return r!.organization;
          })
        );
        return c.json(created, 201);
      } catch (err) {
        if (err instanceof AppError && err.code === "too_many_organizations") {
          const at = Date.parse(String(err.details?.retry_at ?? ""));
          const seconds = Number.isNaN(at) ? 3600 : Math.max(1, Math.ceil((at - Date.now()) / 1000));
          c.header("Retry-After", String(seconds));
        }
        throw err;
      }
    },
  ),
  route(
    {
      method: "get",
      path: "/organization",
      summary: "The active organization",
      description: "Its name, time zone and contact address, and your role there.",
      tag: "Organizations",
      access: "user",
      refusal: "Sign in as a person",
      responses: {
        200: { description: "The organization your token names", schema: Organization },
        403: {
          description: "`no_active_organization`: the token names none you belong to; " +
            "`organization_suspended`: it is suspended by the platform's administrators",
        },
      },
    },
    async (c) => {
      return c.json(await asCaller(deps, c, (tx, { suspended }) => activeOrRefused(tx, suspended)));
    },
  ),
  route(
    {
      method: "patch",
      path: "/organization",
      summary: "Change the active organization (admins)",
      description: "Any of its name, time zone and contact address.",
      tag: "Organizations",
      access: "user",
      refusal: "API keys cannot change the organization; sign in as an administrator",
      body: UpdateOrganization,
      responses: {
        200: { description: "The organization as it is now", schema: Organization },
        403: {
          description: "`admin_required`: only its administrators can change it; `organization_suspended`: " +
            "it is suspended by the platform's administrators",
        },
        409: { description: "`duplicate_name`: another organization you belong to has this name" },
      },
    },
    async (c) => {
      const patch = c.req.valid("json");
      const org = await caughtAs(() =>
        asCaller(deps, c, async (tx, { suspended }) => {
          await activeOrRefused(tx, suspended);
          await tx`select private.update_organization(${patch as unknown as string}::jsonb)`;
          return await activeOrganization(tx);
        })
      );
      return c.json(org!);
    },
  ),
];
