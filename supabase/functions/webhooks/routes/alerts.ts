// Settings > Integrations > Webhooks: where failure alerts go and when they are raised, for every
// endpoint's card. Admins choose the alert endpoints by subscribing them to the alert event types.
// @see docs/outbound-webhooks.md#failure-alerts
import { z } from "zod";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";

/** The event types that carry failure alerts (the event catalogue's webhook.endpoint.*). */
export const ALERT_EVENTS = [
  "webhook.endpoint.failing",
  "webhook.endpoint.recovered",
  "webhook.endpoint.disabled",
] as const;

const Alerts = z.object({
  failing_after_seconds: z.number().int().describe(
    "An endpoint that fails every attempt this long is reported failing: a mail to the admins and " +
      "webhook.endpoint.failing to the alert endpoints",
  ),
  disable_after_seconds: z.number().int().describe(
    "An endpoint that fails every attempt this long is disabled (webhook.endpoint.disabled)",
  ),
  mail_to_admins: z.boolean().describe("The organization's admins get a mail at each step"),
  endpoints: z.array(z.object({
    id: z.uuid(),
    url: z.string(),
    enabled: z.boolean(),
    events: z.array(z.enum(ALERT_EVENTS)).describe("The alert event types it subscribed to"),
  })).describe("The organization's endpoints subscribed to an alert event type: where alerts go"),
});

const ALERTS_EXAMPLE = {
  failing_after_seconds: 3600,
  disable_after_seconds: 432000,
  mail_to_admins: true,
  endpoints: [{
    id: "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
    url: "https://alerts.example.org/hooks/webhooks",
    enabled: true,
    events: ["webhook.endpoint.failing", "webhook.endpoint.recovered", "webhook.endpoint.disabled"],
  }],
};

export const alertRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/alerts",
      summary: "Failure alerts: thresholds and where they go",
      description: "When an endpoint's failures are reported (a mail to the admins, and " +
        "`webhook.endpoint.failing` to the alert endpoints) and when it is disabled; the alert endpoints " +
        "are the organization's endpoints subscribed to a `webhook.endpoint.*` event type.",
      tag: "Endpoints",
      access: "admin",
      responses: {
        200: { description: "Thresholds and alert endpoints", schema: Alerts, example: ALERTS_EXAMPLE },
      },
    },
    async (c) => {
      const body = await asAdmin(deps, c, async (tx) => {
        const [t] = await tx<{ failing: number; disable: number }[]>`
          select extract(epoch from private.webhook_failing_alert_after())::int as failing,
                 extract(epoch from private.webhook_failing_disable_after())::int as disable`;
        // At most 100 endpoints an organization (private.webhook_max_endpoints), under its policy.
        const endpoints = await tx<{ id: string; url: string; enabled: boolean; events: string[] }[]>`
          select id, url, enabled,
                 array(select x from unnest(events) x where x = any (${ALERT_EVENTS as unknown as string[]}::text[]))
                   as events
          from public.webhook_endpoints
          where events && ${ALERT_EVENTS as unknown as string[]}::text[]
          order by created_at, id`;
        return {
          failing_after_seconds: t!.failing,
          disable_after_seconds: t!.disable,
          mail_to_admins: true,
          endpoints,
        };
      });
      return c.json(body);
    },
  ),
];
