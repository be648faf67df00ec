// Settings area, third round, through the configuration API: recover failed deliveries in a window with
// a preview count and a recovery id that lists them in Webhook Logs; test deliveries tagged and
// filtered (tests=include|exclude|only); search by what a body contains, within one organization; and
// the failure alerts' thresholds and endpoints for the cards.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { retireEndpoints } from "./helpers/outbound.ts";

const start = () => startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
const days = (n: number) => new Date(Date.now() - n * 86400_000).toISOString();

/** Events and deliveries of one endpoint as the dispatcher would have left them, `ageDays` old each. */
async function failed(
  organizationId: string,
  endpointId: string,
  rows: { type: string; ageDays: number; body?: unknown }[],
) {
  for (const r of rows) {
    const [ev] = await sql()<{ id: string }[]>`
      insert into public.webhook_events (organization_id, type, payload, created_at)
      values (${organizationId}, ${r.type}, ${sql().json((r.body ?? { n: r.ageDays }) as never)},
              now() - make_interval(days => ${r.ageDays}))
      returning id`;
    await sql()`insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, attempt_count,
                  next_attempt_at, created_at)
                values (${organizationId}, ${ev!.id}, ${endpointId}, 'permanently_failed', 5, null,
                        now() - make_interval(days => ${r.ageDays}))`;
  }
}

/**
 * The search keys the batch job (webhook-search-index) would have written when these back-dated events
 * were recorded: it indexes deliveries as they are recorded, so it never goes back to them itself.
 */
async function indexedAsRecorded(organizationIds: string[]) {
  await sql()`
    insert into private.webhook_event_search (event_id, organization_id, keys)
    select e.id, e.organization_id,
           private.webhook_body_trigrams(e.organization_id, left(e.payload::text, private.webhook_search_max_chars()))
    from public.webhook_events e where e.organization_id = any (${organizationIds}::uuid[])
    on conflict (event_id) do nothing`;
}

/** A church whose admin calls, and another church's admin: the one a tenancy check tries. */
async function twoChurches() {
  const t = await createTenant();
  const other = await createTenant();
  const admin = asBearer(await tokenFor(t.admin, t.organizationId));
  const otherAdmin = asBearer(await tokenFor(other.admin, other.organizationId));
  return { t, other, admin, otherAdmin };
}

/** An endpoint made through the API by `bearer`, as an admin on the page would. */
async function addEndpoint(
  base: string,
  bearer: ReturnType<typeof asBearer>,
  url: string,
  events: string[],
) {
  return (await call(base, "POST", "/endpoints", bearer, { url, events })).data;
}

