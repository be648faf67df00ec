// Writes the documentation that is generated, so it cannot drift from what it documents: the event
// catalogue's pages, docs/events/ (an index and a page per event type, from
// supabase/functions/webhooks/catalogue.ts) and the rendered API reference, docs/api/index.html (from
// docs/webhooks-openapi.json, by Redocly's CLI pinned in package.json). A test fails when a committed file
// differs from what this makes now. (The table of scheduled jobs in docs/operations.md comes from a
// database: tests/docs_cron_jobs_test.ts checks it and prints it.)
//   npm run docs
import { EVENT_CATALOGUE, type EventTypeName } from "../supabase/functions/webhooks/catalogue.ts";

export const EVENTS_DIR = new URL("../docs/events/", import.meta.url);
export const API_REFERENCE = new URL("../docs/api/index.html", import.meta.url);
const OPENAPI = new URL("../docs/webhooks-openapi.json", import.meta.url);
// Our page template: the stock one plus a Content-Security-Policy, so the page fetches nothing.
const TEMPLATE = new URL("./docs/api-reference.hbs", import.meta.url);
const REDOCLY = new URL("../node_modules/@redocly/cli/bin/cli.js", import.meta.url);

const GENERATED =
  "<!-- Generated from supabase/functions/webhooks/catalogue.ts by `npm run docs`: edit the catalogue, not this. -->";

/** The JSON type of an example value, as a reader of the body sees it. */
function typeOf(field: string, value: unknown): string {
  if (value === null) return field.endsWith("_id") ? "string (uuid) or null" : "null in the example";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "boolean") return "boolean";
  if (typeof value !== "string") return Array.isArray(value) ? "array" : "object";
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value)) return "string (uuid)";
  if (/^\d{4}-\d\d-\d\dT/.test(value)) return "string (date-time, ISO 8601 with offset)";
  if (/^\d{4}-\d\d-\d\d$/.test(value)) return "string (date)";
  return "string";
}

const cell = (value: unknown) => "`" + JSON.stringify(value).replaceAll("|", "\\|") + "`";

/** The page of one event type: when it fires, the fields of its row, its example body. */
export function eventPage(type: EventTypeName): string {
  const e = EVENT_CATALOGUE[type];
  const row = e.example.data.row as Record<string, unknown>;
  return [
    `# \`${type}\``,
    "",
    GENERATED,
    "",
    e.description,
    "",
    "## When it fires",
    "",
    e.fires,
    "",
    "## Body",
    "",
    "The envelope every event has ([all events](README.md#the-envelope)), with `data.row` the " +
    `\`${e.table}\` row after the change and \`data.delta\` the fields that changed (for an insert, every field).`,
    "",
    "| field of `data.row` | type | example |",
    "|---|---|---|",
    ...Object.entries(row).map(([field, value]) => `| \`${field}\` | ${typeOf(field, value)} | ${cell(value)} |`),
    "",
    "## Example",
    "",
    "```json",
    JSON.stringify(e.example, null, 2),
    "```",
    "",
    `A test delivery of this type (\`POST /endpoints/{id}/test\` with \`{"event_type": "${type}"}\`) sends ` +
    'this body with its own `id`, `created_at` and organization, and `"test": true` at the top level.',
    "",
  ].join("\n");
}

/** docs/events/README.md: every event type, the envelope they share, and the test event. */
export function eventsIndex(): string {
  return [
    "# Events",
    "",
    GENERATED,
    "",
    "The events an endpoint can subscribe to, one page each with when it fires, its fields and its example " +
    "body. The same catalogue validates subscriptions in the API and answers `GET /webhooks/event-types`. " +
    "How a delivery is signed and verified: [Receiving webhooks](../receiving-webhooks.md).",
    "",
    "| event | what happened |",
    "|---|---|",
    ...Object.entries(EVENT_CATALOGUE).map(([type, e]) => `| [\`${type}\`](${type}.md) | ${e.description} |`),
    "",
    "## The envelope",
    "",
    "Every body is one JSON object: `id` (the event id, also the `webhook-id` header: de-duplicate on it), " +
    "`type`, `created_at`, `organization_id` and `data`, which holds `row` (the record as the database " +
    "holds it after the change: amounts in minor units, timestamps in ISO 8601 with offset) and `delta` " +
    "(the fields that changed; for an insert, every field). A body larger than 256 KiB is sent trimmed " +
    "and says so in a top-level `truncated` object ([body size](../outbound-webhooks.md#body-size)); " +
    "an event about a person who was later erased is redacted ([erased people]" +
    "(../outbound-webhooks.md#disabling-and-erased-people)).",
    "",
    "## `webhook.test`",
    "",
    "Not subscribable: sent when an administrator presses Send test event (`POST /endpoints/{id}/test`). " +
    "`data.row` and `data.delta` are `{endpoint_id, message}`; with `event_type` the test carries that " +
    'type\'s example body instead. Every test body has `"test": true` at the top level, which a real ' +
    "event never has: answer 2xx and store nothing.",
    "",
    "Adding an event type: [Development](../development.md#add-an-event-type).",
    "",
  ].join("\n");
}

/** Every generated file of docs/events/, by name. */
export function eventFiles(): Map<string, string> {
  const files = new Map<string, string>([["README.md", eventsIndex()]]);
  for (const type of Object.keys(EVENT_CATALOGUE) as EventTypeName[]) {
    files.set(`${type}.md`, eventPage(type));
  }
  return files;
}

/**
 * Renders the OpenAPI document into one self-contained HTML file at `out`: the renderer's JavaScript
 * inlined (--inlineBundle), the CLI's telemetry and update check off (nothing leaves this machine).
 */
export async function renderApiReference(out: URL): Promise<void> {
  const result = await new Deno.Command("node", {
    args: [
      REDOCLY.pathname,
      "build-docs",
      OPENAPI.pathname,
      "--inlineBundle",
      "--template",
      TEMPLATE.pathname,
      "--output",
      out.pathname,
    ],
    env: { REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    const d = new TextDecoder();
    throw new Error(`redocly build-docs failed:\n${d.decode(result.stdout)}${d.decode(result.stderr)}`);
  }
}

if (import.meta.main) {
  await Deno.mkdir(EVENTS_DIR, { recursive: true });
  for await (const e of Deno.readDir(EVENTS_DIR)) {
    if (e.name.endsWith(".md")) await Deno.remove(new URL(e.name, EVENTS_DIR));
  }
  for (const [name, text] of eventFiles()) await Deno.writeTextFile(new URL(name, EVENTS_DIR), text);
  console.log(`wrote ${EVENTS_DIR.pathname}`);
  await Deno.mkdir(new URL(".", API_REFERENCE), { recursive: true });
  await renderApiReference(API_REFERENCE);
  console.log(`wrote ${API_REFERENCE.pathname}`);
}
