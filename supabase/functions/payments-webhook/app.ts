// Card-payment provider webhooks (refunds, captured and recurring payments): POST /payments-webhook[/<organization_id>], and
// POST /payments-webhook/replay for the configuration API (replay secret).
import type { Context, Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { runInbound } from "../_shared/inbound/pipeline.ts";
import { paymentReceiver, paymentResponse } from "../_shared/inbound/payment_receiver.ts";
import { mountReplay } from "../_shared/inbound/replay_route.ts";
import { paymentsSpec } from "./events.ts";

export const receiver = paymentReceiver(paymentsSpec);

export function createApp(deps: AppDeps): Hono {
  const app = newApp("payments-webhook", deps);
  mountReplay(app, deps.sql, receiver, deps.config.replaySecret);
  const receive = async (c: Context) => {
    const res = paymentResponse(
      await runInbound(deps.sql, receiver, c.req.raw, c.req.param("organizationId")),
    );
    return c.json(res.body, res.status);
  };
  app.post("/", receive);
  app.post("/:organizationId", receive);
  return app;
}
