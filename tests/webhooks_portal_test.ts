// What the best webhook portals offer, through the configuration API: find a message by its webhook-id or
// delivery id, an attempt's headers, a test delivery of any event type with its example body, an
// endpoint's activity per hour, and an organization's own signing secret when rotating.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { testEngine } from "./helpers/outbound.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";
import { EVENT_CATALOGUE } from "../supabase/functions/webhooks/catalogue.ts";
import { hourlyActivity, percentile } from "../supabase/functions/webhooks/activity.ts";

const drain = () => testEngine().run({ stopWhenIdle: true });

async function setup() {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const receiver = await startReceiver();
  const a = await createTenant();
  const admin = asBearer(await tokenFor(a.admin, a.organizationId));
  const created = await call(api.base, "POST", "/endpoints", admin, {
    url: `${receiver.url}/hook`,
    events: ["member.created"],
  });
  assertEquals(created.status, 201, created.text);
  return {
    api,
    receiver,
    tenant: a,
    admin,
    endpoint: created.data as { id: string; secret: string },
    close: async () => {
      await receiver.close();
      await api.close();
    },
  };
}

Deno.test("q finds one message by its webhook-id (event id) or delivery id, within the organization only", async () => {
  const t = await setup();
  try {
    const other = await createTenant();
    const otherAdmin = asBearer(await tokenFor(other.admin, other.organizationId));
    for (const name of ["One", "Two", "Three"]) {
      await sql()`insert into public.members (organization_id, first_name) values (${t.tenant.organizationId}, ${name})`;
    }
    await drain();
    const all = await call(t.api.base, "GET", "/deliveries", t.admin);
    assertEquals(all.data.data.length, 3);
    const target = all.data.data[1];
    const webhookId = t.receiver.requests.find((r) => r.headers.get("webhook-id") === target.event_id)!
      .headers.get("webhook-id")!;

    const byWebhookId = await call(t.api.base, "GET", `/deliveries?q=${webhookId}`, t.admin);
    assertEquals(byWebhookId.data.data.map((d: { id: string }) => d.id), [target.id]);
    const byDeliveryId = await call(t.api.base, "GET", `/deliveries?q=${target.id}`, t.admin);
    assertEquals(byDeliveryId.data.data.map((d: { id: string }) => d.id), [target.id]);
    // Combined with a filter it still narrows; another organization finds nothing.
    const filtered = await call(t.api.base, "GET", `/deliveries?q=${target.id}&status=retrying`, t.admin);
    assertEquals(filtered.data.data, []);
    const elsewhere = await call(t.api.base, "GET", `/deliveries?q=${target.id}`, otherAdmin);
    assertEquals([elsewhere.status, elsewhere.data.data], [200, []]);

    const bad = await call(t.api.base, "GET", "/deliveries?q=not-an-id", t.admin);
    assertEquals(bad.status, 400);
    assertEquals(bad.data.error.details.fields[0].field, "q");
    assertMatch(bad.data.error.details.fields[0].message, /webhook-id/);
  } finally {
    await t.close();
  }
});

Deno.test("an attempt's detail has the headers we sent (signature masked) and the ones we got", async () => {
  const t = await setup();
  try {
    t.receiver.respond(() => new Response("ok", { headers: { "x-request-id": "rcv-42" } }));
    await sql()`insert into public.members (organization_id, first_name) values (${t.tenant.organizationId}, 'H')`;
    await drain();
    const [req] = await t.receiver.waitFor(1);
    const list = await call(t.api.base, "GET", "/deliveries", t.admin);
    const detail = await call(t.api.base, "GET", `/deliveries/${list.data.data[0].id}`, t.admin);
    const [attempt] = detail.data.attempts;
    assertEquals(attempt.request_headers["webhook-id"], req!.headers.get("webhook-id"));
    assertEquals(
      attempt.request_headers["x-webhook-signature"],
      `${req!.headers.get("x-webhook-signature")!.slice(0, 8)}…`,
    );
    assert(!detail.text.includes(req!.headers.get("x-webhook-signature")!), "no whole signature in the API");
    assertEquals(attempt.response_headers["x-request-id"], "rcv-42");
  } finally {
    await t.close();
  }
});

