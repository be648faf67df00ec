// The platform console, for the service's own staff (public.platform_user_flags): every organization
// with its health, suspend and resume, platform administrators (superadmins grant and revoke), and the
// audit log of all of it. Decided in SQL by the caller's live flags and live session, never by the
// token's is_platform_admin claim (20261128150000_platform_console.sql); nothing here returns a payload
// body, a secret or an organization's people.
// @see docs/configuration-api.md#platform-console and docs/platform-console.md
import { z } from "zod";
import { AppError, badRequest, forbidden, notFound } from "../../_shared/errors.ts";
import { setupWarnings } from "../../_shared/warnings.ts";
import type { Tx } from "../../_shared/db.ts";
import { asCaller } from "../actor.ts";
import {
  AUDIT_COLUMNS,
  AUDIT_RESUMED_EXAMPLE,
  AUDIT_SUSPENDED_EXAMPLE,
  AuditPage,
  ListAudit,
} from "../audit.ts";
import { decodeCursor, pageOf } from "../cursor.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";

const REFUSAL = "API keys cannot use the platform console; sign in as a platform administrator";
const ORG_ID = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";
const STAFF_EMAIL = "ops@platform.example";

const OneLine = (max: number) =>
  z.string().trim().min(1).max(max).refine((s) => !/\p{Cc}/u.test(s), "must be one line of text");

const Health = z.object({
  status: z.enum(["ok", "failing"]).describe(
    "failing: an endpoint's last attempt failed, deliveries are being retried, or an inbound payload " +
      "failed to apply in the last 24 hours",
  ),
  endpoints: z.number().int().describe("Enabled endpoints"),
  endpoints_failing: z.number().int().describe("Enabled endpoints whose last attempt failed"),
  deliveries_open: z.number().int().describe(
    "Deliveries not yet delivered or failed for good, counted up to 1,000 (as are inbound_failed_24h and inbound_waiting)",
  ),
  deliveries_failing: z.number().int().describe(
    "Of the open deliveries counted, those being retried after a failed attempt",
  ),
  inbound_failed_24h: z.number().int().describe("Inbound payloads that failed to apply in the last 24 hours"),
  inbound_refused_24h: z.number().int().describe(
    "Inbound requests refused for a wrong or missing signature, 24 hours",
  ),
  inbound_waiting: z.number().int().describe(
    "Inbound payloads logged but not applied yet (those held while the organization is suspended)",
  ),
  last_activity_at: z.string().nullable().describe(
    "The latest event, inbound payload, delivery attempt or new member",
  ),
});

const PLATFORM_ORGANIZATION_EXAMPLE = {
  id: ORG_ID,
  name: "First Church",
  created_at: "2026-11-01T09:00:00.000Z",
  people: 4,
  status: "suspended" as const,
  suspension: {
    suspended_at: "2026-11-28T10:00:00.000Z",
    reason: "Unpaid invoice",
    suspended_by: STAFF_EMAIL,
  },
  health: {
    status: "ok" as const,
    endpoints: 2,
    endpoints_failing: 0,
    deliveries_open: 12,
    deliveries_failing: 0,
    inbound_failed_24h: 0,
    inbound_refused_24h: 0,
    inbound_waiting: 3,
    last_activity_at: "2026-11-28T09:58:12.000Z",
  },
};

const PlatformOrganization = z.object({
  id: z.uuid(),
  name: z.string(),
  created_at: z.string(),
  people: z.number().int().describe("Members of staff (profiles) of the organization"),
  status: z.enum(["active", "suspended"]),
  suspension: z.object({
    suspended_at: z.string(),
    reason: z.string(),
    suspended_by: z.string().nullable().describe("E-mail of the platform administrator who suspended it"),
  }).nullable(),
  health: Health,
}).openapi("PlatformOrganization", { example: PLATFORM_ORGANIZATION_EXAMPLE });
type PlatformOrganizationOut = z.infer<typeof PlatformOrganization>;

