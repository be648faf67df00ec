// The API's routes are declared once, with their zod schemas; the Hono routing and the OpenAPI document
// are both generated from those declarations, so the documentation cannot drift from what is enforced.
import { z } from "zod";

export type Method = "get" | "post" | "patch" | "delete";

export interface RouteSpec {
  method: Method;
  /** Hono-style path below /webhooks, e.g. "/endpoints/:id". */
  path: string;
  summary: string;
  tag: string;
  /**
   * Who may call it: admins of the organization or its API keys ("admin"), any signed-in caller or API
   * key ("authenticated"), signed-in users only ("user"), or anyone ("public").
   */
  access: "admin" | "authenticated" | "user" | "public";
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

const errorSchema = z.object({
  error: z.object({
    code: z.string().describe("Stable machine-readable code"),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

function jsonSchema(schema: z.ZodType, io: "input" | "output") {
  return z.toJSONSchema(schema, { target: "openapi-3.0", io, unrepresentable: "any" });
}

export function openApiDocument(routes: RouteSpec[], info: { version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = "/webhooks" + r.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const [name, schema] of Object.entries(r.params ?? {})) {
      parameters.push({ name, in: "path", required: true, schema: jsonSchema(schema, "input") });
    }
    if (r.query) {
      for (const [name, schema] of Object.entries(r.query.shape)) {
        const s = schema as z.ZodType;
        parameters.push({
          name,
          in: "query",
          required: !s.safeParse(undefined).success,
          description: s.description,
          schema: jsonSchema(s, "input"),
        });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      responses[status] = res.schema
        ? {
          description: res.description,
          content: { "application/json": { schema: jsonSchema(res.schema, "output") } },
        }
        : { description: res.description };
    }
    if (r.access !== "public") {
      responses["401"] = { description: "Missing, invalid or expired credentials", content: errorContent() };
    }
    if (r.access === "admin") {
      responses["403"] = {
        description: "The caller is not an administrator of the organization",
        content: errorContent(),
      };
    }
    if (r.body || r.query) {
      responses["400"] = {
        description: "Invalid input; `details.fields` names each bad field",
        content: errorContent(),
      };
    }
    paths[path] ??= {};
    paths[path][r.method] = {
      summary: r.summary,
      tags: [r.tag],
      security: r.access === "public"
        ? []
        : r.access === "user"
        ? [{ bearerAuth: [] }]
        : [{ bearerAuth: [] }, { apiKey: [] }],
      parameters: parameters.length ? parameters : undefined,
      requestBody: r.body
        ? { required: true, content: { "application/json": { schema: jsonSchema(r.body, "input") } } }
        : undefined,
      responses,
    };
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "Webhooks configuration API",
      version: info.version,
      description:
        "Configure outbound webhooks (Settings > Integrations > Webhooks), read their delivery history " +
        "(Webhook Logs), subscribe automation platforms, and replay inbound provider webhooks. Every " +
        "route acts on the caller's active organization only.",
    },
    servers: [{ url: "/functions/v1" }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "A Supabase Auth access token (JWT), or an organization API key",
        },
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "X-API-Key",
          description: "An organization API key (orgkey_...)",
        },
      },
      schemas: { Error: jsonSchema(errorSchema, "output") },
    },
    paths,
  };
}

function errorContent() {
  return { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };
}
