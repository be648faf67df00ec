// The audit log's shape as the API returns it (the organization's own log and the platform console's),
// its filters, and its examples. What is recorded, by whom and when: 20261207170100_audit_log.sql.
// @see docs/audit-log.md
import { z } from "@hono/zod-openapi"; // (zod, with .openapi() for examples in the document)
import type { Tx } from "../_shared/db.ts";

export const AUDIT_ACTIONS = [
  "organization.created",
  "organization.updated",
  "organization.suspended",
  "organization.resumed",
  "log_retention.changed",
  "platform_admin.granted",
  "platform_admin.revoked",
  "superadmin.granted",
  "superadmin.revoked",
  "invitation.sent",
  "invitation.resent",
  "invitation.withdrawn",
  "invitation.accepted",
  "member.joined",
  "member.role_changed",
  "member.removed",
  "member.left",
  "member.erasure_requested",
  "endpoint.created",
  "endpoint.updated",
  "endpoint.enabled",
  "endpoint.disabled",
  "endpoint.deleted",
  "endpoint.secret_rotated",
  "endpoint.secret_revealed",
  "endpoint.recovered",
  "delivery.redelivered",
  "deliveries.retried",
  "api_key.created",
  "api_key.revoked",
  "connection.secret_set",
  "connection.secret_removed",
  "whatsapp_number.registered",
  "whatsapp_number.updated",
  "whatsapp_number.app_secret_replaced",
  "whatsapp_number.verify_token_replaced",
  "whatsapp_number.removed",
  "inbound.replayed",
  "inbound.replayed_failed",
] as const;

export const ACTOR_KINDS = [
  "admin",
  "staff",
  "person",
  "api_key",
  "platform_admin",
  "operator",
  "rule",
] as const;

const ORG_ID = "3f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b";
const BASE = {
  organization_id: ORG_ID,
  organization_name: "First Church",
  subject_email: null,
  reason: null,
  details: {},
  ip: "203.0.113.7",
  user_agent: "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15",
};
const ADMIN = {
  kind: "admin" as const,
  email: "pastor@firstchurch.example",
  user_id: "8c9d0e1f-2a3b-4c5d-8e6f-7a8b9c0d1e2f",
  api_key_id: null,
  label: null,
};

