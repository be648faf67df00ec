// Configuration API for the settings area (Settings > Integrations > Webhooks, Webhook Logs) and for
// automation platforms. Every route is declared once (routes/*.ts); its routing, input validation,
// handler types and OpenAPI entry all come from that declaration (route.ts).
// @see docs/configuration-api.md#routes
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Hono, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { createTokenVerifier } from "../_shared/auth.ts";
import { type ActorEnv, authenticate } from "./actor.ts";
import { openApiDocument, register, type Route } from "./route.ts";
import { validationHook } from "./validate.ts";
import { apiKeyRoutes } from "./routes/api_keys.ts";
import { inboundLogRoutes } from "./routes/inbound_log.ts";
import { endpointRoutes } from "./routes/endpoints.ts";
import { activityRoutes } from "./routes/activity.ts";
import { secretRevealRoutes } from "./routes/secret_reveal.ts";
import { alertRoutes } from "./routes/alerts.ts";
import { bulkRetryRoutes } from "./routes/bulk_retry.ts";
import { deliveryRoutes } from "./routes/deliveries.ts";
import { deliveryCountRoutes } from "./routes/delivery_count.ts";
import { eventRoutes } from "./routes/events.ts";
import { automationRoutes } from "./routes/automation.ts";
import { eventTypeRoutes } from "./routes/event_types.ts";
import { meRoutes } from "./routes/me.ts";
import { invitationRoutes } from "./routes/invitations.ts";
import { invitationPreviewRoutes } from "./routes/invitation_preview.ts";
import { peopleRoutes } from "./routes/people.ts";
import { erasureRoutes } from "./routes/erasures.ts";
import { connectionRoutes } from "./routes/connections.ts";
import { whatsappCheckRoutes } from "./routes/whatsapp_checks.ts";
import { organizationRoutes } from "./routes/organizations.ts";
import { platformRoutes } from "./routes/platform.ts";
import { auditLogRoutes } from "./routes/audit_log.ts";
import { logRetentionRoutes } from "./routes/log_retention.ts";
import { withEventSchemas } from "./event_schemas.ts";

export const API_VERSION = "1.0.0";

export function routes(deps: AppDeps): Route[] {
  return [
    ...endpointRoutes(deps),
    ...activityRoutes(deps),
    ...secretRevealRoutes(deps),
    ...alertRoutes(deps),
    ...bulkRetryRoutes(deps),
    // Before /deliveries/{id}, which would take "count" for an id.
    ...deliveryCountRoutes(deps),
    ...deliveryRoutes(deps),
    ...eventRoutes(deps),
    ...eventTypeRoutes(deps),
    ...automationRoutes(deps),
    ...apiKeyRoutes(deps),
    ...inboundLogRoutes(deps),
    ...meRoutes(deps),
    ...invitationRoutes(deps),
    ...invitationPreviewRoutes(deps),
    ...peopleRoutes(deps),
    ...erasureRoutes(deps),
    ...connectionRoutes(deps),
    ...whatsappCheckRoutes(deps),
    ...organizationRoutes(deps),
    ...platformRoutes(deps),
    ...auditLogRoutes(deps),
    ...logRetentionRoutes(deps),
  ];
}

function api(deps: AppDeps, auth: MiddlewareHandler<ActorEnv>): OpenAPIHono<ActorEnv> {
  const root = new OpenAPIHono<ActorEnv>({ defaultHook: validationHook }) as unknown as Hono;
  const app = newApp("webhooks", deps, root) as unknown as OpenAPIHono<ActorEnv>;
  // The settings UI is a static site on its own origin and calls this function from the browser.
  // Any origin may: credentials travel only as explicit Authorization/X-API-Key headers (never
  // cookies), so a page can do nothing with this API that its own token or key would not let it do.
  app.use(
    "*",
    cors({
      origin: "*",
      allowHeaders: [
        "authorization",
        "x-api-key",
        "content-type",
        "apikey",
        "x-client-info",
        "idempotency-key",
      ],
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      maxAge: 600,
    }),
  );
  for (const r of routes(deps)) register(app, r, auth);
  return app;
}

/** The OpenAPI document, from the route declarations alone (no handler runs, nothing is connected). */
export const document = () =>
  withEventSchemas(
    openApiDocument(api({} as AppDeps, () => Promise.reject(new Error("not served"))), API_VERSION),
  );

export function createApp(deps: AppDeps): Hono {
  const app = api(deps, authenticate(deps.sql, createTokenVerifier(deps.config)));
  const doc = withEventSchemas(openApiDocument(app, API_VERSION));
  app.get("/openapi.json", (c) => c.json(doc));
  return app as unknown as Hono;
}
