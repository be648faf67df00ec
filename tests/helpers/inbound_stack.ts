// The configuration API and the three inbound receivers served together on one loopback port, the way
// Supabase serves functions (/functions/v1/<name>), so that replay through the API reaches the receiver
// that owns a payload over HTTP with the replay secret, exactly as deployed.
import { createApp as webhooksApp } from "../../supabase/functions/webhooks/app.ts";
import { createApp as checkoutApp } from "../../supabase/functions/checkout-webhook/app.ts";
import { createApp as paymentsApp } from "../../supabase/functions/payments-webhook/app.ts";
import { createApp as messagingApp } from "../../supabase/functions/messaging-webhook/app.ts";
import type { AppDeps } from "../../supabase/functions/_shared/app.ts";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { createUserSql } from "../../supabase/functions/_shared/pools.ts";
import { serve } from "./server.ts";
import { testConfig } from "./tokens.ts";

type Fetch = (req: Request) => Response | Promise<Response>;

export interface InboundStack {
  url: string;
  /** `${url}/functions/v1/<name>` */
  base(name: "webhooks" | "checkout-webhook" | "payments-webhook" | "messaging-webhook"): string;
  replaySecret: string;
  deps: AppDeps;
  close(): Promise<void>;
}

export async function startInboundStack(env: Record<string, string> = {}): Promise<InboundStack> {
  const apps = new Map<string, Fetch>();
  const server = await serve((req) => {
    const url = new URL(req.url);
    const match = url.pathname.match(/^\/functions\/v1\/([^/]+)(\/.*)?$/);
    const app = match ? apps.get(match[1]!) : undefined;
    if (!match || !app) return new Response("no such function", { status: 404 });
    url.pathname = `/${match[1]}${match[2] ?? ""}`;
    return app(new Request(url, req));
  });
  const replaySecret = `test-replay-secret-${crypto.randomUUID()}`;
  const config = await testConfig({
    INBOUND_REPLAY_SECRET: replaySecret,
    SUPABASE_FUNCTIONS_URL: `${server.url}/functions/v1`,
    ...env,
  });
  // The user pool as deployed: edge_user, its password read through the server pool.
  const serverSql = createSql(config.dbUrl, { max: 4 });
  const deps: AppDeps = { config, sql: serverSql, userSql: createUserSql(config, serverSql, 4) };
  for (
    const [name, create] of [
      ["webhooks", webhooksApp],
      ["checkout-webhook", checkoutApp],
      ["payments-webhook", paymentsApp],
      ["messaging-webhook", messagingApp],
    ] as const
  ) {
    const app = create(deps);
    apps.set(name, (req) => app.fetch(req));
  }
  return {
    url: server.url,
    base: (name) => `${server.url}/functions/v1/${name}`,
    replaySecret,
    deps,
    close: async () => {
      await server.close();
      await Promise.all([deps.sql.end({ timeout: 5 }), deps.userSql!.end({ timeout: 5 })]);
    },
  };
}