Deno.test("recover: a preview count, then exactly those deliveries, listed by their recovery id", async () => {
  const api = await start();
  const { t, admin, otherAdmin } = await twoChurches();
  const ep = await addEndpoint(api.base, admin, "http://127.0.0.1:9/hook", [
    "member.created",
    "donation.recorded",
  ]);
  try {
    await failed(t.organizationId, ep.id, [
      { type: "member.created", ageDays: 1 },
      { type: "donation.recorded", ageDays: 2 },
      { type: "member.created", ageDays: 3 },
      { type: "donation.recorded", ageDays: 4 },
    ]);
    const window = `since=${encodeURIComponent(days(3.5))}&until=${encodeURIComponent(days(1.5))}`;
    const preview = await call(api.base, "GET", `/endpoints/${ep.id}/recover/preview?${window}`, admin);
    assertEquals(preview.status, 200, preview.text);
    assertEquals(preview.data, { count: 2, more: false });
    const typed = await call(
      api.base,
      "GET",
      `/endpoints/${ep.id}/recover/preview?${window}&event_type=donation.recorded`,
      admin,
    );
    assertEquals(typed.data, { count: 1, more: false });
    // Nothing was sent by asking.
    const [still] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_deliveries where endpoint_id = ${ep.id} and status = 'permanently_failed'`;
    assertEquals(still!.n, 4);

    // Another organization's admin learns nothing, not even that the endpoint exists.
    const theirs = await call(api.base, "GET", `/endpoints/${ep.id}/recover/preview?${window}`, otherAdmin);
    assertEquals(theirs.status, 404, theirs.text);
    // until before since is said, naming the field.
    const backwards = await call(api.base, "POST", `/endpoints/${ep.id}/recover`, admin, {
      since: days(1),
      until: days(2),
    });
    assertEquals(backwards.status, 400, backwards.text);
    assertMatch(backwards.text, /until must be after since/);

    const done = await call(api.base, "POST", `/endpoints/${ep.id}/recover`, admin, {
      since: days(3.5),
      until: days(1.5),
    });
    assertEquals(done.status, 202, done.text);
    assertEquals(done.data.recovered, 2);
    assertMatch(done.data.recovery_id, /^[0-9a-f-]{36}$/);
    const listed = await call(api.base, "GET", `/deliveries?recovery_id=${done.data.recovery_id}`, admin);
    assertEquals(listed.status, 200, listed.text);
    assertEquals(
      listed.data.data.map((d: { event_type: string; status: string; recovery_id: string }) => [
        d.event_type,
        d.status,
        d.recovery_id,
      ]),
      [["donation.recorded", "pending", done.data.recovery_id], [
        "member.created",
        "pending",
        done.data.recovery_id,
      ]],
    );
    // The same id in another organization lists nothing.
    const elsewhere = await call(
      api.base,
      "GET",
      `/deliveries?recovery_id=${done.data.recovery_id}`,
      otherAdmin,
    );
    assertEquals(elsewhere.data.data, []);
  } finally {
    await retireEndpoints(ep.id);
    await api.close();
  }
});

Deno.test("test deliveries are tagged; tests=exclude hides them, tests=only lists them alone", async () => {
  const api = await start();
  const t = await createTenant();
  const admin = asBearer(await tokenFor(t.admin, t.organizationId));
  const ep = await addEndpoint(api.base, admin, "http://127.0.0.1:9/hook", ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${t.organizationId}, 'Real')`;
    const sent = await call(api.base, "POST", `/endpoints/${ep.id}/test`, admin, {
      event_type: "member.created",
    });
    assertEquals(sent.status, 202, sent.text);
    const types = async (tests?: string) =>
      (await call(api.base, "GET", `/deliveries${tests ? `?tests=${tests}` : ""}`, admin)).data.data
        .map((d: { event_id: string; test: boolean }) => [d.event_id === sent.data.event_id, d.test]);
    assertEquals(await types(), [[true, true], [false, false]], "both, newest first, the test one tagged");
    assertEquals(await types("include"), [[true, true], [false, false]]);
    assertEquals(await types("exclude"), [[false, false]]);
    assertEquals(await types("only"), [[true, true]]);
    const bad = await call(api.base, "GET", "/deliveries?tests=maybe", admin);
    assertEquals(bad.status, 400, bad.text);
    assertMatch(bad.text, /tests/);
  } finally {
    await retireEndpoints(ep.id);
    await api.close();
  }
});

