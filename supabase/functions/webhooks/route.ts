// A route is declared once: its path, who may call it, its zod schemas and responses, and its handler.
// `register` turns the declaration into a @hono/zod-openapi route, so Hono validates the input with
// those schemas (validate.ts decides the errors), the handler reads it typed (`c.req.valid(...)`), and
// the OpenAPI document is generated from the same declaration.
import { type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "../_shared/app.ts";
import { AppError } from "../_shared/errors.ts";
import type { Actor, ActorEnv } from "./actor.ts";
import { jsonBody } from "./validate.ts";

export interface RouteSpec {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Hono-style path below /webhooks, e.g. "/endpoints/:id". */
  path: string;
  summary: string;
  tag: string;
  /**
   * Who may call it: admins of the organization or its API keys ("admin"), any signed-in caller or API
   * key ("authenticated"), signed-in users only ("user", with `refusal` telling an API key why not), or
   * anyone ("public").
   */
  access: "admin" | "authenticated" | "user" | "public";
  refusal?: string;
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

type Out<T> = T extends z.ZodType ? z.output<T> : never;
type Input<S extends RouteSpec> = {
  out: {
    param: { [K in keyof S["params"]]: Out<S["params"][K]> };
    query: Out<S["query"]>;
    json: Out<S["body"]>;
  };
};

export interface Route {
  spec: RouteSpec;
  handler: (c: Context<ActorEnv>) => Promise<Response>;
}

export type RouteFactory = (deps: AppDeps) => Route[];

export const route = <const S extends RouteSpec>(
  spec: S,
  handler: (c: Context<ActorEnv, string, Input<S>>) => Promise<Response>,
): Route => ({ spec, handler: handler as Route["handler"] });

/** The signed-in person of a "user" route (its declaration has refused API keys already). */
export const userOf = (c: Context<ActorEnv>) => c.get("actor") as Extract<Actor, { kind: "user" }>;

const ErrorBody = z.object({
  error: z.object({
    code: z.string().describe("Stable machine-readable code"),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
}).openapi("Error");

const json = (schema: z.ZodType) => ({ "application/json": { schema } });
const error = (description: string) => ({ description, content: json(ErrorBody) });

function refuseApiKeys(message: string): MiddlewareHandler<ActorEnv> {
  return async (c, next) => {
    if (c.get("actor").kind !== "user") throw new AppError(403, "user_required", message);
    await next();
  };
}

/** Adds the route to `app`: authentication, then the input's validation, then the handler. */
export function register(app: OpenAPIHono<ActorEnv>, r: Route, auth: MiddlewareHandler<ActorEnv>): void {
  const { spec } = r;
  const responses: RouteConfig["responses"] = {};
  for (const [status, res] of Object.entries(spec.responses)) {
    responses[status] = res.schema
      ? { description: res.description, content: json(res.schema) }
      : { description: res.description };
  }
  if (spec.body || spec.query) responses[400] = error("Invalid input; `details.fields` names each bad field");
  if (spec.access !== "public") {
    responses[401] = error("Missing, invalid or expired credentials, or a session that has ended");
  }
  if (spec.access === "admin") {
    responses[403] = error("The caller is not an administrator of the organization");
  }
  const middleware: MiddlewareHandler[] = [];
  if (spec.access !== "public") middleware.push(auth as MiddlewareHandler);
  if (spec.access === "user") {
    middleware.push(refuseApiKeys(spec.refusal ?? "API keys cannot do this") as MiddlewareHandler);
  }
  if (spec.body) middleware.push(jsonBody);
  app.openapi(
    {
      method: spec.method,
      path: spec.path.replace(/:([A-Za-z_]+)/g, "{$1}"),
      summary: spec.summary,
      tags: [spec.tag],
      security: spec.access === "public"
        ? []
        : spec.access === "user"
        ? [{ bearerAuth: [] }]
        : [{ bearerAuth: [] }, { apiKey: [] }],
      middleware,
      request: {
        params: spec.params && z.object(spec.params),
        query: spec.query,
        body: spec.body && { required: true, content: json(spec.body) },
      },
      responses,
    },
    r.handler as never,
  );
}

export function openApiDocument(app: OpenAPIHono<ActorEnv>, version: string) {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A Supabase Auth access token (JWT), or an organization API key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "An organization API key (orgkey_...)",
  });
  return app.getOpenAPIDocument({
    openapi: "3.0.3",
    info: {
      title: "Webhooks configuration API",
      version,
      description:
        "Configure outbound webhooks (Settings > Integrations > Webhooks), read their delivery history " +
        "(Webhook Logs), subscribe automation platforms, and replay inbound provider webhooks. Every " +
        "route acts on the caller's active organization only.",
    },
    servers: [{ url: "/functions/v1" }],
  });
}
