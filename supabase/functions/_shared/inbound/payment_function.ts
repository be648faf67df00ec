// The two payment providers' functions (checkout-webhook, payments-webhook) are one function with
// another name and ProviderSpec: POST /<name>[/<organization_id>] through the inbound pipeline, and
// POST /<name>/replay for the configuration API (replay secret).
import type { Context, Hono } from "hono";
import { type AppDeps, newApp } from "../app.ts";
import { runInbound } from "./pipeline.ts";
import { paymentReceiver, paymentResponse } from "./payment_receiver.ts";
import { mountReplay } from "./replay_route.ts";
import type { ProviderSpec } from "./types.ts";

export function paymentFunction(name: string, spec: ProviderSpec) {
  const receiver = paymentReceiver(spec);
  function createApp(deps: AppDeps): Hono {
    const app = newApp(name, deps);
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
  return { receiver, createApp };
}
