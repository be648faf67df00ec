// Card-payment provider webhooks (refunds, captured and recurring payments): POST /payments-webhook[/<organization_id>].
import type { Context, Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { handleInbound } from "../_shared/inbound/pipeline.ts";
import { paymentsSpec } from "./events.ts";

export function createApp(deps: AppDeps): Hono {
  const app = newApp("payments-webhook", deps);
  const receive = async (c: Context) => {
    const res = await handleInbound(deps.sql, paymentsSpec, c.req.raw, c.req.param("organizationId"));
    return c.json(res.body, res.status);
  };
  app.post("/", receive);
  app.post("/:organizationId", receive);
  return app;
}
