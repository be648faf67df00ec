// The outbound events in the OpenAPI document: a schema per event type (the envelope, with its row's
// fields as the catalogue's example shows them) under components.schemas, and each event as a webhook
// the API sends (`x-webhooks`, which OpenAPI 3.0 renderers show beside the routes), so the reference
// documents what a receiver gets as well as what a client sends.
// @see docs/events/README.md
import { EVENT_CATALOGUE, type EventTypeName } from "./catalogue.ts";

type Schema = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The schema of one example value: its JSON type, with the formats the examples use. */
function schemaOf(field: string, value: unknown): Schema {
  if (value === null) return field.endsWith("_id") ? { type: "string", format: "uuid", nullable: true } : {};
  if (typeof value === "number") return { type: Number.isInteger(value) ? "integer" : "number" };
  if (typeof value === "boolean") return { type: "boolean" };
  if (typeof value === "string") {
    if (UUID.test(value)) return { type: "string", format: "uuid" };
    if (/^\d{4}-\d\d-\d\dT/.test(value)) return { type: "string", format: "date-time" };
    if (/^\d{4}-\d\d-\d\d$/.test(value)) return { type: "string", format: "date" };
    return { type: "string" };
  }
  return { type: "object" };
}

function objectOf(example: Record<string, unknown>): Schema {
  return {
    type: "object",
    properties: Object.fromEntries(Object.entries(example).map(([k, v]) => [k, schemaOf(k, v)])),
  };
}

const schemaName = (type: string) => `Event.${type}`;

/** The schema of an event type's body. */
export function eventSchema(type: EventTypeName): Schema {
  const e = EVENT_CATALOGUE[type];
  const data = e.example.data as { row: Record<string, unknown>; delta: Record<string, unknown> };
  return {
    type: "object",
    description: e.description,
    required: ["id", "type", "created_at", "organization_id", "data"],
    properties: {
      id: { type: "string", format: "uuid", description: "The event id; also the webhook-id header" },
      type: { type: "string", enum: [type] },
      created_at: { type: "string", format: "date-time" },
      organization_id: { type: "string", format: "uuid" },
      data: {
        type: "object",
        required: ["row", "delta"],
        properties: {
          row: { ...objectOf(data.row), description: `The \`${e.table}\` row after the change` },
          delta: { type: "object", description: "The fields that changed (for an insert, every field)" },
        },
      },
      test: { type: "boolean", description: "true on a test delivery only; absent on real events" },
    },
    example: e.example,
  };
}

/** The document with every event type's schema and webhook added. */
export function withEventSchemas<T extends { components?: object }>(doc: T): T {
  const components = (doc.components ?? {}) as { schemas?: Record<string, unknown> };
  const types = Object.keys(EVENT_CATALOGUE) as EventTypeName[];
  const schemas = { ...components.schemas };
  for (const type of types) schemas[schemaName(type)] = eventSchema(type);
  const webhooks = Object.fromEntries(types.map((type) => [type, {
    post: {
      summary: type,
      description: `${EVENT_CATALOGUE[type].description}\n\n${EVENT_CATALOGUE[type].fires}\n\n` +
        "Signed with the endpoint's secret (webhook-id, webhook-timestamp, webhook-signature); " +
        "see docs/receiving-webhooks.md.",
      tags: ["Events"],
      requestBody: {
        required: true,
        content: { "application/json": { schema: { $ref: `#/components/schemas/${schemaName(type)}` } } },
      },
      responses: {
        "2XX": { description: "Received: any 2xx within 10 seconds ends the delivery" },
        "410": { description: "Gone: the endpoint is disabled" },
        "429": { description: "Too many requests: with Retry-After, the endpoint is paused until then" },
      },
    },
  }]));
  return { ...doc, components: { ...components, schemas }, "x-webhooks": webhooks };
}
