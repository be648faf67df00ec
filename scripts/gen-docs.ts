// Writes the documentation that is generated, so it cannot drift from what it documents: the event
// catalogue's pages, docs/events/ (an index and a page per event type, from
// supabase/functions/webhooks/catalogue.ts, and the event types CHANGELOG.md lists) and the rendered API reference, docs/api/index.html (from
// docs/webhooks-openapi.json, by Redocly's CLI pinned in package.json). A test fails when a committed file
// differs from what this makes now; and the table of scheduled jobs in docs/operations.md (from the
// migrations' cron.schedule calls; its test also holds it against cron.job).
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
    ...Object.entries(row).map(([field, value]) =>
      `| \`${field}\` | ${typeOf(field, value)} | ${cell(value)} |`
    ),
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

// ---------------------------------------------------------------------------------------------------
// The event types CHANGELOG.md's unreleased 1.0.0 names, from the catalogue (a hand-kept list once named
// 6 of its 8). Once 1.0.0 is released its list is history: move the markers to the next version then.

export const CHANGELOG = new URL("../CHANGELOG.md", import.meta.url);
const EVENTS_BLOCK = /<!-- events:start -->[\s\S]*?<!-- events:end -->/;

/** "`a`, `b` and `c`": every event type of the catalogue, in its order. */
export function changelogEventList(): string {
  const names = (Object.keys(EVENT_CATALOGUE) as EventTypeName[]).map((t) => `\`${t}\``);
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** The changelog's text with the list between its events markers written from the catalogue. */
export function withChangelogEvents(changelog: string): string {
  if (!EVENTS_BLOCK.test(changelog)) throw new Error("CHANGELOG.md has no events:start/end markers");
  return changelog.replace(
    EVENTS_BLOCK,
    () => `<!-- events:start -->${changelogEventList()}<!-- events:end -->`,
  );
}

// ---------------------------------------------------------------------------------------------------
// The scheduled jobs table of docs/operations.md, from the migrations' cron.schedule(...) calls; the
// test that checks it (tests/docs_cron_jobs_test.ts) also holds it against cron.job of a migrated
// database, so a job added, renamed or rescheduled without its row fails there.

export const OPERATIONS_GUIDE = new URL("../docs/operations.md", import.meta.url);
const MIGRATIONS = new URL("../supabase/migrations/", import.meta.url);

export interface CronJob {
  jobname: string;
  schedule: string;
  command: string;
}

/** What each job is for: a job without a line here fails the test (and `npm run docs`). */
export const CRON_JOB_PURPOSES: Record<string, string> = {
  "webhook-dispatch":
    "starts `webhook-dispatcher` through pg_net (one request, or one per 3,000 due, up to 8): a 70 s run " +
    "that keeps polling once idle",
  "webhook-dispatch-recover":
    "only while the latest dispatcher invocation failed and something is due: one request for a run that " +
    "drains and stops, so what waited during an outage goes out within seconds. pg_cron 1.5+ only (hosted " +
    "projects); with 1.4 the minute job picks up instead (the health check's `scheduler` says which)",
  "webhook-housekeeping":
    "expires leases, ends deliveries whose 24-hour window closed, sets aside deliveries claimed 3 times " +
    "without a result, disables endpoints failing for 5 days",
  "webhook-bulk-retry":
    "carries on the bulk retries still running (Webhook Logs' Retry N matching) a batch of 1,000 at a " +
    "time, for up to 50 s; removes finished ones after 90 days",
  "mail-housekeeping":
    "queues the failing-endpoint e-mails, cancels mails of invitations no longer open, gives up mails past " +
    "their time, removes sent mail after 30 days, and starts `mail-sender` while mail is due",
  "log-retention":
    "deletes outbound history past each organization's retention, old inbound log rows and pg_cron's run " +
    "history, in batches, at most 60 s a run ([retention](monitoring.md#retention))",
  "webhook-search-index":
    "builds Webhook Logs' content search index: the events of deliveries recorded since it last caught " +
    "up, in batches, once no delivery is due (or the index is 10 s behind); runs up to 55 s, looking " +
    "every second ([content search](outbound-webhooks.md#webhook-logs))",
  "audit-log-retention":
    "deletes audit log entries older than a year, oldest first, in batches, at most 50 s a run " +
    "([audit log](audit-log.md#how-long-entries-are-kept))",
  "person-erasure": "continues the erasures their request did not finish (batches of 500, at most 50 s)",
  "whatsapp-orphan-receipts":
    "drops WhatsApp delivery receipts whose message never arrived, 30 days after they came",
};

/** Every `cron.schedule('name', 'schedule', 'command')` of the migrations, in file order. */
export async function migrationCronJobs(): Promise<CronJob[]> {
  const files = [...Deno.readDirSync(MIGRATIONS)].map((e) => e.name).filter((n) => n.endsWith(".sql")).sort();
  const jobs: CronJob[] = [];
  for (const name of files) {
    const text = await Deno.readTextFile(new URL(name, MIGRATIONS));
    for (const m of text.matchAll(/cron\.schedule\(\s*'([^']+)',\s*'([^']+)',\s*'((?:[^']|'')*)'\s*\)/g)) {
      jobs.push({ jobname: m[1]!, schedule: m[2]!, command: m[3]!.replaceAll("''", "'") });
    }
  }
  return jobs;
}

