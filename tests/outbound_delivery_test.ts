// Outbound webhooks end to end against the real database and real receivers on loopback: every
// contract event reaches the endpoints subscribed to it (and nothing else does), signed so that both
// the hex scheme and the Standard Webhooks library verify it, with the contract body and headers.
import { Webhook } from "standardwebhooks";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { asUser, closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  createEndpoint,
  deliveriesOf,
  headerObject,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";
import { verifyHexSignature } from "../supabase/functions/_shared/hmac.ts";

const ALL_EVENTS = [
  "member.created",
  "member.lost",
  "donation.recorded",
  "attendance.marked",
  "workflow.completed",
];

Deno.test("each contract event reaches subscribed endpoints only, verifiable both ways", async () => {
  const tenant = await createTenant();
  const other = await createTenant();
  const all = await startReceiver();
  const donationsOnly = await startReceiver();
  const otherOrg = await startReceiver();
  const epAll = await createEndpoint(tenant.organizationId, `${all.url}/hook`, ALL_EVENTS);
  const epDonations = await createEndpoint(tenant.organizationId, `${donationsOnly.url}/hook`, [
    "donation.recorded",
  ]);
  const epOther = await createEndpoint(other.organizationId, `${otherOrg.url}/hook`, ALL_EVENTS);
  try {
    // Domain changes made by a staff user through RLS, exactly as the app makes them.
    const ids = await asUser(tenant.staffClaims, async (tx) => {
      const [m] = await tx<{ id: string }[]>`
        insert into public.members (organization_id, first_name, last_name, email)
        values (${tenant.organizationId}, 'Ada', 'Lovelace', 'ada@example.org') returning id`;
      // An update that is not a move to 'lost' raises nothing.
      await tx`update public.members set email = 'ada@example.com' where id = ${m!.id}`;
      await tx`update public.members set status = 'lost' where id = ${m!.id}`;
      // Already lost: saving again raises nothing.
      await tx`update public.members set last_name = 'King' where id = ${m!.id}`;
      await tx`insert into public.donations (organization_id, member_id, amount_minor, currency)
               values (${tenant.organizationId}, ${m!.id}, 2500, 'INR')`;
      await tx`insert into public.attendance (organization_id, member_id) values (${tenant.organizationId}, ${
        m!.id
      })`;
      const [w] = await tx<{ id: string }[]>`
        insert into public.workflows (organization_id, name) values (${tenant.organizationId}, 'Welcome') returning id`;
      const [run] = await tx<{ id: string }[]>`
        insert into public.workflow_runs (organization_id, workflow_id, member_id)
        values (${tenant.organizationId}, ${w!.id}, ${m!.id}) returning id`;
      await tx`update public.workflow_runs set status = 'completed', finished_at = now() where id = ${
        run!.id
      }`;
      return { member: m!.id, run: run!.id };
    });
    // The other organization's activity never reaches the first organization's endpoints.
    await sql()`insert into public.members (organization_id, first_name) values (${other.organizationId}, 'Other')`;

    const stats = await testEngine().run({ stopWhenIdle: true });
    assert(stats.delivered >= 7, `delivered ${stats.delivered}`);
    await all.waitFor(5);
    await donationsOnly.waitFor(1);
    await otherOrg.waitFor(1);

    assertEquals(all.requests.map((r) => r.headers.get("x-webhook-event")).sort(), [...ALL_EVENTS].sort());
    assertEquals(donationsOnly.requests.map((r) => r.headers.get("x-webhook-event")), ["donation.recorded"]);
    assertEquals(otherOrg.requests.map((r) => JSON.parse(r.text).data.row.first_name), ["Other"]);

    for (const [receiver, ep] of [[all, epAll], [donationsOnly, epDonations], [otherOrg, epOther]] as const) {
      const wh = new Webhook(ep.secret);
      for (const req of receiver.requests) {
        assertEquals(req.method, "POST");
        assertEquals(req.path, "/hook");
        assertEquals(req.headers.get("content-type"), "application/json");
        const hex = req.headers.get("x-webhook-signature")!;
        assertMatch(hex, /^[0-9a-f]{64}$/);
        assert(await verifyHexSignature(ep.secret, req.body, hex), "hex signature verifies");
        assert(
          !(await verifyHexSignature(
            epAll.secret === ep.secret ? epOther.secret : epAll.secret,
            req.body,
            hex,
          )),
        );
        const verified = wh.verify(req.text, headerObject(req.headers)) as Record<string, unknown>;
        const body = JSON.parse(req.text);
        assertEquals(verified, body);
        assertEquals(Object.keys(body).sort(), ["created_at", "data", "id", "organization_id", "type"]);
        assertEquals(Object.keys(body.data).sort(), ["delta", "row"]);
        assertEquals(req.headers.get("x-webhook-id"), body.id);
        assertEquals(req.headers.get("webhook-id"), body.id);
        assertEquals(req.headers.get("x-webhook-event"), body.type);
        assertEquals(req.headers.get("x-webhook-timestamp"), req.headers.get("webhook-timestamp"));
        assert(Math.abs(Number(req.headers.get("webhook-timestamp")) - Date.now() / 1000) < 60);
        assert(!Number.isNaN(Date.parse(body.created_at)), "created_at is a timestamp");
      }
    }

    // deno-lint-ignore no-explicit-any
    const byType: Record<string, any> = Object.fromEntries(
      all.requests.map((r) => [r.headers.get("x-webhook-event"), JSON.parse(r.text)]),
    );
    for (const body of Object.values(byType)) assertEquals(body.organization_id, tenant.organizationId);
    const created = byType["member.created"];
    assertEquals(created.data.row.id, ids.member);
    assertEquals(created.data.row.first_name, "Ada");
    assertEquals(created.data.delta, created.data.row, "an insert's delta is the new row");
    const lost = byType["member.lost"];
    assertEquals(lost.data.row.status, "lost");
    assertEquals(lost.data.row.email, "ada@example.com");
    assert(
      !("first_name" in lost.data.delta) && !("email" in lost.data.delta),
      "delta holds only changed fields",
    );
    assertEquals(lost.data.delta.status, "lost");
    assertEquals(byType["donation.recorded"].data.row.amount_minor, 2500);
    assertEquals(byType["donation.recorded"].data.row.currency, "INR");
    assertEquals(byType["attendance.marked"].data.row.member_id, ids.member);
    const completed = byType["workflow.completed"];
    assertEquals(completed.data.row.id, ids.run);
    assertEquals(completed.data.delta.status, "completed");
    assert(!("workflow_id" in completed.data.delta), "unchanged fields are not in the delta");

    // History: one delivered delivery per request, each with its attempt recorded.
    const rows = await deliveriesOf(epAll.id);
    assertEquals(rows.length, 5);
    for (const d of rows) {
      assertEquals(d.status, "delivered");
      assertEquals(d.attempt_count, 1);
      assertEquals(d.last_response_status, 200);
      assertEquals(d.next_attempt_at, null);
      assertEquals(d.leased_until, null);
    }
    const attempts = await sql()<
      { response_status: number; response_excerpt: string; duration_ms: number }[]
    >`
      select a.response_status, a.response_excerpt, a.duration_ms from public.webhook_delivery_attempts a
      join public.webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${epAll.id}`;
    assertEquals(attempts.length, 5);
    for (const a of attempts) {
      assertEquals(a.response_status, 200);
      assertEquals(a.response_excerpt, "ok");
      assert(a.duration_ms >= 0);
    }
  } finally {
    await retireEndpoints(epAll.id, epDonations.id, epOther.id);
    await Promise.all([all.close(), donationsOnly.close(), otherOrg.close()]);
  }
});

Deno.test("a workflow run that fails counts as finished; cancelled and disabled endpoints raise nothing", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ALL_EVENTS);
  const off = await createEndpoint(tenant.organizationId, `${receiver.url}/off`, ALL_EVENTS);
  await sql()`update public.webhook_endpoints set enabled = false where id = ${off.id}`;
  try {
    const [w] = await sql()<{ id: string }[]>`
      insert into public.workflows (organization_id, name) values (${tenant.organizationId}, 'W') returning id`;
    await sql()`
      insert into public.workflow_runs (organization_id, workflow_id, status)
      values (${tenant.organizationId}, ${w!.id}, 'failed'), (${tenant.organizationId}, ${
      w!.id
    }, 'cancelled'),
             (${tenant.organizationId}, ${w!.id}, 'running')`;
    await sql()`update public.workflow_runs set status = 'cancelled' where workflow_id = ${
      w!.id
    } and status = 'running'`;
    await testEngine().run({ stopWhenIdle: true });
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(receiver.requests.length, 1);
    const body = JSON.parse(receiver.requests[0]!.text);
    assertEquals(body.type, "workflow.completed");
    assertEquals(body.data.row.status, "failed");
    assertEquals(receiver.requests[0]!.path, "/hook");
    assertEquals((await deliveriesOf(off.id)).length, 0, "a disabled endpoint gets no deliveries");
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("a 1,000-row insert fans out in the same transaction, and a rollback raises nothing", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const a = await createEndpoint(tenant.organizationId, `${receiver.url}/a`, ["member.created"]);
  const b = await createEndpoint(tenant.organizationId, `${receiver.url}/b`, [
    "member.created",
    "member.lost",
  ]);
  try {
    await sql()`
      insert into public.members (organization_id, first_name, source)
      select ${tenant.organizationId}, 'bulk ' || g, 'bulk' from generate_series(1, 1000) g`;
    const [counts] = await sql()<{ events: number; deliveries: number }[]>`
      select (select count(*)::int from public.webhook_events where organization_id = ${tenant.organizationId}) as events,
             (select count(*)::int from public.webhook_deliveries where organization_id = ${tenant.organizationId}) as deliveries`;
    assertEquals(counts, { events: 1000, deliveries: 2000 });

    await sql().begin(async (tx) => {
      await tx`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'ghost')`;
      await tx`select 1/0`;
    }).catch(() => {});
    const [after] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_events where organization_id = ${tenant.organizationId}`;
    assertEquals(after!.n, 1000, "a rolled-back insert leaves no event");

    await testEngine().run({ stopWhenIdle: true });
    await receiver.waitFor(2000, 20_000);
    const ids = new Set(receiver.requests.map((r) => `${r.path} ${r.headers.get("webhook-id")}`));
    assertEquals(ids.size, 2000, "each event once per endpoint");
    const [open] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_deliveries
      where organization_id = ${tenant.organizationId} and status <> 'delivered'`;
    assertEquals(open!.n, 0);
  } finally {
    await retireEndpoints(a.id, b.id);
    await receiver.close();
  }
});

Deno.test("an attempt keeps the headers sent, signatures masked, and the receiver's headers, bounded", async () => {
  const tenant = await createTenant();
  // A receiver that answers with a cookie, echoes our signatures back (as echo services do), and sends far
  // more header bytes than anyone should keep.
  const noisy = await startReceiver((got) => {
    const headers = new Headers({ "x-a-receiver": "yes", "set-cookie": "session=s3cr3t-cookie" });
    headers.set("x-webhook-signature", got.headers.get("x-webhook-signature")!);
    headers.set("webhook-signature", got.headers.get("webhook-signature")!);
    // 100 of 100 bytes: within what the HTTP client reads at all (16 KiB of head), far above what is kept.
    for (let i = 0; i < 100; i++) headers.set(`x-filler-${i}`, "f".repeat(100));
    return new Response("ok", { headers });
  });
  const ep = await createEndpoint(tenant.organizationId, `${noisy.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'Hd')`;
    await testEngine().run({ stopWhenIdle: true });
    const [req] = await noisy.waitFor(1);
    const [d] = await deliveriesOf(ep.id);
    const [a] = await sql()<
      { request_headers: Record<string, string>; response_headers: Record<string, string>; whole: string }[]
    >`select request_headers, response_headers, a::text as whole
      from public.webhook_delivery_attempts a where delivery_id = ${d!.id}`;
    const sent = a!.request_headers;
    assertEquals(sent["webhook-id"], req!.headers.get("webhook-id"));
    assertEquals(sent["x-webhook-event"], "member.created");
    assertEquals(sent["x-webhook-timestamp"], req!.headers.get("x-webhook-timestamp"));
    // Signatures: the first characters only, never the value the receiver got.
    const hex = req!.headers.get("x-webhook-signature")!;
    const standard = req!.headers.get("webhook-signature")!.slice(3);
    assertEquals(sent["x-webhook-signature"], `${hex.slice(0, 8)}…`);
    assertEquals(sent["webhook-signature"], `v1,${standard.slice(0, 8)}…`);
    assert(!a!.whole.includes(hex) && !a!.whole.includes(standard), "no whole signature is stored");
    const got = a!.response_headers;
    assertEquals(got["x-a-receiver"], "yes");
    assertEquals(got["set-cookie"], "(not kept)");
    // (the echoed x-webhook-signature sorts after the filler and falls outside the 4 KiB kept)
    assertEquals(
      got["webhook-signature"],
      `v1,${standard.slice(0, 8)}…`,
      "an echoed signature is masked too",
    );
    assert(!a!.whole.includes("s3cr3t-cookie"), "the receiver's cookie is not stored");
    const kept = Object.entries(got);
    assert(kept.length <= 50, `${kept.length} response headers kept`);
    assert(
      kept.reduce((n, [k, v]) => n + k.length + v.length, 0) <= 4096,
      "at most 4 KiB of response headers",
    );
  } finally {
    await retireEndpoints(ep.id);
    await noisy.close();
  }
});

Deno.test("a receiver that echoes our signatures in its body, its own headers or a redirect's location gets none stored whole", async () => {
  const tenant = await createTenant();
  // An echo service: the request's headers back as JSON, a signature under a header name of its own, and
  // padding that puts the last signature across the end of the 1 KiB excerpt.
  const echo = await startReceiver((got) => {
    const hex = got.headers.get("x-webhook-signature")!;
    const body = JSON.stringify({ headers: Object.fromEntries(got.headers) });
    const padding = "p".repeat(Math.max(0, 1024 - body.length - 40));
    return new Response(`${body}${padding}"last":"${hex}"`, { headers: { "x-echo-signature": hex } });
  });
  const ep = await createEndpoint(tenant.organizationId, `${echo.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'Echo')`;
    await testEngine().run({ stopWhenIdle: true });
    const [req] = await echo.waitFor(1);
    const [d] = await deliveriesOf(ep.id);
    const [a] = await sql()<
      { response_excerpt: string; response_headers: Record<string, string>; whole: string }[]
    >`
      select response_excerpt, response_headers, a::text as whole
      from public.webhook_delivery_attempts a where delivery_id = ${d!.id}`;
    const hex = req!.headers.get("x-webhook-signature")!;
    const standard = req!.headers.get("webhook-signature")!.slice(3);
    assert(a!.response_excerpt.includes(`${hex.slice(0, 8)}…`), a!.response_excerpt);
    assert(!a!.whole.includes(hex) && !a!.whole.includes(standard), "no whole signature is stored");
    assert(!a!.whole.includes(hex.slice(0, 20)), "nor a long beginning of one cut by the excerpt's end");
    assertEquals(a!.response_headers["x-echo-signature"], `${hex.slice(0, 8)}…`);
  } finally {
    await retireEndpoints(ep.id);
    await echo.close();
  }
  // A redirect whose Location carries it: the attempt's error names the location, the signature cut.
  const redirecting = await startReceiver((got) =>
    new Response(null, {
      status: 302,
      headers: { location: `https://elsewhere.example.org/?sig=${got.headers.get("x-webhook-signature")}` },
    })
  );
  const ep2 = await createEndpoint(tenant.organizationId, `${redirecting.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'Echo 2')`;
    await testEngine().run({ stopWhenIdle: true });
    const [req] = await redirecting.waitFor(1);
    const hex = req!.headers.get("x-webhook-signature")!;
    const [d] = await deliveriesOf(ep2.id);
    const [a] = await sql()<{ error: string; whole: string }[]>`
      select error, a::text as whole from public.webhook_delivery_attempts a where delivery_id = ${d!.id}`;
    assertEquals(
      a!.error,
      `redirect 302 not followed (location: https://elsewhere.example.org/?sig=${hex.slice(0, 8)}…)`,
    );
    assert(!a!.whole.includes(hex), "no whole signature is stored");
  } finally {
    await retireEndpoints(ep2.id);
    await redirecting.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
