// The events feed (GET /webhooks/events): the body and webhook-id a delivery carries, filters, a cursor
// that walks every event exactly once while thousands commit concurrently in any order, the long poll
// and its bound, expired cursors, and other organizations' events never shown.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { createEndpoint, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { encodeFeedCursor } from "../supabase/functions/webhooks/feed.ts";
import { MAX_WAITING_PER_ORGANIZATION } from "../supabase/functions/webhooks/routes/events.ts";

const api = await startWebhooksApi();

async function tenantWithKey() {
  const t = await createTenant();
  const admin = asBearer(await tokenFor(t.admin, t.organizationId));
  const key = (await call(api.base, "POST", "/api-keys", admin, { name: "Poller" })).data.key as string;
  return { ...t, adminUser: t.admin, admin, key: { "x-api-key": key } };
}

/** Every event forward from `cursor` until a page comes back empty; returns the ids and the last cursor. */
async function walk(headers: Record<string, string>, cursor: string, query = "") {
  const ids: string[] = [];
  for (;;) {
    const page = await call(api.base, "GET", `/events?after=${cursor}&limit=100${query}`, headers);
    assertEquals(page.status, 200, page.text);
    ids.push(...page.data.data.map((e: { id: string }) => e.id));
    cursor = page.data.next_cursor;
    if (!page.data.has_more) return { ids, cursor };
  }
}