Deno.test("contains: deliveries whose body holds a value, any letter case, this organization's only", async () => {
  const api = await start();
  const { t, other, admin, otherAdmin } = await twoChurches();
  const ep = await addEndpoint(api.base, admin, "http://127.0.0.1:9/hook", ["member.created"]);
  const theirs = await addEndpoint(api.base, otherAdmin, "http://127.0.0.1:9/theirs", ["member.created"]);
  const mark = crypto.randomUUID().slice(0, 8);
  try {
    await failed(t.organizationId, ep.id, [
      { type: "member.created", ageDays: 1, body: { email: `grace.${mark}@example.org` } },
      { type: "member.created", ageDays: 2, body: { email: `ada.${mark}@example.org`, note: "50%_off" } },
      { type: "member.created", ageDays: 3, body: { email: "someone@example.org" } },
    ]);
    // The other organization holds the same address: it is never among the results here.
    await failed(other.organizationId, theirs.id, [
      { type: "member.created", ageDays: 1, body: { email: `grace.${mark}@example.org` } },
    ]);
    const found = async (text: string, who = admin) => {
      const r = await call(api.base, "GET", `/deliveries?contains=${encodeURIComponent(text)}`, who);
      assertEquals(r.status, 200, r.text);
      return r.data.data.map((d: { endpoint_id: string }) => d.endpoint_id === ep.id ? "ours" : "theirs");
    };
    assertEquals(await found(`GRACE.${mark}@EXAMPLE.ORG`), ["ours"], "any letter case, ours only");
    assertEquals(await found(mark), ["ours", "ours"]);
    assertEquals(await found(`grace.${mark}`, otherAdmin), ["theirs"]);
    // % and _ are themselves, not wildcards.
    assertEquals(await found("50%_off"), ["ours"]);
    assertEquals(await found("5%f"), []);
    // Too short to search is said, naming the field.
    const short = await call(api.base, "GET", "/deliveries?contains=ab", admin);
    assertEquals(short.status, 400, short.text);
    assertMatch(short.text, /at least 3 characters/);
    // With the other filters: only within what they keep.
    const filtered = await call(
      api.base,
      "GET",
      `/deliveries?contains=${mark}&since=${encodeURIComponent(days(1.5))}`,
      admin,
    );
    assertEquals(filtered.data.data.length, 1);

    // A text in more bodies than the index step collects (5,000): the listing walks the deliveries
    // newest first and checks each body, with the same answers and pages.
    const common = `common-${mark}`;
    for (const org of [t.organizationId, other.organizationId]) {
      const endpoint = org === t.organizationId ? ep.id : theirs.id;
      await sql()`
        with ev as (
          insert into public.webhook_events (organization_id, type, payload, created_at)
          select ${org}::uuid, 'member.created', jsonb_build_object('note', ${common}::text, 'n', g),
                 now() - interval '10 days' + make_interval(secs => g)
          from generate_series(1, 5100) g returning id, created_at)
        insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                               created_at)
        select ${org}::uuid, ev.id, ${endpoint}::uuid, 'delivered', null, ev.created_at from ev`;
    }
    await indexedAsRecorded([t.organizationId, other.organizationId]);
    const first = await call(api.base, "GET", `/deliveries?contains=${common}&limit=200`, admin);
    assertEquals(first.status, 200, first.text);
    assertEquals(first.data.data.length, 200);
    assert(first.data.data.every((d: { endpoint_id: string }) => d.endpoint_id === ep.id), "ours only");
    const second = await call(
      api.base,
      "GET",
      `/deliveries?contains=${common}&limit=200&cursor=${encodeURIComponent(first.data.next_cursor)}`,
      admin,
    );
    assertEquals(second.data.data.length, 200);
    const ids = new Set([...first.data.data, ...second.data.data].map((d: { id: string }) => d.id));
    assertEquals(ids.size, 400, "two pages, no delivery twice");
    // Newer deliveries without it, more than the first try checks one by one (2,000): the page comes
    // from the walk behind the index step, with the same answer.
    await sql()`
      with ev as (
        insert into public.webhook_events (organization_id, type, payload, created_at)
        select ${t.organizationId}::uuid, 'member.created', jsonb_build_object('n', g),
               now() - interval '5 days' + make_interval(secs => g)
        from generate_series(1, 2100) g returning id, created_at)
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                             created_at)
      select ${t.organizationId}::uuid, ev.id, ${ep.id}::uuid, 'delivered', null, ev.created_at from ev`;
    const behind = await call(api.base, "GET", `/deliveries?contains=${common}&limit=200`, admin);
    assertEquals(
      behind.data.data.map((d: { id: string }) => d.id),
      first.data.data.map((d: { id: string }) => d.id),
    );
  } finally {
    await retireEndpoints(ep.id, theirs.id);
    await api.close();
  }
});