export const AUDIT_RESUMED_EXAMPLE = {
  ...BASE,
  id: "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
  action: "organization.resumed" as const,
  actor: {
    kind: "platform_admin" as const,
    email: "ops@platform.example",
    user_id: "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d",
    api_key_id: null,
    label: null,
  },
  target: { type: "organization", id: ORG_ID },
  reason: "Invoice paid",
  before: null,
  after: null,
  details: { suspended_seconds: 86400, deliveries_released: 12 },
  created_at: "2026-11-29T10:00:00.000Z",
};
export const AUDIT_SUSPENDED_EXAMPLE = {
  ...AUDIT_RESUMED_EXAMPLE,
  id: "9a8b7c6d-5e4f-4321-8fed-cba987654321",
  action: "organization.suspended" as const,
  reason: "Unpaid invoice since October; contact billing@platform.example",
  details: { deliveries_open: 12 },
  created_at: "2026-11-28T10:00:00.000Z",
};
/** An organization's own administrator revealed a signing secret (never recorded: the secret). */
export const AUDIT_REVEALED_EXAMPLE = {
  ...BASE,
  id: "5d6e7f80-9a1b-4c2d-8e3f-405162738495",
  action: "endpoint.secret_revealed" as const,
  actor: ADMIN,
  target: { type: "endpoint", id: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" },
  before: null,
  after: null,
  details: {
    endpoint_id: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
    url: "https://crm.firstchurch.example/hooks",
  },
  created_at: "2026-11-30T09:15:00.000Z",
};
/** An endpoint changed by an administrator: the changed fields only. */
export const AUDIT_UPDATED_EXAMPLE = {
  ...BASE,
  id: "7e8f9a0b-1c2d-4e3f-9a4b-5c6d7e8f9a0b",
  action: "endpoint.updated" as const,
  actor: ADMIN,
  target: { type: "endpoint", id: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" },
  before: { events: ["donation.created"], description: null },
  after: { events: ["donation.created", "donation.refunded"], description: "Finance CRM" },
  created_at: "2026-12-01T14:02:11.000Z",
};
/** Disabled by a rule of the service, not a person. */
export const AUDIT_DISABLED_EXAMPLE = {
  ...BASE,
  id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
  action: "endpoint.disabled" as const,
  actor: {
    kind: "rule" as const,
    email: null,
    user_id: null,
    api_key_id: null,
    label: "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-27T10:15:30Z",
  },
  target: { type: "endpoint", id: "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" },
  before: { enabled: true, disabled_reason: null },
  after: {
    enabled: false,
    disabled_reason:
      "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-27T10:15:30Z",
  },
  ip: null,
  user_agent: null,
  created_at: "2026-12-02T10:16:00.000Z",
};
/** An automation platform's API key made an endpoint (a subscription). */
export const AUDIT_KEY_EXAMPLE = {
  ...BASE,
  id: "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a",
  action: "endpoint.created" as const,
  actor: {
    kind: "api_key" as const,
    email: null,
    user_id: null,
    api_key_id: "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b",
    label: "Zapier",
  },
  target: { type: "endpoint", id: "5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7b8c" },
  before: null,
  after: {
    url: "https://hooks.zapier.example/hooks/catch/1/abc",
    events: ["member.created"],
    enabled: true,
    description: "Zapier",
    disabled_reason: null,
    rate_limit_per_second: null,
  },
  ip: "198.51.100.23",
  user_agent: "Zapier",
  created_at: "2026-12-03T08:00:00.000Z",
};

const Json = z.record(z.string(), z.unknown());

export const AuditEntry = z.object({
  id: z.uuid(),
  organization_id: z.uuid().nullable().describe(
    "The organization affected (null: a change of platform administrators)",
  ),
  organization_name: z.string().nullable(),
  action: z.enum(AUDIT_ACTIONS),
  actor: z.object({
    kind: z.enum(ACTOR_KINDS).describe(
      "admin or staff of the organization (their role then); person: signed in but not a member (accepting " +
        "an invitation, leaving); api_key; platform_admin; operator: someone with database access, through " +
        "the documented command; rule: the service itself (label says which rule, e.g. an endpoint " +
        "disabled after 5 days of failures)",
    ),
    email: z.string().nullable().describe("The person's e-mail address as it was then"),
    user_id: z.uuid().nullable(),
    api_key_id: z.uuid().nullable(),
    label: z.string().nullable().describe("The API key's name, the rule, or the operator's database role"),
  }),
  target: z.object({
    type: z.string().nullable().describe(
      "endpoint, invitation, membership, api_key, connection (id: the provider), whatsapp_number, delivery, " +
        "inbound_log, member, organization or person",
    ),
    id: z.string().nullable(),
  }),
  subject_email: z.string().nullable().describe(
    "Whom it concerned: the member, the invitee, or whose platform rights changed",
  ),
  reason: z.string().nullable(),
  before: Json.nullable().describe("The changed fields before (never a secret, token, key or header value)"),
  after: Json.nullable().describe("The changed fields after"),
  details: Json.describe(
    "Counts at the time: deliveries_open on suspension; suspended_seconds and deliveries_released on " +
      "resumption; the endpoint on a reveal",
  ),
  ip: z.string().nullable().describe("The client's address, as the platform's gateway reported it"),
  user_agent: z.string().nullable(),
  created_at: z.string(),
}).openapi("AuditEntry", { example: AUDIT_UPDATED_EXAMPLE });

export const AuditPage = z.object({
  data: z.array(AuditEntry),
  next_cursor: z.string().nullable().describe("Pass as cursor for the next page"),
});

const Instant = z.iso.datetime({ offset: true });

export const ListAudit = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional().describe("next_cursor of the previous page"),
}).openapi({ example: { limit: 50 } });

/** The organization's own log: by actor, action and period. */
export const ListOrganizationAudit = ListAudit.extend({
  actor: z.string().trim().min(1).max(320).optional().describe(
    "Whose actions: an e-mail address (case-insensitive), or a person's or API key's id",
  ),
  actor_kind: z.enum(ACTOR_KINDS).optional().describe("Only actors of this kind (e.g. api_key, rule)"),
  action: z.enum(AUDIT_ACTIONS).optional(),
  from: Instant.optional().describe("From this time on (inclusive), ISO 8601 with offset"),
  to: Instant.optional().describe("Before this time (exclusive)"),
}).openapi({
  example: {
    actor: "pastor@firstchurch.example",
    action: "endpoint.updated",
    from: "2026-12-01T00:00:00Z",
    limit: 50,
  },
});

/**
 * The audit log's columns as the API returns them (and the keyset's text for the cursor), from rows
 * that have an organization_name (private.platform_audit_entries, or the organization's own log).
 */
export const AUDIT_COLUMNS = `id, organization_id, organization_name, action,
  jsonb_build_object('kind', actor_kind, 'email', actor_email, 'user_id', actor_user_id,
                     'api_key_id', actor_api_key_id, 'label', actor_label) as actor,
  jsonb_build_object('type', target_type, 'id', target_id) as target,
  subject_email, reason, before, after, details, ip, user_agent, created_at, created_at::text as cursor_at`;

/**
 * Records an operation that changes no settings row (a recovery, a replay, a redelivery) in the caller's
 * transaction, so the entry commits with the operation or not at all. Settings rows record themselves
 * (row triggers). Who and from where come from the request, not from here.
 */
export async function recordAudit(
  tx: Tx,
  organizationId: string,
  action: (typeof AUDIT_ACTIONS)[number],
  target: { type: string; id: string },
  change: { before?: Record<string, unknown> | null; after?: Record<string, unknown> | null },
): Promise<void> {
  await tx`select private.audit(${organizationId}::uuid, ${action}, ${target.type}, ${target.id},
                                ${change.before ? tx.json(change.before as never) : null}::jsonb,
                                ${change.after ? tx.json(change.after as never) : null}::jsonb)`;
}