Deno.test("events feed: the body and webhook-id a delivery carries; newest first, filters, one event; API key and token", async () => {
  const a = await tenantWithKey();
  const receiver = await startReceiver();
  const ep = await createEndpoint(a.organizationId, `${receiver.url}/hook`, [
    "member.created",
    "donation.recorded",
  ]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${a.organizationId}, 'Feed')`;
    const [member] = await sql()`select id from public.members where organization_id = ${a.organizationId}`;
    await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency)
                values (${a.organizationId}, ${member!.id}, 2500, 'USD')`;
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(receiver.requests.length, 2);

    for (const who of [a.admin, a.key]) {
      const list = await call(api.base, "GET", "/events", who);
      assertEquals(list.status, 200, list.text);
      assertEquals(list.data.data.map((e: { type: string }) => e.type), [
        "donation.recorded",
        "member.created",
      ]);
      for (const event of list.data.data) {
        const sent = receiver.requests.find((r) => r.headers.get("webhook-id") === event.webhook_id)!;
        assert(sent, `a delivery carried webhook-id ${event.webhook_id}`);
        assertEquals(event.id, event.webhook_id);
        assertEquals(event.payload, JSON.parse(sent.text), "the same body");
        const one = await call(api.base, "GET", `/events/${event.id}`, who);
        assertEquals([one.status, one.data.payload], [200, event.payload]);
      }
      const byType = await call(api.base, "GET", "/events?event_type=member.created", who);
      assertEquals(byType.data.data.map((e: { type: string }) => e.type), ["member.created"]);
      const future = await call(
        api.base,
        "GET",
        `/events?since=${new Date(Date.now() + 60_000).toISOString()}`,
        who,
      );
      assertEquals(future.data.data, []);
      const paged = await call(api.base, "GET", "/events?limit=1", who);
      assertEquals([paged.data.data.length, paged.data.has_more], [1, true]);
      const older = await call(api.base, "GET", `/events?limit=1&before=${paged.data.older_cursor}`, who);
      assertEquals(older.data.data[0].type, "member.created");
      assertEquals(older.data.older_cursor, null);
    }
    const [{ webhook_id }] = (await call(api.base, "GET", "/events?limit=1", a.key)).data.data;
    const res = await fetch(`${api.base}/events/${webhook_id}`, { headers: a.key });
    assertEquals(res.headers.get("webhook-id"), webhook_id);
    await res.body?.cancel();

    // A test event is not part of the feed.
    const test = await call(api.base, "POST", `/endpoints/${ep.id}/test`, a.admin, {});
    assertEquals(test.status, 202, test.text);
    const after = await call(api.base, "GET", "/events", a.admin);
    assertEquals(after.data.data.length, 2);
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("events feed tenancy: another organization's admin and API key never see A's events", async () => {
  const a = await tenantWithKey();
  const b = await tenantWithKey();
  const ep = await createEndpoint(a.organizationId, "https://hooks.example.org/a", ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${a.organizationId}, 'Secret A')`;
    const [eventA] =
      await sql()`select id from public.webhook_events where organization_id = ${a.organizationId}`;
    const bHeadToken = asBearer(await tokenFor(b.adminUser, a.organizationId)); // B's admin claiming A
    for (const who of [b.admin, b.key, bHeadToken]) {
      const list = await call(api.base, "GET", "/events", who);
      assert(!list.text.includes("Secret A") && !list.text.includes(eventA!.id), list.text);
      const one = await call(api.base, "GET", `/events/${eventA!.id}`, who);
      assert([403, 404].includes(one.status), one.text);
      assert(!one.text.includes("Secret A"));
    }
    const staff = asBearer(await tokenFor(a.staff, a.organizationId));
    assertEquals((await call(api.base, "GET", "/events", staff)).status, 403);
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("events feed cursor: walks every event exactly once while 5,000 members are inserted concurrently", async () => {
  const a = await tenantWithKey();
  const ep = await createEndpoint(a.organizationId, "https://hooks.example.org/walk", ["member.created"]);
  const writers = createSql(testDbUrl(), { max: 24 });
  try {
    const head = await call(api.base, "GET", "/events?limit=1", a.key);
    let cursor = head.data.next_cursor as string;
    const seen: string[] = [];
    let writing = true;
    // 24 writers, 5,000 transactions of one member each. Each holds its transaction open for a random
    // while after the insert, so transactions commit in another order than they started (and wrote).
    let next = 0;
    const write = async () => {
      while (next < 5000) {
        const i = next++;
        await writers.begin(async (tx) => {
          await tx`insert into public.members (organization_id, first_name) values (${a.organizationId}, ${
            "w" + i
          })`;
          if (i % 7 === 0) await tx`select pg_sleep(${Math.random() * 0.05})`;
        });
      }
    };
    const done = Promise.all(Array.from({ length: 24 }, write)).finally(() => writing = false);
    while (writing) {
      const w = await walk(a.key, cursor);
      seen.push(...w.ids);
      cursor = w.cursor;
    }
    await done;
    const rest = await walk(a.key, cursor);
    seen.push(...rest.ids);
    const events = await sql()<{ id: string }[]>`
      select id from public.webhook_events where organization_id = ${a.organizationId}`;
    assertEquals(events.length, 5000);
    assertEquals(new Set(seen).size, seen.length, "no event twice");
    assertEquals(seen.length, 5000, "every event");
    assertEquals(new Set(seen), new Set(events.map((e) => e.id)));
  } finally {
    await writers.end();
    await retireEndpoints(ep.id);
  }
});

Deno.test("events feed long poll: answers within 1 s of a new event, empty after the wait, bounded per organization", async () => {
  const a = await tenantWithKey();
  const ep = await createEndpoint(a.organizationId, "https://hooks.example.org/poll", ["member.created"]);
  try {
    const head = (await call(api.base, "GET", "/events", a.key)).data.next_cursor;
    // Empty after the wait.
    const t0 = Date.now();
    const empty = await call(api.base, "GET", `/events?after=${head}&wait=1`, a.key);
    assertEquals([empty.status, empty.data.data], [200, []]);
    assert(Date.now() - t0 >= 950, "waited");

    const waiting = call(api.base, "GET", `/events?after=${head}&wait=25`, a.key);
    await new Promise((r) => setTimeout(r, 1500));
    await sql()`insert into public.members (organization_id, first_name) values (${a.organizationId}, 'Late')`;
    const committed = Date.now();
    const got = await waiting;
    const latency = Date.now() - committed;
    assertEquals(
      got.data.data.map((e: { payload: { data: { row: { first_name: string } } } }) =>
        e.payload.data.row.first_name
      ),
      ["Late"],
    );
    assert(latency < 1000, `answered ${latency} ms after the commit`);

    // The bound: MAX_WAITING_PER_ORGANIZATION wait; one more is 429; another organization is unaffected.
    const cursor = got.data.next_cursor;
    const holders = Array.from(
      { length: MAX_WAITING_PER_ORGANIZATION },
      () => call(api.base, "GET", `/events?after=${cursor}&wait=3`, a.key),
    );
    await new Promise((r) => setTimeout(r, 700));
    const refused = await call(api.base, "GET", `/events?after=${cursor}&wait=3`, a.admin);
    assertEquals([refused.status, refused.data.error.code], [429, "too_many_waiting"]);
    const b = await tenantWithKey();
    const bHead = (await call(api.base, "GET", "/events", b.key)).data.next_cursor;
    assertEquals((await call(api.base, "GET", `/events?after=${bHead}&wait=1`, b.key)).status, 200);
    assert((await Promise.all(holders)).every((r) => r.status === 200));
    const again = await call(api.base, "GET", `/events?after=${cursor}&wait=1`, a.key);
    assertEquals(again.status, 200, "the waiting slots are given back");
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("events feed input: expired cursor 410, tampered cursor and unknown type 400", async () => {
  const a = await tenantWithKey();
  const old = encodeFeedCursor({
    xid: "1",
    id: crypto.randomUUID(),
    at: Math.floor(Date.now() / 1000) - 31 * 86400,
  });
  const gone = await call(api.base, "GET", `/events?after=${old}`, a.key);
  assertEquals([gone.status, gone.data.error.code, gone.data.error.details.retention_days], [
    410,
    "cursor_expired",
    30,
  ]);
  for (
    const [query, field] of [
      ["after=garbage", "after"],
      ["before=WyJmMSIsIngiXQ", "before"],
      ["event_type=member.exploded", "event_type"],
      ["wait=5", "wait"],
      [`after=${old}&before=${old}`, "before"],
      ["wait=26&after=x", "wait"],
      ["limit=101", "limit"],
    ]
  ) {
    const res = await call(api.base, "GET", `/events?${query}`, a.key);
    assertEquals(res.status, 400, `${query}: ${res.text}`);
    assertEquals(res.data.error.details.fields[0].field, field, query);
  }
  assertEquals((await call(api.base, "GET", `/events/${crypto.randomUUID()}`, a.key)).status, 404);
});

Deno.test("events feed cleanup", async () => {
  await api.close();
  await closeSql();
});
