// Writes the documentation that is generated, so it cannot drift from what it documents: the event list
// in docs/outbound-webhooks.md (from the event catalogue) and the rendered API reference,
// docs/api/index.html (from docs/webhooks-openapi.json, by Redocly's CLI pinned in package.json). A test
// fails when either committed file differs from what this makes now.
//   npm run docs
import { EVENT_CATALOGUE } from "../supabase/functions/webhooks/catalogue.ts";

export const OUTBOUND_GUIDE = new URL("../docs/outbound-webhooks.md", import.meta.url);
export const API_REFERENCE = new URL("../docs/api/index.html", import.meta.url);
const OPENAPI = new URL("../docs/webhooks-openapi.json", import.meta.url);
// Our page template: the stock one plus a Content-Security-Policy, so the page fetches nothing.
const TEMPLATE = new URL("./docs/api-reference.hbs", import.meta.url);
const REDOCLY = new URL("../node_modules/@redocly/cli/bin/cli.js", import.meta.url);

const EVENTS_BLOCK = /<!-- events:start -->\n[\s\S]*?<!-- events:end -->/;

/** The Markdown between the markers: a table of the events, then each one's example body. */
export function eventsMarkdown(): string {
  const rows = Object.entries(EVENT_CATALOGUE).map(([type, e]) => `| \`${type}\` | ${e.description} |`);
  const examples = Object.entries(EVENT_CATALOGUE).map(([type, e]) =>
    [`### \`${type}\``, "", "```json", JSON.stringify(e.example, null, 2), "```"].join("\n")
  );
  return [
    "<!-- events:start -->",
    "<!-- Generated from supabase/functions/webhooks/catalogue.ts by `npm run docs`: edit the catalogue, not this. -->",
    "",
    "| event | what happened |",
    "|---|---|",
    ...rows,
    "",
    examples.join("\n\n"),
    "<!-- events:end -->",
  ].join("\n");
}

/** The guide's text with the event list written from the catalogue. */
export function withEvents(guide: string): string {
  if (!EVENTS_BLOCK.test(guide)) throw new Error("docs/outbound-webhooks.md has no events:start/end block");
  return guide.replace(EVENTS_BLOCK, () => eventsMarkdown());
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
  await Deno.writeTextFile(OUTBOUND_GUIDE, withEvents(await Deno.readTextFile(OUTBOUND_GUIDE)));
  console.log(`wrote ${OUTBOUND_GUIDE.pathname}`);
  await Deno.mkdir(new URL(".", API_REFERENCE), { recursive: true });
  await renderApiReference(API_REFERENCE);
  console.log(`wrote ${API_REFERENCE.pathname}`);
}