function when(schedule: string): string {
  const known: Record<string, string> = {
    "* * * * *": "every minute",
    "*/10 * * * *": "every 10 minutes",
    "5 seconds": "every 5 seconds",
  };
  const daily = schedule.match(/^(\d+) (\d+) \* \* \*$/);
  if (daily) return `daily at ${daily[2]!.padStart(2, "0")}:${daily[1]!.padStart(2, "0")} UTC`;
  return known[schedule] ?? `\`${schedule}\``;
}

/** The Markdown between the cron-jobs markers of docs/operations.md. */
export function cronJobsMarkdown(jobs: CronJob[]): string {
  const missing = jobs.filter((j) => !CRON_JOB_PURPOSES[j.jobname]).map((j) => j.jobname);
  if (missing.length) {
    throw new Error(`no purpose for cron job(s) ${missing.join(", ")} in scripts/gen-docs.ts`);
  }
  return [
    "<!-- cron-jobs:start -->",
    "<!-- Generated from the migrations' cron.schedule calls by `npm run docs`; tests/docs_cron_jobs_test.ts holds it against cron.job. -->",
    "",
    "| pg_cron job | when | runs | does |",
    "|---|---|---|---|",
    ...jobs.map((j) =>
      `| \`${j.jobname}\` | ${when(j.schedule)} | \`${j.command}\` | ${CRON_JOB_PURPOSES[j.jobname]} |`
    ),
    "<!-- cron-jobs:end -->",
  ].join("\n");
}

const CRON_BLOCK = /<!-- cron-jobs:start -->\n[\s\S]*?<!-- cron-jobs:end -->/;

/** The guide's text with the jobs table written from `jobs`. */
export function withCronJobs(guide: string, jobs: CronJob[]): string {
  if (!CRON_BLOCK.test(guide)) throw new Error("docs/operations.md has no cron-jobs:start/end block");
  return guide.replace(CRON_BLOCK, () => cronJobsMarkdown(jobs));
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
  // The renderer's "API docs by Redocly" link shows a logo from Redocly's CDN. The page's policy would
  // refuse that request, but a reader's browser would still try it: the logo is drawn here instead.
  const html = await Deno.readTextFile(out);
  let inlined = html;
  for (const [url, svg] of Object.entries(REDOCLY_LOGOS)) inlined = inlined.replaceAll(url, svg);
  if (inlined === html) throw new Error("the renderer no longer names its logo's URL: check REDOCLY_LOGOS");
  await Deno.writeTextFile(out, inlined);
}

/** The renderer's two logo URLs, each with an inline stand-in (the word, in the renderer's own colour). */
const logo = (width: number, text: string) =>
  "data:image/svg+xml," + encodeURIComponent(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20"><text x="0" y="15" ` +
      `font-family="sans-serif" font-size="14" fill="#227a88">${text}</text></svg>`,
  );
const REDOCLY_LOGOS: Record<string, string> = {
  "https://cdn.redoc.ly/redoc/logo-mini-full.svg": logo(64, "Redocly"),
  "https://cdn.redoc.ly/redoc/logo-mini.svg": logo(20, "R"),
};

if (import.meta.main) {
  await Deno.mkdir(EVENTS_DIR, { recursive: true });
  for await (const e of Deno.readDir(EVENTS_DIR)) {
    if (e.name.endsWith(".md")) await Deno.remove(new URL(e.name, EVENTS_DIR));
  }
  for (const [name, text] of eventFiles()) await Deno.writeTextFile(new URL(name, EVENTS_DIR), text);
  console.log(`wrote ${EVENTS_DIR.pathname}`);
  await Deno.writeTextFile(CHANGELOG, withChangelogEvents(await Deno.readTextFile(CHANGELOG)));
  console.log(`wrote the event types of ${CHANGELOG.pathname}`);
  const guide = await Deno.readTextFile(OPERATIONS_GUIDE);
  await Deno.writeTextFile(OPERATIONS_GUIDE, withCronJobs(guide, await migrationCronJobs()));
  console.log(`wrote the scheduled jobs of ${OPERATIONS_GUIDE.pathname}`);
  await Deno.mkdir(new URL(".", API_REFERENCE), { recursive: true });
  await renderApiReference(API_REFERENCE);
  console.log(`wrote ${API_REFERENCE.pathname}`);
}
