// Automation platforms (Zapier, Make, n8n): REST-hook subscribe/unsubscribe and sample data. A
// subscription is an ordinary endpoint for one event, so it is delivered, retried, logged and disabled
// on 410 Gone like any other.
// @see docs/configuration-api.md#walkthrough-for-an-integrator-zapier-style-rest-hooks
import { z } from "zod";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { EVENT_CATALOGUE } from "../catalogue.ts";
import { EventType, Subscribe } from "../schemas.ts";
import { assertSafeTarget, createEndpoint, deleteEndpoint } from "./endpoints.ts";
import { mapSqlErrors } from "../sql_errors.ts";

const Subscription = z.object({
  id: z.uuid().describe("Pass to DELETE /subscriptions/{id} to unsubscribe"),
  target_url: z.string(),
  event: EventType,
  secret: z.string().describe("Signing secret, for receivers that verify signatures"),
});

const SampleQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(3) });

/**
 * Bytes of bodies one /samples answer carries at most (the newest body always, whatever its size):
 * bodies are up to 256 KiB each, and 100 of them would be 25 MiB to build and send.
 */
export const SAMPLES_MAX_BYTES = 1024 * 1024;

const SAMPLE_TARGET = "https://hooks.zapier.example/hooks/standard/1234567/9f8e7d6c/";

export const automationRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "post",
      path: "/subscriptions",
      summary: "REST-hook subscribe: deliver one event type to target_url",
      description: "Zapier's performSubscribe. The subscription is an endpoint like any other: delivered, " +
        "retried, logged, and disabled when the target answers 410 Gone.",
      tag: "Automation platforms",
      access: "admin",
      body: Subscribe,
      bodyExample: { target_url: SAMPLE_TARGET, event: "donation.recorded" },
      responses: {
        201: {
          description: "The subscription",
          schema: Subscription,
          example: {
            id: "6a0f3d2c-1b4e-4f7a-9c8d-5e6f7a8b9c0d",
            target_url: SAMPLE_TARGET,
            event: "donation.recorded",
            secret: "whsec_Vm9yZ2V0UzNjcmV0S2V5Rm9yWmFwaWVyMQ",
          },
        },
        409: { description: "too_many_endpoints: the organization has 100 endpoints, the most it can have" },
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      await assertSafeTarget(deps.config, input.target_url);
      const actor = c.get("actor");
      const row = await asAdmin(
        deps,
        c,
        (tx, { organizationId }) =>
          mapSqlErrors(() =>
            createEndpoint(tx, organizationId, {
              url: input.target_url,
              events: [input.event],
              description: `REST hook subscription (${actor.kind === "api_key" ? "API key" : "user"})`,
            })
          ),
      );
      return c.json({ id: row.id, target_url: row.url, event: input.event, secret: row.secret }, 201);
    },
  ),
  route(
    {
      method: "delete",
      path: "/subscriptions/:id",
      summary: "REST-hook unsubscribe",
      tag: "Automation platforms",
      access: "admin",
      params: { id: z.uuid() },
      responses: { 204: { description: "Unsubscribed" }, 404: { description: "No such subscription" } },
    },
    async (c) => {
      const subscriptionId = c.req.valid("param").id;
      await asAdmin(deps, c, (tx) => deleteEndpoint(tx, subscriptionId, "subscription"));
      return c.body(null, 204);
    },
  ),
  route(
    {
      method: "get",
      path: "/samples/:event_type",
      summary: "Recent bodies of one event type, as delivered",
      description: "Newest first, exactly as delivered (Zapier's performList), at most `limit` of them and " +
        "1 MiB of bodies.",
      tag: "Automation platforms",
      access: "admin",
      params: { event_type: EventType },
      query: SampleQuery,
      responses: {
        200: {
          description:
            "Bodies of real events of the organization (not those redacted when their person was erased); " +
            "the catalogue example when there are none yet",
          schema: z.array(z.record(z.string(), z.unknown())),
          example: [EVENT_CATALOGUE["donation.recorded"].example],
        },
        404: { description: "Unknown event type" },
      },
    },
    async (c) => {
      const type = c.req.valid("param").event_type;
      const { limit } = c.req.valid("query");
      // Newest first, while the bodies add up to SAMPLES_MAX_BYTES (counted when each was written).
      const rows = await asAdmin(deps, c, (tx) =>
        tx<{ payload: Record<string, unknown> }[]>`
          select s.payload from (
            select e.payload, row_number() over w as n, sum(e.body_bytes) over w as bytes
            from public.webhook_events e
            where e.type = ${type} and not e.payload ? 'test' and e.redacted_at is null
            window w as (order by e.created_at desc, e.id desc)
            order by e.created_at desc, e.id desc limit ${limit}
          ) s
          where s.n = 1 or s.bytes <= ${SAMPLES_MAX_BYTES}
          order by s.n`);
      return c.json(rows.length ? rows.map((r) => r.payload) : [EVENT_CATALOGUE[type].example]);
    },
  ),
];
