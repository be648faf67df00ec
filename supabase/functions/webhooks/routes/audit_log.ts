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
      const actorId = q.actor && UUID.test(q.actor) ? q.actor : null;
      // Row-level security keeps this to the organization the caller administers; each filter has an
      // index that leads with the organization (20261207170100_audit_log.sql).
      const rows = await asAdmin(
        deps,
        c,
        (tx, { organizationId }) =>
          tx.unsafe<{ id: string; cursor_at: string }[]>(
            `select ${AUDIT_COLUMNS}
           from (select a.*, o.name as organization_name
                 from public.audit_log a join public.organizations o on o.id = a.organization_id
                 where a.organization_id = $4
                   and ($1::text is null or (a.created_at, a.id) < ($1::text::timestamptz, $2::uuid))
                   and ($5::text is null or a.action = $5)
                   and ($6::text is null or a.actor_kind = $6)
                   and ($7::uuid is null or a.actor_user_id = $7 or a.actor_api_key_id = $7)
                   and ($8::text is null or lower(a.actor_email) = lower($8) or a.actor_label = $8)
                   and ($9::timestamptz is null or a.created_at >= $9)
                   and ($10::timestamptz is null or a.created_at < $10)
                 order by a.created_at desc, a.id desc limit $3) a
           order by created_at desc, id desc`,
            [
              cursor?.[0] ?? null,
              cursor?.[1] ?? null,
              q.limit + 1,
              organizationId,
              q.action ?? null,
              q.actor_kind ?? null,
              actorId,
              q.actor && !actorId ? q.actor : null,
              q.from ?? null,
              q.to ?? null,
            ],
          ),
      );
      return c.json(pageOf(rows, q.limit));
    },
  ),
];
