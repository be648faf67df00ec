// The organization's audit log, for its admins: every change its admins, staff, API keys, the platform's
// administrators and the service's own rules made to its settings and people, newest first, filtered by
// actor, action and period, a page at a time (keyset on created_at, id).
// @see docs/audit-log.md
import { badRequest } from "../../_shared/errors.ts";
import { asAdmin } from "../actor.ts";
import {
  AUDIT_COLUMNS,
  AUDIT_DISABLED_EXAMPLE,
  AUDIT_KEY_EXAMPLE,
  AUDIT_REVEALED_EXAMPLE,
  AUDIT_UPDATED_EXAMPLE,
  AuditPage,
  ListOrganizationAudit,
} from "../audit.ts";
import { decodeCursor, pageOf } from "../cursor.ts";
import { route, type RouteFactory } from "../route.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const auditLogRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/audit-log",
      summary: "The organization's audit log (admins)",
      description: "Who changed what in this organization's settings and people, when and from where: " +
        "invitations, memberships, endpoints, secrets (rotated, revealed; never their values), API keys, " +
        "connections, WhatsApp numbers, recoveries, replays, redeliveries, erasures, settings, and the " +
        "platform's suspensions. Each entry has the changed fields before and after. Newest first; kept a " +
        "year. Filter by actor, actor_kind, action and period (from, to).",
      tag: "Audit log",
      // Not API keys: the log shows who did what and from where, not for whoever holds a leaked key.
      // Staff and removed members are refused by asAdmin.
      access: "user",
      refusal: "API keys cannot read the audit log",
      query: ListOrganizationAudit,
      responses: {
        200: {
          description: "A page of audit entries",
          schema: AuditPage,
          example: {
            data: [AUDIT_KEY_EXAMPLE, AUDIT_DISABLED_EXAMPLE, AUDIT_UPDATED_EXAMPLE, AUDIT_REVEALED_EXAMPLE],
            next_cursor: null,
          },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      if (q.from && q.to && Date.parse(q.from) >= Date.parse(q.to)) {
        throw badRequest("invalid_period", "from must be before to", {
          fields: [{ field: "from", message: "must be before to" }],
        });
      }
      const cursor = q.cursor ? decodeCursor(q.cursor) : null;
      // Row-level security keeps this to the organization the caller administers. Only the filters given
      // are in the query, so each is planned on its own index that leads with the organization
      // (20261207170100_audit_log.sql) and a page reads only matching entries.
      const rows = await asAdmin(deps, c, (tx, { organizationId }) => {
        const params: unknown[] = [organizationId];
        const where = ["a.organization_id = $1"];
        const add = (sql: (n: string) => string, value: unknown) => {
          params.push(value);
          where.push(sql(`$${params.length}`));
        };
        if (cursor) {
          params.push(cursor[0], cursor[1]);
          where.push(
            `(a.created_at, a.id) < ($${params.length - 1}::text::timestamptz, $${params.length}::uuid)`,
          );
        }
        if (q.action) add((p) => `a.action = ${p}`, q.action);
        if (q.actor_kind) add((p) => `a.actor_kind = ${p}`, q.actor_kind);
        if (q.actor && UUID.test(q.actor)) {
          add((p) => `coalesce(a.actor_user_id, a.actor_api_key_id) = ${p}::uuid`, q.actor);
        } else if (q.actor) {
          add((p) => `lower(coalesce(a.actor_email, a.actor_label)) = lower(${p})`, q.actor);
        }
        if (q.from) add((p) => `a.created_at >= ${p}::timestamptz`, q.from);
        if (q.to) add((p) => `a.created_at < ${p}::timestamptz`, q.to);
        params.push(q.limit + 1);
        return tx.unsafe<{ id: string; cursor_at: string }[]>(
          `select ${AUDIT_COLUMNS}
           from (select a.*, o.name as organization_name
                 from public.audit_log a join public.organizations o on o.id = a.organization_id
                 where ${where.join(" and ")}
                 order by a.created_at desc, a.id desc limit $${params.length}) a
           order by created_at desc, id desc`,
          params as never[],
        );
      });
      return c.json(pageOf(rows, q.limit));
    },
  ),
];