Deno.test("a test delivery of any event type carries its example body, marked test, to that endpoint only", async () => {
  const t = await setup();
  try {
    // An endpoint subscribed to member.created only can still be sent a donation.recorded example.
    const sent = await call(t.api.base, "POST", `/endpoints/${t.endpoint.id}/test`, t.admin, {
      event_type: "donation.recorded",
    });
    assertEquals(sent.status, 202, sent.text);
    await drain();
    const [req] = await t.receiver.waitFor(1);
    assertEquals(req!.headers.get("x-webhook-event"), "donation.recorded");
    assertEquals(req!.headers.get("webhook-id"), sent.data.event_id);
    assertEquals(req!.headers.get("x-webhook-signature"), await hmacSha256Hex(t.endpoint.secret, req!.body));
    const body = JSON.parse(req!.text);
    const example = EVENT_CATALOGUE["donation.recorded"].example;
    assertEquals(body.test, true, "the receiver can tell a test");
    assertEquals([body.id, body.type, body.organization_id], [
      sent.data.event_id,
      "donation.recorded",
      t.tenant.organizationId,
    ]);
    assertEquals(body.data.row.organization_id, t.tenant.organizationId);
    assertEquals(body.data.row.amount_minor, example.data.row.amount_minor);
    assertEquals(Object.keys(body.data.row).sort(), Object.keys(example.data.row).sort());

    // No body: webhook.test, as before, marked too.
    const ping = await call(t.api.base, "POST", `/endpoints/${t.endpoint.id}/test`, t.admin);
    assertEquals(ping.status, 202, ping.text);
    await drain();
    const [, second] = await t.receiver.waitFor(2);
    assertEquals([JSON.parse(second!.text).type, JSON.parse(second!.text).test], ["webhook.test", true]);

    const unknown = await call(t.api.base, "POST", `/endpoints/${t.endpoint.id}/test`, t.admin, {
      event_type: "member.deleted",
    });
    assertEquals([unknown.status, unknown.data.error.details.fields[0].field], [400, "event_type"]);

    // Samples for automation platforms are real events only.
    const samples = await call(t.api.base, "GET", "/samples/donation.recorded", t.admin);
    assertEquals(samples.data, [example]);
  } finally {
    await t.close();
  }
});

