// The generated parts of the documentation must be what their generators make now, so they cannot drift
// from what they document: the event list in docs/outbound-webhooks.md (from the event catalogue).
import { assert, assertEquals } from "./helpers/assert.ts";
import { eventsMarkdown, OUTBOUND_GUIDE, withEvents } from "../scripts/gen-docs.ts";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";

Deno.test("the event list in docs/outbound-webhooks.md is the catalogue's (run `npm run docs` after changing it)", async () => {
  const guide = await Deno.readTextFile(OUTBOUND_GUIDE);
  assertEquals(guide, withEvents(guide));
});

Deno.test("the generated event list names every catalogued event with its description and example", () => {
  const block = eventsMarkdown();
  for (const type of EVENT_TYPES) {
    assert(block.includes(`| \`${type}\` | ${EVENT_CATALOGUE[type].description} |`), type);
    assert(block.includes(JSON.stringify(EVENT_CATALOGUE[type].example, null, 2)), `${type} example`);
  }
});
