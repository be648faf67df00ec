// How long an organization keeps its delivery history (Webhook Logs): 1 to 90 days, 30 unless its admins
// choose. A setting of the settings area, so it is reached here, not through the Data API.
// @see docs/monitoring.md#retention
import { z } from "@hono/zod-openapi";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";

/** The retention when an organization has not chosen one (the table's default). */
export const DEFAULT_LOG_DAYS = 30;

const LogRetention = z.object({
  webhook_log_days: z.number().int().min(1).max(90).describe(
    "Days a finished delivery (with its event and attempts) is kept in Webhook Logs",
  ),
  chosen: z.boolean().describe("false: the organization has not chosen, and the default applies"),
}).openapi({ example: { webhook_log_days: 14, chosen: true } });

const SetLogRetention = z.object({
  webhook_log_days: z.number("must be a whole number of days from 1 to 90").int(
    "must be a whole number of days",
  )
    .min(1, "must be at least 1 day").max(90, "must be at most 90 days"),
}).strict().openapi({ example: { webhook_log_days: 14 } });

const access = { access: "user", refusal: "API keys cannot change the organization's settings" } as const;

export const logRetentionRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/log-retention",
      summary: "How long the organization keeps its delivery history",
      tag: "Settings",
      ...access,
      responses: { 200: { description: "The retention", schema: LogRetention } },
    },
    async (c) => {
      const row = await asAdmin(deps, c, async (tx) => {
        const [r] = await tx<{ webhook_log_days: number }[]>`
          select webhook_log_days from public.organization_log_retention`;
        return r;
      });
      return c.json({
        webhook_log_days: row?.webhook_log_days ?? DEFAULT_LOG_DAYS,
        chosen: row !== undefined,
      });
    },
  ),
  route(
    {
      method: "put",
      path: "/log-retention",
      summary: "Choose how long delivery history is kept",
      description:
        `1 to 90 days (${DEFAULT_LOG_DAYS} until chosen). Older history goes at the next clean-up.`,
      tag: "Settings",
      ...access,
      body: SetLogRetention,
      responses: { 200: { description: "The retention now", schema: LogRetention } },
    },
    async (c) => {
      const { webhook_log_days } = c.req.valid("json");
      const days = await asAdmin(deps, c, async (tx, { organizationId }) => {
        const [r] = await tx<{ webhook_log_days: number }[]>`
          insert into public.organization_log_retention (organization_id, webhook_log_days)
          values (${organizationId}, ${webhook_log_days})
          on conflict (organization_id) do update set webhook_log_days = excluded.webhook_log_days
          returning webhook_log_days`;
        return r!.webhook_log_days;
      });
      return c.json({ webhook_log_days: days, chosen: true });
    },
  ),
];