Deno.test("alerts: the thresholds and the organization's alert endpoints; staff and others refused", async () => {
  const api = await start();
  const { t, admin, otherAdmin } = await twoChurches();
  const plain = await addEndpoint(api.base, admin, "http://127.0.0.1:9/crm", ["member.created"]);
  const alerting = await addEndpoint(api.base, admin, "http://127.0.0.1:9/alerts", [
    "webhook.endpoint.failing",
    "webhook.endpoint.recovered",
    "member.created",
  ]);
  const theirs = await addEndpoint(api.base, otherAdmin, "http://127.0.0.1:9/their-alerts", [
    "webhook.endpoint.failing",
  ]);
  try {
    const r = await call(api.base, "GET", "/alerts", admin);
    assertEquals(r.status, 200, r.text);
    assertEquals(r.data.failing_after_seconds, 3600);
    assertEquals(r.data.disable_after_seconds, 5 * 86400);
    assertEquals(r.data.mail_to_admins, true);
    assertEquals(r.data.endpoints, [{
      id: alerting.id,
      url: "http://127.0.0.1:9/alerts",
      enabled: true,
      events: ["webhook.endpoint.failing", "webhook.endpoint.recovered"],
    }]);
    assert(!r.text.includes(plain.id) && !r.text.includes(theirs.id));
    const staff = await call(api.base, "GET", "/alerts", asBearer(await tokenFor(t.staff, t.organizationId)));
    assertEquals(staff.status, 403, staff.text);
  } finally {
    await retireEndpoints(plain.id, alerting.id, theirs.id);
    await api.close();
  }
});

Deno.test("count: how many deliveries the listing's filters match, stopped at 10,000; staff refused, another church's never counted", async () => {
  const api = await start();
  const { t, other, admin, otherAdmin } = await twoChurches();
  const ep = await addEndpoint(api.base, admin, "http://127.0.0.1:9/hook", ["member.created"]);
  const theirs = await addEndpoint(api.base, otherAdmin, "http://127.0.0.1:9/theirs", ["member.created"]);
  const mark = crypto.randomUUID().slice(0, 8);
  try {
    await failed(t.organizationId, ep.id, [
      { type: "member.created", ageDays: 1, body: { email: `grace.${mark}@example.org` } },
      { type: "member.created", ageDays: 3, body: { email: "someone@example.org" } },
    ]);
    await failed(other.organizationId, theirs.id, [
      { type: "member.created", ageDays: 1, body: { email: `grace.${mark}@example.org` } },
    ]);
    await indexedAsRecorded([t.organizationId, other.organizationId]);
    const count = async (query: string, who = admin) => {
      const r = await call(api.base, "GET", `/deliveries/count${query}`, who);
      assertEquals(r.status, 200, r.text);
      return r.data;
    };
    assertEquals(await count(""), { count: 2, more: false });
    assertEquals(await count(`?since=${encodeURIComponent(days(2))}`), { count: 1, more: false });
    assertEquals(await count(`?endpoint_id=${ep.id}&status=delivered`), { count: 0, more: false });
    assertEquals(await count(`?contains=grace.${mark}`), { count: 1, more: false });
    assertEquals(await count("", otherAdmin), { count: 1, more: false }, "each church counts its own");
    assertEquals(await count(`?endpoint_id=${ep.id}`, otherAdmin), { count: 0, more: false });
    const staff = await call(
      api.base,
      "GET",
      "/deliveries/count",
      asBearer(await tokenFor(t.staff, t.organizationId)),
    );
    assertEquals(staff.status, 403, staff.text);
    const anonymous = await call(api.base, "GET", "/deliveries/count", {});
    assertEquals(anonymous.status, 401, anonymous.text);
    const bad = await call(api.base, "GET", "/deliveries/count?status=sent", admin);
    assertEquals(bad.status, 400, bad.text);

    // Past the cap the answer says "more than 10,000", having read no further.
    await sql()`
      with ev as (
        insert into public.webhook_events (organization_id, type, payload, created_at)
        select ${t.organizationId}, 'member.created', '{"n":1}', now() - interval '4 days'
        from generate_series(1, 10000)
        returning id)
      insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, attempt_count,
                                             next_attempt_at, created_at)
      select ${t.organizationId}, ev.id, ${ep.id}, 'delivered', 1, null, now() - interval '4 days' from ev`;
    assertEquals(await count(""), { count: 10_000, more: true });
    assertEquals(await count("?status=permanently_failed"), { count: 2, more: false });
  } finally {
    await retireEndpoints(ep.id, theirs.id);
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
