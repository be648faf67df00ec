// Settings > Integrations > Webhooks: endpoints, their secrets, test events and recovery.
// @see docs/outbound-webhooks.md#operations-redeliver-recover-test-rotate
import { z } from "zod";
import type { Tx } from "../../_shared/db.ts";
import { badRequest, notFound } from "../../_shared/errors.ts";
import { checkTargetUrl } from "../../_shared/webhook_targets.ts";
import type { Config } from "../../_shared/config.ts";
import { recordAudit } from "../audit.ts";
import { asAdmin } from "../actor.ts";
import { windowStart } from "../activity.ts";
import { route, type RouteFactory } from "../route.ts";
import { setCustomHeaders } from "../custom_headers.ts";
import {
  CreateEndpoint,
  Endpoint,
  type EndpointHealth,
  type EndpointRow,
  EndpointWithHealth,
  EndpointWithSecret,
  Recover,
  RecoverPreview,
  RecoverPreviewQuery,
  RecoverResult,
  RotateSecret,
  SendTest,
  UpdateEndpoint,
} from "../schemas.ts";
import { mapSqlErrors } from "../sql_errors.ts";

const id = { id: z.uuid() };
// A preview counts at most this many (a recovery itself has no cap).
const PREVIEW_CAP = 100_000;

// The reference's examples (tests parse each with its schema).
const ENDPOINT_EXAMPLE = {
  id: "2b7e4c1a-9d3f-4e58-8a61-0c5d7f9e1b23",
  url: "https://crm.gracechapel.example/hooks/church",
  events: ["member.created", "donation.recorded"],
  description: "Church CRM",
  enabled: true,
  disabled_reason: null,
  disabled_at: null,
  previous_secret_expires_at: null,
  rate_limit_per_second: 20,
  paused_until: null,
  custom_headers: [{ name: "Authorization", value_hint: "…9f2c" }],
  created_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
  created_by_display: "Ruth Okafor",
  created_at: "2026-11-20T10:15:00.000Z",
  updated_at: "2026-11-20T10:15:00.000Z",
};
const HEALTH_EXAMPLE = {
  last_attempt_at: "2026-11-28T09:58:12.000Z",
  last_response_status: 200,
  last_outcome: "delivered",
  consecutive_failures: 0,
  success_rate_24h: 0.9934,
  attempts_24h: 152,
  failing_since: null,
  mean_response_ms_24h: 184,
};
const SECRET_EXAMPLE = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** Refuses URLs the dispatcher would refuse (non-https in production, private or metadata addresses). */
export async function assertSafeTarget(config: Config, url: string): Promise<void> {
  const verdict = await checkTargetUrl(url, { allowPrivate: config.allowPrivateTargets });
  if (!verdict.ok) {
    throw badRequest("invalid_url", `Webhook URL refused: ${verdict.reason}`, {
      fields: [{ field: "url", message: verdict.reason }],
    });
  }
}

// (The signing secret is not among them: no user role can read it back. The API returns a secret only
// when it makes one, from the value it wrote.)
export const ENDPOINT_COLUMNS = `id, url, events, description, enabled, disabled_reason, disabled_at,
  previous_secret_expires_at, rate_limit_per_second,
  case when paused_until > now() then paused_until end as paused_until, custom_headers, created_by,
  private.creator_display(organization_id, created_by, created_by_api_key_id) as created_by_display,
  created_at, updated_at`;

// Health comes from the summary tables the attempts trigger keeps (migration ..._webhook_endpoint_health):
// one primary-key row per endpoint and its 10-minute buckets of the last 24 hours, the same 24 hours as the
// activity view's (the current hour and the 23 before it), so a page showing both says the same numbers.
const HEALTH_SELECT = `
  select e.id,
         h.last_attempt_at, h.last_response_status, h.last_outcome,
         coalesce(h.consecutive_failures, 0) as consecutive_failures, h.failing_since,
         coalesce(w.attempts, 0) as attempts_24h, w.delivered as delivered_24h,
         round(w.duration_ms_sum::numeric / nullif(w.timed, 0))::int as mean_response_ms_24h
  from public.webhook_endpoints e
  left join public.webhook_endpoint_health h on h.endpoint_id = e.id
  left join lateral (
    select sum(b.attempts)::int as attempts, sum(b.delivered)::int as delivered,
           sum(b.timed)::int as timed, sum(b.duration_ms_sum) as duration_ms_sum
    from public.webhook_endpoint_health_buckets b
    where b.endpoint_id = e.id and b.bucket_start >= $2::timestamptz
  ) w on true
  where e.id = any ($1::uuid[])`;

