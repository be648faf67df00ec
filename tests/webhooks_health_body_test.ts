// What the settings page shows about an endpoint and a delivery: the endpoint's health (last result,
// failures in a row, 24-hour success rate) and the delivery's exact body, whose HMAC must equal the
// signature the receiver got.
import { assert, assertEquals, assertNotEquals } from "./helpers/assert.ts";
import { createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";

const drain = () => testEngine().run({ stopWhenIdle: true });

async function get(base: string, path: string, token: string) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  assertEquals(res.status, 200, text);
  return JSON.parse(text);
}

async function addMember(organizationId: string, first: string) {
  await sql()`insert into public.members (organization_id, first_name, last_name, primary_phone)
    values (${organizationId}, ${first}, 'Ångström', '+44 20 7946 0000')`;
}

Deno.test("delivery detail: body is the exact signed text, byte for byte", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const receiver = await startReceiver();
  try {
    const a = await createTenant();
    const token = await tokenFor(a.admin, a.organizationId);
    const res = await fetch(`${api.base}/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiver.url}/hook`, events: ["member.created"] }),
    });
    const endpoint = await res.json();
    assertEquals(res.status, 201);

    // Non-ASCII and nested values: where a re-serialized body would differ from the sent one.
    await addMember(a.organizationId, 'Zoë 🙏 "quoted"');
    await drain();
    const [received] = await receiver.waitFor(1);

    const page = await get(api.base, `/deliveries?endpoint_id=${endpoint.id}`, token);
    const detail = await get(api.base, `/deliveries/${page.data[0].id}`, token);
    assertEquals(detail.body, received!.text, "body equals the bytes the receiver got");
    assertEquals(
      await hmacSha256Hex(endpoint.secret, new TextEncoder().encode(detail.body)),
      received!.headers.get("x-webhook-signature"),
      "HMAC of body is the delivered x-webhook-signature",
    );
    // The parsed payload, re-serialized, is not what was signed: that is why body exists.
    assertNotEquals(JSON.stringify(detail.payload), detail.body);
    assertEquals(JSON.parse(detail.body), detail.payload);
    await retireEndpoints(endpoint.id);
  } finally {
    await receiver.close();
    await api.close();
  }
});

