// Checkout (subscription) provider webhooks: POST /checkout-webhook[/<organization_id>].
import type { Context, Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { handleInbound } from "../_shared/inbound/pipeline.ts";
import { checkoutSpec } from "./events.ts";

export function createApp(deps: AppDeps): Hono {
  const app = newApp("checkout-webhook", deps);
  const receive = async (c: Context) => {
    const res = await handleInbound(deps.sql, checkoutSpec, c.req.raw, c.req.param("organizationId"));
    return c.json(res.body, res.status);
  };
  app.post("/", receive);
  app.post("/:organizationId", receive);
  return app;
}
