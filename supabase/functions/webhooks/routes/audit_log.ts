// The organization's audit log: what the platform's administrators did to it (suspended, resumed), with
// their reasons and who, and which of its own admins revealed a signing secret, newest first, for the
// organization's admins.
// @see docs/configuration-api.md#platform-console (the audit log's shape) and
// docs/platform-console.md
import { asAdmin } from "../actor.ts";
import { decodeCursor, pageOf } from "../cursor.ts";
import { route, type RouteFactory } from "../route.ts";
import {
  AUDIT_COLUMNS,
  AUDIT_RESUMED_EXAMPLE,
  AUDIT_REVEALED_EXAMPLE,
  AUDIT_SUSPENDED_EXAMPLE,
  AuditPage,
  ListAudit,
} from "./platform.ts";

export const auditLogRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/audit-log",
      summary: "The organization's audit log (admins)",
      description: "What the platform's administrators did to this organization (suspended, resumed), " +
        "with their reasons, newest first.",
      tag: "Audit log",
      access: "user",
      refusal: "API keys cannot read the audit log",
      query: ListAudit,
      responses: {
        200: {
          description: "A page of audit entries",
          schema: AuditPage,
          example: {
            data: [AUDIT_REVEALED_EXAMPLE, AUDIT_RESUMED_EXAMPLE, AUDIT_SUSPENDED_EXAMPLE],
            next_cursor: null,
          },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const cursor = q.cursor ? decodeCursor(q.cursor) : null;
      // Row-level security keeps this to the organization the caller administers.
      const rows = await asAdmin(deps, c, (tx) =>
        tx.unsafe<{ id: string; cursor_at: string }[]>(
          `select ${AUDIT_COLUMNS}
           from (select a.*, o.name as organization_name
                 from public.platform_audit_log a join public.organizations o on o.id = a.organization_id) a
           where ($1::text is null or (created_at, id) < ($1::text::timestamptz, $2::uuid))
           order by created_at desc, id desc limit $3`,
          [cursor?.[0] ?? null, cursor?.[1] ?? null, q.limit + 1],
        ));
      return c.json(pageOf(rows, q.limit));
    },
  ),
];