/** Adds `health` to each endpoint row. */
export async function withHealth<T extends { id: string }>(
  tx: Tx,
  rows: T[],
): Promise<(T & { health: EndpointHealth })[]> {
  if (rows.length === 0) return [];
  const found = await tx.unsafe<
    {
      id: string;
      last_attempt_at: string | null;
      last_response_status: number | null;
      last_outcome: "delivered" | "failed" | null;
      consecutive_failures: number;
      attempts_24h: number;
      delivered_24h: number | null;
      failing_since: string | null;
      mean_response_ms_24h: number | null;
    }[]
  >(HEALTH_SELECT, [rows.map((r) => r.id), new Date(windowStart("24h", Date.now())).toISOString()]);
  const byId = new Map(found.map((h) => [h.id, h]));
  return rows.map((row) => {
    const h = byId.get(row.id);
    const attempts = h?.attempts_24h ?? 0;
    return {
      ...row,
      health: {
        last_attempt_at: h?.last_attempt_at ?? null,
        last_response_status: h?.last_response_status ?? null,
        last_outcome: h?.last_outcome ?? null,
        consecutive_failures: h?.consecutive_failures ?? 0,
        success_rate_24h: attempts > 0
          ? Math.round(((h?.delivered_24h ?? 0) / attempts) * 10000) / 10000
          : null,
        attempts_24h: attempts,
        failing_since: h?.failing_since ?? null,
        mean_response_ms_24h: h?.mean_response_ms_24h ?? null,
      },
    };
  });
}

export async function visibleEndpoint(tx: Tx, endpointId: string): Promise<EndpointRow> {
  const [row] = await tx.unsafe<EndpointRow[]>(
    `select ${ENDPOINT_COLUMNS} from public.webhook_endpoints where id = $1`,
    [endpointId],
  );
  if (!row) throw notFound("not_found", "No such endpoint");
  return row;
}

export async function createEndpoint(
  tx: Tx,
  organizationId: string,
  input: {
    url: string;
    events: string[];
    description?: string | null;
    secret?: string;
    enabled?: boolean;
    rate_limit_per_second?: number | null;
    custom_headers?: { name: string; value: string }[];
  },
): Promise<EndpointRow & { secret: string }> {
  // The secret is write-only: the one returned is the one this statement chose and wrote.
  const [row] = await tx.unsafe<(EndpointRow & { secret: string })[]>(
    `with chosen as (select coalesce($5, private.webhook_new_secret()) as secret),
     made as (
       insert into public.webhook_endpoints (organization_id, url, events, description, secret, enabled,
                                             rate_limit_per_second)
       select $1, $2, $3, $4, chosen.secret, coalesce($6, true), $7 from chosen
       returning ${ENDPOINT_COLUMNS})
     select made.*, chosen.secret from made, chosen`,
    [
      organizationId,
      input.url,
      input.events,
      input.description ?? null,
      input.secret ?? null,
      input.enabled ?? null,
      input.rate_limit_per_second ?? null,
    ],
  );
  if (input.custom_headers?.length) {
    row!.custom_headers = await setCustomHeaders(tx, row!.id, input.custom_headers);
  }
  return row!;
}

/** Deletes a visible endpoint (a subscription is one too) with its history, or 404. */
export async function deleteEndpoint(tx: Tx, endpointId: string, what: string): Promise<void> {
  const gone = await tx`delete from public.webhook_endpoints where id = ${endpointId} returning id`;
  if (gone.length === 0) throw notFound("not_found", `No such ${what}`);
}