const ListOrganizations = z.object({
  q: z.string().trim().min(1).max(200).optional().describe("Part of the organization's name"),
  suspended: z.enum(["true", "false"]).optional().describe("true: only suspended organizations"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(600).optional().describe("next_cursor of the previous page"),
}).openapi({ example: { q: "church", suspended: "true", limit: 50 } });

const OrganizationPage = z.object({
  data: z.array(PlatformOrganization),
  next_cursor: z.string().nullable().describe("Pass as cursor for the next page"),
  totals: z.object({ organizations: z.number().int(), suspended: z.number().int() }),
}).openapi({
  example: {
    data: [PLATFORM_ORGANIZATION_EXAMPLE],
    next_cursor: null,
    totals: { organizations: 120, suspended: 1 },
  },
});

const Suspend = z.object({
  reason: OneLine(500).describe("Why, in words the organization's admins will read in their audit log"),
}).strict().openapi({
  example: { reason: "Unpaid invoice since October; contact billing@platform.example" },
});
const Resume = z.object({
  reason: OneLine(500).optional().describe("A note for the organization's audit log"),
}).strict().openapi({ example: { reason: "Invoice paid" } });

const PlatformMe = z.object({
  is_platform_admin: z.boolean(),
  is_superadmin: z.boolean().describe("May grant and revoke platform admin"),
  warnings: z.array(z.object({
    code: z.enum(["auth_mail_not_configured"]),
    message: z.string(),
  })).describe(
    "What is wrong with the service's setup, for platform administrators: auth_mail_not_configured, a " +
      "hosted project whose Supabase Auth has no SMTP server of the service's (no church's confirmation " +
      "mail arrives). Empty for others.",
  ),
}).openapi({ example: { is_platform_admin: true, is_superadmin: false, warnings: [] } });

const ADMIN_EXAMPLE = {
  user_id: "8d0f1e2a-3b4c-4d5e-9f60-718293a4b5c6",
  email: STAFF_EMAIL,
  is_superadmin: false,
  since: "2026-11-20T08:00:00.000Z",
  last_sign_in_at: "2026-11-28T07:30:00.000Z",
};
const PlatformAdmin = z.object({
  user_id: z.uuid(),
  email: z.string().nullable(),
  is_superadmin: z.boolean().describe("Superadmins are made and unmade by an operator (docs/operations.md)"),
  since: z.string(),
  last_sign_in_at: z.string().nullable(),
}).openapi("PlatformAdmin", { example: ADMIN_EXAMPLE });
const GrantAdmin = z.object({ email: z.email().max(320).describe("The e-mail of the person's account") })
  .strict()
  .openapi({ example: { email: STAFF_EMAIL } });

const ListPlatformAudit = ListAudit.extend({
  organization_id: z.uuid().optional().describe("Only this organization's entries"),
}).openapi({ example: { organization_id: ORG_ID, limit: 50 } });

const id = { id: z.uuid() };
const userId = { user_id: z.uuid() };

/** The SQL functions' refusals and conflicts as API errors. */
function platformError(err: unknown): unknown {
  const e = err as { code?: string; hint?: string; message?: string };
  if (e?.code === "42501" && e.hint === "superadmin_required") {
    return forbidden("superadmin_required", "Only superadmins can grant or revoke platform admin");
  }
  if (e?.code === "42501" && e.hint === "platform_admin_required") {
    return forbidden("platform_admin_required", "Only platform administrators can use the platform console");
  }
  if (e?.code === "P0002" && e.hint === "email") {
    return badRequest("unknown_account", "No account has that e-mail address", {
      fields: [{ field: "email", message: "no account has this e-mail address; the person signs up first" }],
    });
  }
  if (e?.code === "22023" && e.hint === "email") {
    return badRequest("ambiguous_account", "More than one account has that e-mail address", {
      fields: [{ field: "email", message: "more than one account has this e-mail address" }],
    });
  }
  if (e?.code === "55000" && e.hint) {
    return new AppError(409, e.hint, e.message ?? "Conflict");
  }
  return fromSqlError(err);
}

/** Runs `fn` as the caller (config_api, live session checked); the SQL decides the platform role. */
async function asPlatform<T>(
  deps: Parameters<RouteFactory>[0],
  c: Parameters<typeof asCaller>[1],
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  try {
    return await asCaller(deps, c, (tx) => fn(tx));
  } catch (err) {
    throw platformError(err);
  }
}

interface OrganizationRow {
  id: string;
  name: string;
  created_at: string;
  people: number;
  suspended_at: string | null;
  suspension_reason: string | null;
  suspended_by_email: string | null;
  endpoints: number;
  endpoints_failing: number;
  deliveries_open: number;
  deliveries_failing: number;
  inbound_failed_24h: number;
  inbound_refused_24h: number;
  inbound_waiting: number;
  last_activity_at: string | null;
}

function organizationOut(r: OrganizationRow): PlatformOrganizationOut {
  const failing = r.endpoints_failing > 0 || r.deliveries_failing > 0 || r.inbound_failed_24h > 0;
  return {
    id: r.id,
    name: r.name,
    created_at: r.created_at,
    people: r.people,
    status: r.suspended_at ? "suspended" : "active",
    suspension: r.suspended_at
      ? {
        suspended_at: r.suspended_at,
        reason: r.suspension_reason ?? "",
        suspended_by: r.suspended_by_email,
      }
      : null,
    health: {
      status: failing ? "failing" : "ok",
      endpoints: r.endpoints,
      endpoints_failing: r.endpoints_failing,
      deliveries_open: r.deliveries_open,
      deliveries_failing: r.deliveries_failing,
      inbound_failed_24h: r.inbound_failed_24h,
      inbound_refused_24h: r.inbound_refused_24h,
      inbound_waiting: r.inbound_waiting,
      last_activity_at: r.last_activity_at,
    },
  };
}

async function oneOrganization(tx: Tx, organizationId: string): Promise<PlatformOrganizationOut> {
  const [row] = await tx<OrganizationRow[]>`
    select * from private.platform_organizations(${organizationId}, null, false, null, null, 1)`;
  if (!row) throw notFound("not_found", "No such organization");
  return organizationOut(row);
}

// Organizations are paged by (name, id): the cursor is that pair, base64url JSON.
function encodeNameCursor(row: { name: string; id: string }): string {
  return new TextEncoder().encode(JSON.stringify([row.name, row.id]))
    .toBase64({ alphabet: "base64url", omitPadding: true });
}
function decodeNameCursor(cursor: string): [string, string] {
  try {
    const [name, at] = JSON.parse(
      new TextDecoder().decode(Uint8Array.fromBase64(cursor, { alphabet: "base64url" })),
    ) as unknown[];
    if (typeof name === "string" && name.length <= 200 && z.uuid().safeParse(at).success) {
      return [name, at as string];
    }
  } catch { /* fall through */ }
  throw badRequest("invalid_cursor", "cursor is not one this API returned", {
    fields: [{ field: "cursor", message: "invalid cursor" }],
  });
}

const forbiddenResponse = {
  description: "`platform_admin_required`: the caller is not a platform administrator (live flags)",
};

export const platformRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/platform/me",
      summary: "The caller's platform rights",
      description: "From the live flags: the token's claims are only a hint.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      responses: {
        200: { description: "What the caller may do in the platform console", schema: PlatformMe },
      },
    },
    async (c) => {
      const [row] = await asPlatform(deps, c, (tx) =>
        tx<{ role: string | null }[]>`
        select private.platform_role() as role`);
      return c.json({
        is_platform_admin: !!row?.role,
        is_superadmin: row?.role === "superadmin",
        warnings: row?.role ? setupWarnings(deps.config) : [],
      });
    },
  ),
  route(
    {
      method: "get",
      path: "/platform/organizations",
      summary: "Every organization with its health (platform admins)",
      description: "By name, filtered by part of the name or by suspension.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      query: ListOrganizations,
      responses: {
        200: { description: "A page of organizations", schema: OrganizationPage },
        403: forbiddenResponse,
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const [afterName, afterId] = q.cursor ? decodeNameCursor(q.cursor) : [null, null];
      const { rows, totals } = await asPlatform(deps, c, async (tx) => {
        const rows = await tx<OrganizationRow[]>`
          select * from private.platform_organizations(null, ${q.q ?? null}, ${q.suspended === "true"},
                                                       ${afterName}, ${afterId}::uuid, ${q.limit + 1})`;
        const [totals] = await tx<{ organizations: number; suspended: number }[]>`
          select * from private.platform_organization_totals()`;
        return { rows, totals: totals! };
      });
      const page = rows.slice(0, q.limit);
      return c.json({
        data: page.map(organizationOut),
        next_cursor: rows.length > q.limit ? encodeNameCursor(page.at(-1)!) : null,
        totals,
      });
    },
  ),
  route(
    {
      method: "get",
      path: "/platform/organizations/:id",
      summary: "One organization with its health (platform admins)",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      params: id,
      responses: {
        200: { description: "The organization", schema: PlatformOrganization },
        403: forbiddenResponse,
        404: { description: "No such organization" },
      },
    },
    async (c) => {
      const organizationId = c.req.valid("param").id;
      return c.json(await asPlatform(deps, c, (tx) => oneOrganization(tx, organizationId)));
    },
  ),
  route(
    {
      method: "post",
      path: "/platform/organizations/:id/suspend",
      summary: "Suspend an organization (platform admins)",
      description: "Its people and API keys can do nothing, inbound webhooks are answered 503 (and kept), " +
        "deliveries wait. Its admins read the reason in their audit log.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      params: id,
      body: Suspend,
      responses: {
        200: {
          description: "Suspended; the organization's admins see the reason in their audit log",
          schema: PlatformOrganization,
        },
        403: forbiddenResponse,
        404: { description: "No such organization" },
        409: { description: "`already_suspended`" },
      },
    },
    async (c) => {
      const organizationId = c.req.valid("param").id;
      const { reason } = c.req.valid("json");
      const out = await asPlatform(deps, c, async (tx) => {
        await tx`select private.platform_suspend_organization(${organizationId}, ${reason})`;
        return await oneOrganization(tx, organizationId);
      });
      return c.json(out);
    },
  ),
  route(
    {
      method: "post",
      path: "/platform/organizations/:id/resume",
      summary: "Resume a suspended organization (platform admins)",
      description: "What waited is delivered, with the suspended time given back to each delivery's " +
        "24-hour window.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      params: id,
      body: Resume,
      responses: {
        200: { description: "Resumed", schema: PlatformOrganization },
        403: forbiddenResponse,
        404: { description: "No such organization" },
        409: { description: "`not_suspended`" },
      },
    },
    async (c) => {
      const organizationId = c.req.valid("param").id;
      const { reason } = c.req.valid("json");
      const out = await asPlatform(deps, c, async (tx) => {
        await tx`select private.platform_resume_organization(${organizationId}, ${reason ?? null})`;
        return await oneOrganization(tx, organizationId);
      });
      return c.json(out);
    },
  ),
  route(
    {
      method: "get",
      path: "/platform/admins",
      summary: "The platform administrators (platform admins)",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      responses: {
        200: {
          description: "Superadmins first, then by e-mail",
          schema: z.object({ data: z.array(PlatformAdmin) }),
          example: {
            data: [
              {
                ...ADMIN_EXAMPLE,
                user_id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
                email: "founder@platform.example",
                is_superadmin: true,
                since: "2026-11-01T08:00:00.000Z",
              },
              ADMIN_EXAMPLE,
            ],
          },
        },
        403: forbiddenResponse,
      },
    },
    async (c) => {
      const data = await asPlatform(deps, c, (tx) => tx`select * from private.platform_admins()`);
      return c.json({ data });
    },
  ),
  route(
    {
      method: "post",
      path: "/platform/admins",
      summary: "Make an account a platform administrator (superadmins)",
      description: "The account with this e-mail address; effective at the person's next request.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      body: GrantAdmin,
      responses: {
        201: { description: "Granted; effective at the person's next request", schema: PlatformAdmin },
        403: { description: "`superadmin_required`" },
        409: { description: "`already_platform_admin`" },
      },
    },
    async (c) => {
      const { email } = c.req.valid("json");
      const admin = await asPlatform(deps, c, async (tx) => {
        const [g] = await tx<{ id: string }[]>`select private.platform_grant_admin(${email}) as id`;
        const [a] = await tx`select * from private.platform_admins() where user_id = ${g!.id}`;
        return a;
      });
      return c.json(admin, 201);
    },
  ),
  route(
    {
      method: "delete",
      path: "/platform/admins/:user_id",
      summary: "End a person's platform admin rights (superadmins)",
      description: "At their next request. Superadmins are changed by an operator only.",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      params: userId,
      responses: {
        200: {
          description: "Revoked",
          schema: z.object({ user_id: z.uuid(), revoked: z.literal(true) }).openapi({
            example: { user_id: "8d0f1e2a-3b4c-4d5e-9f60-718293a4b5c6", revoked: true },
          }),
        },
        403: { description: "`superadmin_required`" },
        404: { description: "That person is not a platform administrator" },
        409: { description: "`superadmin`: superadmins are changed by an operator" },
      },
    },
    async (c) => {
      const target = c.req.valid("param").user_id;
      await asPlatform(deps, c, (tx) => tx`select private.platform_revoke_admin(${target})`);
      return c.json({ user_id: target, revoked: true as const });
    },
  ),
  route(
    {
      method: "get",
      path: "/platform/audit-log",
      summary: "Every audit entry, newest first (platform admins)",
      tag: "Platform console",
      access: "user",
      refusal: REFUSAL,
      query: ListPlatformAudit,
      responses: {
        200: {
          description: "A page of audit entries",
          schema: AuditPage,
          example: {
            data: [AUDIT_RESUMED_EXAMPLE, AUDIT_SUSPENDED_EXAMPLE, {
              id: "1f2e3d4c-5b6a-4798-8a6b-5c4d3e2f1a0b",
              organization_id: null,
              organization_name: null,
              action: "platform_admin.granted",
              actor: {
                kind: "platform_admin",
                email: "founder@platform.example",
                user_id: "2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e",
                api_key_id: null,
                label: null,
              },
              target: { type: "person", id: "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d" },
              subject_email: STAFF_EMAIL,
              reason: null,
              before: null,
              after: null,
              details: {},
              ip: "192.0.2.10",
              user_agent: "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/133.0",
              created_at: "2026-11-20T08:00:00.000Z",
            }],
            next_cursor: null,
          },
        },
        403: forbiddenResponse,
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const cursor = q.cursor ? decodeCursor(q.cursor) : [null, null];
      const rows = await asPlatform(deps, c, (tx) =>
        tx.unsafe<{ id: string; cursor_at: string }[]>(
          `select ${AUDIT_COLUMNS}
           from private.platform_audit_entries($1::uuid, $2::text::timestamptz, $3::uuid, $4)`,
          [q.organization_id ?? null, cursor[0], cursor[1], q.limit + 1],
        ));
      return c.json(pageOf(rows, q.limit));
    },
  ),
];
