// The generated parts of the documentation must be what their generators make now, so they cannot drift
// from what they document: the event catalogue's pages in docs/events/ (an index and a page per event
// type, from supabase/functions/webhooks/catalogue.ts).
import { assert, assertEquals } from "./helpers/assert.ts";
import { eventFiles, EVENTS_DIR } from "../scripts/gen-docs.ts";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";

Deno.test("docs/events/ holds exactly the catalogue's pages, as `npm run docs` writes them now", async () => {
  const expected = eventFiles();
  const committed = new Map<string, string>();
  for await (const e of Deno.readDir(EVENTS_DIR)) {
    committed.set(e.name, await Deno.readTextFile(new URL(e.name, EVENTS_DIR)));
  }
  assertEquals([...committed.keys()].sort(), [...expected.keys()].sort(), "one page per event type");
  for (const [name, text] of expected) {
    assertEquals(committed.get(name), text, `docs/events/${name} is stale`);
  }
});

Deno.test("each event's page has its description, when it fires, every field of its row and its example", () => {
  const files = eventFiles();
  for (const type of EVENT_TYPES) {
    const page = files.get(`${type}.md`)!;
    const e = EVENT_CATALOGUE[type];
    assert(page.includes(e.description) && page.includes(e.fires), type);
    for (const field of Object.keys(e.example.data.row)) assert(page.includes(`| \`${field}\` |`), field);
    assert(page.includes(JSON.stringify(e.example, null, 2)), `${type} example`);
    assert(files.get("README.md")!.includes(`[\`${type}\`](${type}.md)`), `the index links ${type}`);
  }
});