export const endpointRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/endpoints",
      summary: "List the organization's webhook endpoints",
      description: "Newest first, each with its health. Secrets are never listed.",
      tag: "Endpoints",
      access: "admin",
      responses: {
        200: {
          description: "Endpoints, newest first, each with its health",
          example: {
            data: [{ ...ENDPOINT_EXAMPLE, health: HEALTH_EXAMPLE }, {
              ...ENDPOINT_EXAMPLE,
              id: "6a0f3d2c-1b4e-4f7a-9c8d-5e6f7a8b9c0d",
              url: "https://hooks.zapier.example/hooks/catch/1234567/abcdef/",
              events: ["attendance.marked"],
              description: null,
              enabled: false,
              disabled_reason:
                "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-17T10:15:30Z",
              disabled_at: "2026-11-22T10:16:02.000Z",
              rate_limit_per_second: null,
              custom_headers: [],
              created_by: null,
              created_by_display: "API key Zapier",
              updated_at: "2026-11-22T10:16:02.000Z",
              health: {
                ...HEALTH_EXAMPLE,
                last_attempt_at: "2026-11-22T10:16:01.000Z",
                last_response_status: 404,
                last_outcome: "failed",
                consecutive_failures: 212,
                success_rate_24h: null,
                attempts_24h: 0,
                failing_since: "2026-11-17T10:15:30.000Z",
                mean_response_ms_24h: null,
              },
            }],
            target_policy: "public_https",
          },
          schema: z.object({
            data: z.array(EndpointWithHealth),
            target_policy: z.enum(["public_https", "development"]).describe(
              "Which URLs this deployment accepts: public_https (https, public addresses only), or " +
                "development (a local stack that also allows http and private addresses)",
            ),
          }),
        },
      },
    },
    async (c) => {
      const data = await asAdmin(deps, c, async (tx) =>
        withHealth(
          tx,
          await tx.unsafe<EndpointRow[]>(
            `select ${ENDPOINT_COLUMNS} from public.webhook_endpoints order by created_at desc, id desc`,
          ),
        ));
      return c.json({
        data,
        target_policy: deps.config.allowPrivateTargets ? "development" : "public_https",
      });
    },
  ),
  route(
    {
      method: "post",
      path: "/endpoints",
      summary: "Add an endpoint: a URL and the events it receives",
      description: "The response carries the signing secret: the only time it is shown, until a rotation.",
      tag: "Endpoints",
      access: "admin",
      body: CreateEndpoint,
      bodyExample: {
        url: ENDPOINT_EXAMPLE.url,
        events: ENDPOINT_EXAMPLE.events,
        description: ENDPOINT_EXAMPLE.description,
        rate_limit_per_second: 20,
        custom_headers: [{ name: "Authorization", value: "Bearer n8n-3c51d7e0a4b89f2c" }],
      },
      responses: {
        201: {
          description: "The endpoint, with its signing secret",
          schema: EndpointWithSecret,
          example: { ...ENDPOINT_EXAMPLE, secret: SECRET_EXAMPLE },
        },
        409: { description: "too_many_endpoints: the organization has 100 endpoints, the most it can have" },
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      await assertSafeTarget(deps.config, input.url);
      const row = await asAdmin(
        deps,
        c,
        (tx, { organizationId }) => mapSqlErrors(() => createEndpoint(tx, organizationId, input)),
      );
      return c.json(row, 201);
    },
  ),
  route(
    {
      method: "get",
      path: "/endpoints/:id",
      summary: "Read one endpoint",
      tag: "Endpoints",
      access: "admin",
      params: id,
      responses: {
        200: {
          description: "The endpoint, with its health",
          schema: EndpointWithHealth,
          example: { ...ENDPOINT_EXAMPLE, health: HEALTH_EXAMPLE },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const [row] = await asAdmin(
        deps,
        c,
        async (tx) => withHealth(tx, [await visibleEndpoint(tx, endpointId)]),
      );
      return c.json(row);
    },
  ),
  route(
    {
      method: "patch",
      path: "/endpoints/:id",
      summary: "Change, enable or disable an endpoint",
      description: "Give any of its URL, events, description, rate limit, `enabled` and custom headers; " +
        "the rest stays. `custom_headers` replaces the set: an entry without `value` keeps its stored value.",
      tag: "Endpoints",
      access: "admin",
      params: id,
      body: UpdateEndpoint,
      bodyExample: {
        events: ["member.created", "member.lost", "donation.recorded"],
        rate_limit_per_second: null,
        custom_headers: [{ name: "Authorization" }, { name: "X-Tenant", value: "grace-chapel" }],
      },
      responses: {
        200: {
          description: "The endpoint",
          schema: Endpoint,
          example: {
            ...ENDPOINT_EXAMPLE,
            events: ["member.created", "member.lost", "donation.recorded"],
            rate_limit_per_second: null,
            custom_headers: [{ name: "Authorization", value_hint: "…9f2c" }, {
              name: "X-Tenant",
              value_hint: "…apel",
            }],
            updated_at: "2026-11-28T10:02:45.000Z",
          },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const input = c.req.valid("json");
      if (input.url !== undefined) await assertSafeTarget(deps.config, input.url);
      const row = await asAdmin(deps, c, async (tx) => {
        const current = await visibleEndpoint(tx, endpointId);
        if (input.custom_headers !== undefined) await setCustomHeaders(tx, endpointId, input.custom_headers);
        const [r] = await mapSqlErrors(() =>
          tx.unsafe<EndpointRow[]>(
            `update public.webhook_endpoints
                set url = $2, events = $3, description = $4, enabled = $5, rate_limit_per_second = $6
              where id = $1
              returning ${ENDPOINT_COLUMNS}`,
            [
              endpointId,
              input.url ?? current.url,
              input.events ?? current.events,
              input.description === undefined ? current.description : input.description,
              input.enabled ?? current.enabled,
              input.rate_limit_per_second === undefined
                ? current.rate_limit_per_second
                : input.rate_limit_per_second,
            ],
          )
        );
        return r!;
      });
      return c.json(row);
    },
  ),
  route(
    {
      method: "delete",
      path: "/endpoints/:id",
      summary: "Delete an endpoint and its delivery history",
      tag: "Endpoints",
      access: "admin",
      params: id,
      responses: { 204: { description: "Deleted" }, 404: { description: "No such endpoint" } },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      await asAdmin(deps, c, (tx) => deleteEndpoint(tx, endpointId, "endpoint"));
      return c.body(null, 204);
    },
  ),
  route(
    {
      method: "post",
      path: "/endpoints/:id/rotate-secret",
      summary: "Replace an endpoint's signing secret",
      description: "The old secret keeps signing too (a second signature in `webhook-signature`) during a " +
        "grace period, so receivers can switch without losing a delivery.",
      tag: "Endpoints",
      access: "admin",
      params: id,
      body: RotateSecret,
      bodyExample: { grace_seconds: 86400 },
      responses: {
        200: {
          description: "The new secret",
          schema: z.object({ secret: z.string(), previous_secret_expires_at: z.string().nullable() }),
          example: {
            secret: "whsec_Q2xrYjV0N2pGdXBxWjRkTmM4c0t3aEV5",
            previous_secret_expires_at: "2026-11-29T10:05:00.000Z",
          },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const input = c.req.valid("json");
      const grace = `${input.grace_seconds ?? 86400} seconds`;
      const result = await asAdmin(deps, c, async (tx) => {
        await visibleEndpoint(tx, endpointId);
        const [rotated] = await mapSqlErrors(() =>
          tx<
            { secret: string }[]
          >`select public.webhook_rotate_secret(${endpointId}, ${grace}::interval, ${
            input.secret ?? null
          }) as secret`
        );
        // A separate statement: the rotation's own update is invisible to the statement that made it.
        const [r] = await tx<{ previous_secret_expires_at: Date | null }[]>`
          select previous_secret_expires_at from public.webhook_endpoints where id = ${endpointId}`;
        return { secret: rotated!.secret, previous_secret_expires_at: r!.previous_secret_expires_at };
      });
      return c.json(result);
    },
  ),
  route(
    {
      method: "post",
      path: "/endpoints/:id/test",
      summary: "Send a test event to this endpoint",
      description: "`webhook.test`, or any event type of the catalogue with its example body.",
      tag: "Endpoints",
      access: "admin",
      params: id,
      body: SendTest,
      bodyExample: { event_type: "donation.recorded" },
      responses: {
        202: {
          description: "Queued; the delivery appears in the logs",
          schema: z.object({ event_id: z.uuid() }),
          example: { event_id: "9e8d7c6b-5a49-4837-a261-5f4e3d2c1b0a" },
        },
        404: { description: "No such endpoint" },
        409: { description: "The endpoint is disabled" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const eventType = c.req.valid("json").event_type ?? "webhook.test";
      const eventId = await asAdmin(deps, c, async (tx) => {
        await visibleEndpoint(tx, endpointId);
        const [r] = await mapSqlErrors(() =>
          tx<{ id: string }[]>`select public.webhook_send_test_event(${endpointId}, ${eventType}) as id`
        );
        return r!.id;
      });
      return c.json({ event_id: eventId }, 202);
    },
  ),
  route(
    {
      method: "get",
      path: "/endpoints/:id/recover/preview",
      summary: "Count what a recovery would send again",
      description: "How many permanently failed deliveries `POST /endpoints/{id}/recover` with the same " +
        "fields would queue again, counted up to 100,000 (`more`: there are more).",
      tag: "Endpoints",
      access: "admin",
      params: id,
      query: RecoverPreviewQuery,
      responses: {
        200: {
          description: "The count, before anything is sent",
          schema: RecoverPreview,
          example: { count: 37, more: false },
        },
        404: { description: "No such endpoint" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const q = c.req.valid("query");
      const n = await asAdmin(deps, c, async (tx) => {
        await visibleEndpoint(tx, endpointId);
        const [r] = await mapSqlErrors(() =>
          tx<{ n: number }[]>`select public.webhook_recover_preview(${endpointId}, ${q.since}::timestamptz,
                                ${q.until ?? null}::timestamptz, ${
            q.event_type ?? null
          }, ${PREVIEW_CAP}) as n`
        );
        return r!.n;
      });
      return c.json({ count: Math.min(n, PREVIEW_CAP), more: n > PREVIEW_CAP });
    },
  ),
  route(
    {
      method: "post",
      path: "/endpoints/:id/recover",
      summary: "Send again the permanently failed deliveries in a window",
      description: "Every delivery of this endpoint created in [`since`, `until`) (`until`: now when left " +
        "out) that failed for good, of `event_type` only when given, is queued again. The answer's " +
        "`recovery_id` lists them: `GET /deliveries?recovery_id=…`.",
      tag: "Endpoints",
      access: "admin",
      params: id,
      body: Recover,
      bodyExample: {
        since: "2026-11-27T00:00:00Z",
        until: "2026-11-28T00:00:00Z",
        event_type: "donation.recorded",
      },
      responses: {
        202: {
          description: "How many deliveries were queued again, and the recovery's id to list them by",
          schema: RecoverResult,
          example: { recovered: 37, recovery_id: "3f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b" },
        },
        404: { description: "No such endpoint" },
        409: { description: "The endpoint is disabled" },
      },
    },
    async (c) => {
      const endpointId = c.req.valid("param").id;
      const input = c.req.valid("json");
      const recoveryId = crypto.randomUUID();
      const recovered = await asAdmin(deps, c, async (tx, { organizationId }) => {
        await visibleEndpoint(tx, endpointId);
        const [r] = await mapSqlErrors(() =>
          tx<{ n: number }[]>`select public.webhook_recover_failed(${endpointId}, ${input.since}::timestamptz,
                                ${input.until ?? null}::timestamptz, ${input.event_type ?? null},
                                ${recoveryId}) as n`
        );
        await recordAudit(tx, organizationId, "endpoint.recovered", { type: "endpoint", id: endpointId }, {
          after: {
            recovered: r!.n,
            recovery_id: recoveryId,
            since: input.since,
            until: input.until ?? null,
            event_type: input.event_type ?? null,
          },
        });
        return r!.n;
      });
      return c.json({ recovered, recovery_id: recoveryId }, 202);
    },
  ),
];