Deno.test("endpoint health: last result, failures in a row and the 24-hour success rate", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const receiver = await startReceiver();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const token = await tokenFor(a.admin, a.organizationId);
    const res = await fetch(`${api.base}/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ url: `${receiver.url}/hook`, events: ["member.created"] }),
    });
    const endpoint = await res.json();
    const health = async () => (await get(api.base, `/endpoints/${endpoint.id}`, token)).health;
    const listed = async () =>
      (await get(api.base, `/endpoints`, token)).data.find((e: { id: string }) => e.id === endpoint.id)
        .health;

    assertEquals(await health(), {
      last_attempt_at: null,
      last_response_status: null,
      last_outcome: null,
      consecutive_failures: 0,
      success_rate_24h: null,
      attempts_24h: 0,
      failing_since: null,
      mean_response_ms_24h: null,
    });

    // A bucket from eight days ago: never counted, and dropped when the endpoint opens a new bucket; one
    // from two days ago stays for the 7-day activity chart, but is not part of the 24-hour health.
    await sql()`insert into public.webhook_endpoint_health_buckets
                  (endpoint_id, bucket_start, organization_id, attempts, delivered)
                values (${endpoint.id}, now() - interval '8 days', ${a.organizationId}, 7, 0),
                       (${endpoint.id}, now() - interval '2 days', ${a.organizationId}, 5, 0)`;
    await addMember(a.organizationId, "One");
    await drain();
    const buckets =
      await sql()`select 1 from public.webhook_endpoint_health_buckets where endpoint_id = ${endpoint.id}`;
    assertEquals(buckets.length, 2, "the stale bucket is gone, the 2-day-old one kept");
    let h = await health();
    assertEquals(
      [h.last_outcome, h.last_response_status, h.consecutive_failures, h.success_rate_24h, h.attempts_24h],
      ["delivered", 200, 0, 1, 1],
    );
    assert(Math.abs(Date.parse(h.last_attempt_at) - Date.now()) < 60_000);

    // Two deliveries fail (each its first attempt, so no retry waits).
    receiver.respond(() => new Response("down", { status: 500 }));
    await addMember(a.organizationId, "Two");
    await drain();
    await addMember(a.organizationId, "Three");
    await drain();
    h = await health();
    assertEquals(
      [h.last_outcome, h.last_response_status, h.consecutive_failures, h.attempts_24h],
      ["failed", 500, 2, 3],
    );
    assertEquals(h.success_rate_24h, 0.3333);
    const [firstFailure] = await sql()<{ at: Date }[]>`
      select min(a.attempted_at) as at from public.webhook_delivery_attempts a
      join public.webhook_deliveries d on d.id = a.delivery_id
      where d.endpoint_id = ${endpoint.id} and a.response_status = 500`;
    assertEquals(Date.parse(h.failing_since), firstFailure!.at.getTime(), "failing since the first failure");
    assertEquals(await listed(), h, "the list shows the same health");

    // Several attempts in one batch: the newest decides, and a success ends the run of failures.
    receiver.respond(() => new Response("ok"));
    await sql()`update public.webhook_deliveries set next_attempt_at = now() where endpoint_id = ${endpoint.id}
                and status = 'retrying'`;
    await drain();
    h = await health();
    assertEquals([h.last_outcome, h.consecutive_failures, h.attempts_24h], ["delivered", 0, 5]);
    assertEquals(h.success_rate_24h, 0.6);
    assertEquals(h.failing_since, null, "a success ends the run");

    // Latency: the mean of the attempts' response times over 24 hours, from the buckets.
    const [mean] = await sql()<{ ms: number }[]>`
      select round(avg(a.duration_ms))::int as ms from public.webhook_delivery_attempts a
      join public.webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${endpoint.id}`;
    assertEquals(h.mean_response_ms_24h, mean!.ms);
    await sql()`update public.webhook_endpoint_health_buckets set timed = 2, duration_ms_sum = 2001
                where endpoint_id = ${endpoint.id}`;
    assertEquals((await health()).mean_response_ms_24h, 1001, "2001 ms over 2 timed attempts, rounded");

    // Another organization's admin sees neither the endpoint nor its health.
    const other = await fetch(`${api.base}/endpoints/${endpoint.id}`, {
      headers: { authorization: `Bearer ${await tokenFor(b.admin, b.organizationId)}` },
    });
    assertEquals(other.status, 404);
    await other.body?.cancel();
    await retireEndpoints(endpoint.id);
  } finally {
    await receiver.close();
    await api.close();
  }
});

Deno.test("CORS: the settings UI on another origin may call the API; errors carry the header too", async () => {
  const api = await startWebhooksApi();
  try {
    const preflight = await fetch(`${api.base}/endpoints`, {
      method: "OPTIONS",
      headers: {
        origin: "http://127.0.0.1:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    await preflight.body?.cancel();
    assert(preflight.status === 204 || preflight.status === 200, `preflight ${preflight.status}`);
    assertEquals(preflight.headers.get("access-control-allow-origin"), "*");
    assert(preflight.headers.get("access-control-allow-headers")!.includes("authorization"));
    assert(preflight.headers.get("access-control-allow-methods")!.includes("PATCH"));

    const refused = await fetch(`${api.base}/endpoints`, { headers: { origin: "http://127.0.0.1:5173" } });
    assertEquals(refused.status, 401);
    assertEquals(refused.headers.get("access-control-allow-origin"), "*", "the page can read the error");
    assertEquals((await refused.json()).error.code, "missing_token");
  } finally {
    await api.close();
  }
});
