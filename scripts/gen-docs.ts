// Writes the documentation that is generated, so it cannot drift from what it documents: the event list
// in docs/outbound-webhooks.md (from the event catalogue). A test fails when the committed file differs.
//   npm run docs
import { EVENT_CATALOGUE } from "../supabase/functions/webhooks/catalogue.ts";

export const OUTBOUND_GUIDE = new URL("../docs/outbound-webhooks.md", import.meta.url);

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

if (import.meta.main) {
  await Deno.writeTextFile(OUTBOUND_GUIDE, withEvents(await Deno.readTextFile(OUTBOUND_GUIDE)));
  console.log(`wrote ${OUTBOUND_GUIDE.pathname}`);
}
