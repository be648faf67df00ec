// A route is declared once: its path, who may call it, its zod schemas and responses, and its handler.
// `register` turns the declaration into a @hono/zod-openapi route, so Hono validates the input with
// those schemas (validate.ts decides the errors), the handler reads it typed (`c.req.valid(...)`), and
// the OpenAPI document is generated from the same declaration. The reference shows a declaration's
// examples beside its schemas; tests/docs_api_reference_test.ts holds every route to the rule below.
import { type OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "../_shared/app.ts";
import { AppError } from "../_shared/errors.ts";
import type { Actor, ActorEnv } from "./actor.ts";
import { jsonBody } from "./validate.ts";

/**
 * A route's declaration. The reference (docs/api/index.html) shows it to integrators, so each one has:
 * a summary of at most 60 characters (the line in the reference's menu) with the rest in `description`;
 * a realistic `bodyExample` when it takes a body; and an `example` for each 2xx response with a
 * schema. Examples are parsed with their schemas by the tests, so they cannot drift from them. (A
 * schema's own `.openapi({ example })` counts too, where the example belongs to the schema wherever used.)
 */
export interface RouteSpec {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Hono-style path below /webhooks, e.g. "/endpoints/:id". */
  path: string;
  /** At most 60 characters. */
  summary: string;
  /** What the summary leaves out, shown below it (Markdown). */
  description?: string;
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
  /** The body may be left out (read as `{}`), as a DELETE's options. */
  bodyOptional?: boolean;
  /** A realistic request body, valid for `body`. */
  bodyExample?: unknown;
  responses: Record<number, { description: string; schema?: z.ZodType; example?: unknown }>;
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

const json = (schema: z.ZodType, example?: unknown) => ({
  "application/json": example === undefined ? { schema } : { schema, example },
});
const error = (description: string, code: string, message: string, details?: Record<string, unknown>) => ({
  description,
  content: json(ErrorBody, { error: details ? { code, message, details } : { code, message } }),
});

/** The first field of an object schema, for the example of a 400 answer. */
const firstField = (schema?: z.ZodType) =>
  schema instanceof z.ZodObject ? Object.keys(schema.shape)[0] : undefined;

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
      ? { description: res.description, content: json(res.schema, res.example) }
      : { description: res.description };
  }
  if (spec.body || spec.query) {
    const where = spec.body ? "body" : "query";
    const field = firstField(spec.body ?? spec.query) ?? where;
    responses[400] = error(
      "Invalid input; `details.fields` names each bad field",
      "invalid_request",
      `Invalid ${where}: ${field}`,
      { fields: [{ field, message: "Invalid input" }] },
    );
  }
  if (spec.access !== "public") {
    responses[401] = error(
      "Missing, invalid or expired credentials, or a session that has ended",
      "token_expired",
      "Access token has expired",
    );
  }
  if (spec.access === "admin") {
    responses[403] = error(
      "The caller is not an administrator of the organization",
      "admin_required",
      "Only administrators of the organization can do this",
    );
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
      ...(spec.description ? { description: spec.description } : {}),
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
        body: spec.body && { required: !spec.bodyOptional, content: json(spec.body, spec.bodyExample) },
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
