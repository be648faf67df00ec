// Configuration API for the settings area (Settings > Integrations > Webhooks, Webhook Logs) and for
// automation platforms. Every route is declared once (routes/*.ts); routing and the OpenAPI document
// both come from those declarations.
import type { Hono } from "hono";
import { cors } from "hono/cors";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { createTokenVerifier } from "../_shared/auth.ts";
import { type ActorEnv, authenticate } from "./actor.ts";
import { openApiDocument } from "./openapi.ts";
import type { Route } from "./route.ts";
import { apiKeyRoutes } from "./routes/api_keys.ts";
import { inboundLogRoutes } from "./routes/inbound_log.ts";
import { endpointRoutes } from "./routes/endpoints.ts";
import { deliveryRoutes } from "./routes/deliveries.ts";
import { automationRoutes } from "./routes/automation.ts";
import { eventTypeRoutes } from "./routes/event_types.ts";
import { meRoutes } from "./routes/me.ts";
import { invitationRoutes } from "./routes/invitations.ts";

export const API_VERSION = "1.0.0";

export function routes(deps: AppDeps): Route[] {
  return [
    ...endpointRoutes(deps),
    ...deliveryRoutes(deps),
    ...eventTypeRoutes(deps),
    ...automationRoutes(deps),
    ...apiKeyRoutes(deps),
    ...inboundLogRoutes(deps),
    ...meRoutes(deps),
    ...invitationRoutes(deps),
  ];
}

export function createApp(deps: AppDeps): Hono {
  const app = newApp("webhooks", deps) as unknown as Hono<ActorEnv>;
  // The settings UI is a static site on its own origin and calls this function from the browser.
  // Any origin may: credentials travel only as explicit Authorization/X-API-Key headers (never
  // cookies), so a page can do nothing with this API that its own token or key would not let it do.
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: ["authorization", "x-api-key", "content-type", "apikey", "x-client-info"],
      allowMethods: ["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
      maxAge: 600,
    }),
  );
  const all = routes(deps);
  const document = openApiDocument(all.map((r) => r.spec), { version: API_VERSION });
  app.get("/openapi.json", (c) => c.json(document));

  const auth = authenticate(deps.sql, createTokenVerifier(deps.config));
  for (const r of all) {
    const handlers = r.spec.access === "public" ? [r.handler] : [auth, r.handler];
    app.on(r.spec.method.toUpperCase(), r.spec.path, ...(handlers as [typeof auth]));
  }
  return app as unknown as Hono;
}