Deno.test("rotating to the organization's own secret: the strength rule is enforced, then it signs", async () => {
  const t = await setup();
  try {
    const weak = await call(t.api.base, "POST", `/endpoints/${t.endpoint.id}/rotate-secret`, t.admin, {
      secret: "aaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    });
    assertEquals(weak.status, 400);
    assertEquals(weak.data.error.details.fields[0].field, "secret");
    assertMatch(weak.data.error.details.fields[0].message, /24 to 256 printable characters/);
    const own = "our-church-webhook-secret-2026";
    const rotated = await call(t.api.base, "POST", `/endpoints/${t.endpoint.id}/rotate-secret`, t.admin, {
      secret: own,
      grace_seconds: 0,
    });
    assertEquals([rotated.status, rotated.data.secret], [200, own]);
    await sql()`insert into public.members (organization_id, first_name) values (${t.tenant.organizationId}, 'S')`;
    await drain();
    const [req] = await t.receiver.waitFor(1);
    assertEquals(req!.headers.get("x-webhook-signature"), await hmacSha256Hex(own, req!.body));
  } finally {
    await t.close();
  }
});

Deno.test("activity: one point per hour for 24 hours or 7 days, delivered and failed, percentiles", async () => {
  const t = await setup();
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${t.tenant.organizationId}, 'A')`;
    await drain();
    t.receiver.respond(() => new Response("down", { status: 500 }));
    await sql()`insert into public.members (organization_id, first_name) values (${t.tenant.organizationId}, 'B')`;
    await drain();
    // Three days ago, as the buckets would hold it: in the week, not in the day.
    await sql()`insert into public.webhook_endpoint_health_buckets (endpoint_id, bucket_start, organization_id,
                  attempts, delivered, timed, duration_ms_sum, duration_histogram)
                values (${t.endpoint.id}, date_bin('10 minutes', now() - interval '3 days', timestamptz '2000-01-01'),
                        ${t.tenant.organizationId}, 4, 4, 4, 4000,
                        private.webhook_duration_histogram('{900,950,1000,1100}'))`;

    const day = await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity`, t.admin);
    assertEquals(day.status, 200, day.text);
    assertEquals([day.data.window, day.data.bucket_seconds, day.data.points.length], ["24h", 3600, 24]);
    assertEquals([day.data.totals.delivered, day.data.totals.failed], [1, 1]);
    const last = day.data.points.at(-1);
    assertEquals([last.delivered, last.failed], [1, 1]);
    assert(last.p50_ms !== null && last.p50_ms < 1000, JSON.stringify(last));
    // Its window is said (the first point's start, and when it was read), with the latest attempt read in
    // the same snapshot.
    assertEquals(day.data.from, day.data.points[0].start);
    assert(Math.abs(Date.parse(day.data.as_of) - Date.now()) < 60_000, day.data.as_of);
    assertEquals(
      [
        day.data.latest.last_outcome,
        day.data.latest.last_response_status,
        day.data.latest.consecutive_failures,
      ],
      ["failed", 500, 1],
    );

    // Attempts in the last 24 hours but before the chart's first hour: the endpoint's health leaves them
    // out too, so the tiles and the chart on a card say the same numbers.
    await sql()`insert into public.webhook_endpoint_health_buckets (endpoint_id, bucket_start, organization_id,
                  attempts, delivered)
                values (${t.endpoint.id}, date_trunc('hour', now()) - interval '23 hours' - interval '1 microsecond',
                        ${t.tenant.organizationId}, 3, 0)`;
    const again = await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity`, t.admin);
    const listed = await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}`, t.admin);
    assertEquals([again.data.totals.delivered, again.data.totals.failed], [1, 1]);
    assertEquals([listed.data.health.attempts_24h, listed.data.health.success_rate_24h], [2, 0.5]);
    assertEquals(
      again.data.latest,
      Object.fromEntries(Object.keys(again.data.latest).map((k) => [k, listed.data.health[k]])),
      "the latest attempt as the endpoint's health says it",
    );

    const week = await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity?window=7d`, t.admin);
    assertEquals(week.data.points.length, 168);
    // The week: the day's two, the three just before its first hour, and the four of three days ago.
    assertEquals([week.data.totals.delivered, week.data.totals.failed], [5, 4]);
    assert(week.data.totals.p95_ms >= 750, JSON.stringify(week.data.totals));
    // The same week in 6-hour points: the same attempts, fewer and wider points.
    const wide = await call(
      t.api.base,
      "GET",
      `/endpoints/${t.endpoint.id}/activity?window=7d&bucket=6h`,
      t.admin,
    );
    assertEquals([wide.data.bucket_seconds, wide.data.points.length], [21600, 28]);
    assertEquals(wide.data.totals, week.data.totals);
    const sum = (ps: { delivered: number; failed: number }[]) =>
      ps.reduce((a, p) => [a[0]! + p.delivered, a[1]! + p.failed], [0, 0]);
    assertEquals(sum(wide.data.points), [5, 4]);
    assertEquals(
      (await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity?window=7d&bucket=2h`, t.admin))
        .status,
      400,
    );

    const other = await createTenant();
    const otherAdmin = asBearer(await tokenFor(other.admin, other.organizationId));
    assertEquals(
      (await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity`, otherAdmin)).status,
      404,
    );
    assertEquals(
      (await call(t.api.base, "GET", `/endpoints/${t.endpoint.id}/activity?window=1y`, t.admin)).status,
      400,
    );
  } finally {
    await t.close();
  }
});

Deno.test("percentiles from a histogram: the bin holding the rank, a straight line across it", () => {
  const bounds = [10, 20, 50];
  // 10 attempts: 5 under 10 ms, 4 in 20-50 ms, 1 at or past 50 ms.
  const h = [5, 0, 4, 1];
  assertEquals(percentile(h, bounds, 0.5), 10);
  assertEquals(percentile(h, bounds, 0.9), 50);
  assertEquals(percentile(h, bounds, 0.95), 50, "the last bin answers its lower bound");
  assertEquals(percentile([0, 0, 0, 0], bounds, 0.5), null);
  const now = Date.parse("2026-11-22T10:30:00Z");
  const { points } = hourlyActivity(
    [{ bucket_start: "2026-11-22T10:10:00Z", attempts: 3, delivered: 2, duration_histogram: [3] }],
    bounds,
    "24h",
    now,
  );
  assertEquals(points.length, 24);
  assertEquals(points[0]!.start, "2026-11-21T11:00:00.000Z");
  assertEquals(points.at(-1), {
    start: "2026-11-22T10:00:00.000Z",
    delivered: 2,
    failed: 1,
    p50_ms: 7,
    p95_ms: 10,
  });
  // Six hours in one point: its percentiles come from the hours' histograms added up (a fast hour and a
  // slow hour make a median neither hour's median would give).
  const wide = hourlyActivity(
    [
      { bucket_start: "2026-11-22T05:10:00Z", attempts: 3, delivered: 3, duration_histogram: [3] },
      { bucket_start: "2026-11-22T09:10:00Z", attempts: 3, delivered: 3, duration_histogram: [0, 0, 3] },
      { bucket_start: "2026-11-22T03:50:00Z", attempts: 1, delivered: 0, duration_histogram: [] },
    ],
    bounds,
    "7d",
    now,
    "6h",
  ).points;
  assertEquals(wide.length, 28);
  assertEquals(wide.at(-1), {
    start: "2026-11-22T05:00:00.000Z",
    delivered: 6,
    failed: 0,
    p50_ms: 10,
    p95_ms: 50,
  });
  assertEquals([wide.at(-2)!.start, wide.at(-2)!.failed], ["2026-11-21T23:00:00.000Z", 1]);
});

Deno.test("the endpoint list says which URLs this deployment accepts", async () => {
  const t = await setup();
  const strict = await startWebhooksApi();
  try {
    assertEquals((await call(t.api.base, "GET", "/endpoints", t.admin)).data.target_policy, "development");
    assertEquals((await call(strict.base, "GET", "/endpoints", t.admin)).data.target_policy, "public_https");
  } finally {
    await strict.close();
    await t.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
