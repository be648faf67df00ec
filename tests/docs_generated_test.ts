// The generated parts of the documentation must be what their generators make now, so they cannot drift
// from what they document: the event catalogue's pages in docs/events/ (an index and a page per event
// type, from supabase/functions/webhooks/catalogue.ts), and the event types CHANGELOG.md's release lists.
import { assert, assertEquals } from "./helpers/assert.ts";
import { CHANGELOG, eventFiles, EVENTS_DIR, withChangelogEvents } from "../scripts/gen-docs.ts";
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

Deno.test("CHANGELOG.md's release names every event type of the catalogue, as `npm run docs` writes it", async () => {
  const committed = await Deno.readTextFile(CHANGELOG);
  assertEquals(committed, withChangelogEvents(committed), "CHANGELOG.md's event list is stale: npm run docs");
  const listed = committed.match(/<!-- events:start -->(.*?)<!-- events:end -->/)![1]!;
  for (const type of EVENT_TYPES) assert(listed.includes(`\`${type}\``), `CHANGELOG.md names ${type}`);
  // The list a hand once kept: 6 of the 8 types.
  const stale = committed.replace(
    /<!-- events:start -->.*?<!-- events:end -->/,
    "<!-- events:start -->" +
      "`member.created`, `member.lost`, `donation.recorded`, `attendance.marked`, `workflow.completed` and " +
      "`webhook.endpoint.disabled`<!-- events:end -->",
  );
  assert(stale !== withChangelogEvents(stale), "the check tells a stale list");
});
