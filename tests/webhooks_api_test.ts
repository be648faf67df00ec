// The configuration API end to end: an admin's walkthrough against a real dispatcher and receiver,
// an integrator's REST-hook flow with an API key, and every route tried by callers who must be refused.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { addMember, closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { newSession, tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { testEngine } from "./helpers/outbound.ts";
import { routes } from "../supabase/functions/webhooks/app.ts";
import type { AppDeps } from "../supabase/functions/_shared/app.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";
import { EVENT_CATALOGUE } from "../supabase/functions/webhooks/catalogue.ts";

const start = () => startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });

const json = asBearer;
const drain = () => testEngine().run({ stopWhenIdle: true });

async function addMemberRow(organizationId: string, first = "Ada") {
  const [m] = await sql()`insert into public.members (organization_id, first_name, last_name, primary_phone)
    values (${organizationId}, ${first}, 'Lovelace', '+44 20 7946 0000') returning id`;
  return m!.id as string;
}

Deno.test("admin walkthrough: create, receive, inspect, redeliver, test, rotate, recover, delete", async () => {
  const api = await start();
  const receiver = await startReceiver();
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));

    const created = await call(api.base, "POST", "/endpoints", admin, {
      url: `${receiver.url}/hook`,
      events: ["member.created"],
      description: "Our CRM",
    });
    assertEquals(created.status, 201, created.text);
    const endpoint = created.data;
    assertMatch(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);

    const list = await call(api.base, "GET", "/endpoints", admin);
    assertEquals(list.data.data.map((e: { id: string }) => e.id), [endpoint.id]);
    const read = await call(api.base, "GET", `/endpoints/${endpoint.id}`, admin);
    for (const r of [list, read]) {
      assert(!r.text.includes(endpoint.secret) && !r.text.includes('"secret"'), "no secret");
    }

    const patched = await call(api.base, "PATCH", `/endpoints/${endpoint.id}`, admin, {
      events: ["member.created", "member.lost"],
    });
    assertEquals(patched.data.events, ["member.created", "member.lost"]);
    assertEquals(patched.data.description, "Our CRM");

    const memberId = await addMemberRow(a.organizationId);
    await drain();
    await receiver.waitFor(1);
    const first = receiver.requests[0]!;
    assertEquals(first.headers.get("x-webhook-signature"), await hmacSha256Hex(endpoint.secret, first.body));
    assertEquals(JSON.parse(first.text).data.row.id, memberId);

    const deliveries = await call(
      api.base,
      "GET",
      `/deliveries?endpoint_id=${endpoint.id}&status=delivered`,
      admin,
    );
    assertEquals(deliveries.data.data.length, 1);
    const delivery = deliveries.data.data[0];
    assertEquals([delivery.event_type, delivery.attempt_count], ["member.created", 1]);
    assertEquals((await call(api.base, "GET", `/deliveries?event_type=member.lost`, admin)).data.data, []);
    const byType = await call(api.base, "GET", `/deliveries?event_type=member.created`, admin);
    assertEquals(byType.data.data.map((d: { id: string }) => d.id), [delivery.id]);

    const detail = await call(api.base, "GET", `/deliveries/${delivery.id}`, admin);
    assertEquals(detail.data.attempts.length, 1);
    assertEquals(detail.data.attempts[0].response_status, 200);
    assertEquals(detail.data.payload.id, delivery.event_id);

    const redelivered = await call(api.base, "POST", `/deliveries/${delivery.id}/redeliver`, admin);
    assertEquals([redelivered.status, redelivered.data.status], [202, "pending"]);
    await drain();
    await receiver.waitFor(2);
    assertEquals(
      receiver.requests[1]!.headers.get("webhook-id"),
      first.headers.get("webhook-id"),
      "same webhook-id",
    );

    const test = await call(api.base, "POST", `/endpoints/${endpoint.id}/test`, admin);
    assertEquals(test.status, 202);
    await drain();
    await receiver.waitFor(3);
    assertEquals(JSON.parse(receiver.requests[2]!.text).type, "webhook.test");

    const rotated = await call(api.base, "POST", `/endpoints/${endpoint.id}/rotate-secret`, admin, {
      grace_seconds: 3600,
    });
    assertEquals(rotated.status, 200, rotated.text);
    assert(rotated.data.secret !== endpoint.secret && rotated.data.previous_secret_expires_at, rotated.text);

    // A receiver that fails for good, then recovers: recover brings the failed delivery back.
    receiver.respond(() => new Response("down", { status: 500 }));
    await sql()`update public.members set status = 'lost' where id = ${memberId}`;
    await drain();
    await sql()`update public.webhook_deliveries set status = 'permanently_failed', next_attempt_at = null
                where endpoint_id = ${endpoint.id} and status = 'retrying'`;
    receiver.respond(() => new Response("ok"));
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovered = await call(api.base, "POST", `/endpoints/${endpoint.id}/recover`, admin, { since });
    assertEquals([recovered.status, recovered.data.recovered], [202, 1]);
    await drain();
    const lost = receiver.requests.map((r) => JSON.parse(r.text)).filter((b) => b.type === "member.lost");
    assert(lost.length >= 2, "the failed member.lost delivery was sent again after recover");

    const gone = await call(api.base, "DELETE", `/endpoints/${endpoint.id}`, admin);
    assertEquals(gone.status, 204);
    assertEquals((await call(api.base, "GET", `/endpoints/${endpoint.id}`, admin)).status, 404);
  } finally {
    await receiver.close();
    await api.close();
  }
});

Deno.test("URLs that would reach private networks are refused, naming the field", async () => {
  const server = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "false" });
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    for (
      const url of [
        "http://example.org/hook",
        "https://127.0.0.1/x",
        "https://169.254.169.254/latest",
        "https://[::1]/",
      ]
    ) {
      const res = await call(server.base, "POST", "/endpoints", admin, { url, events: ["member.created"] });
      assertEquals(res.status, 400, url);
      assertEquals(res.data.error.code, "invalid_url");
      assertEquals(res.data.error.details.fields[0].field, "url");
    }
    const [n] =
      await sql()`select count(*)::int as n from public.webhook_endpoints where organization_id = ${a.organizationId}`;
    assertEquals(n!.n, 0);
  } finally {
    await server.close();
  }
});

Deno.test("integrator: API key subscribes, samples, receives, and a 410 Gone disables the subscription", async () => {
  const api = await start();
  const receiver = await startReceiver();
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    const key = (await call(api.base, "POST", "/api-keys", admin, { name: "Zapier" })).data.key as string;
    const asKey = { "x-api-key": key, "content-type": "application/json" };

    const types = await call(api.base, "GET", "/event-types", asKey);
    assertEquals(
      types.data.data.map((t: { type: string }) => t.type).sort(),
      Object.keys(EVENT_CATALOGUE).sort(),
    );

    const sub = await call(api.base, "POST", "/subscriptions", asKey, {
      target_url: `${receiver.url}/zap`,
      event: "member.created",
    });
    assertEquals(sub.status, 201, sub.text);
    const empty = await call(api.base, "GET", "/samples/member.created", asKey);
    assertEquals(
      empty.data,
      [EVENT_CATALOGUE["member.created"].example],
      "no events yet: the catalogue example",
    );

    await addMemberRow(a.organizationId, "Grace");
    await drain();
    await receiver.waitFor(1);
    const samples = await call(api.base, "GET", "/samples/member.created", asKey);
    assertEquals(samples.data, [JSON.parse(receiver.requests[0]!.text)], "samples are the delivered bodies");

    receiver.respond(() => new Response("gone", { status: 410 }));
    await addMemberRow(a.organizationId, "Katherine");
    await drain();
    const [ep] =
      await sql()`select enabled, disabled_reason from public.webhook_endpoints where id = ${sub.data.id}`;
    assertEquals(ep!.enabled, false);
    assertMatch(String(ep!.disabled_reason), /410/);

    assertEquals((await call(api.base, "DELETE", `/subscriptions/${sub.data.id}`, asKey)).status, 204);
    assertEquals((await call(api.base, "DELETE", `/subscriptions/${sub.data.id}`, asKey)).status, 404);
    const unknownType = await call(api.base, "GET", "/samples/member.exploded", asKey);
    assertEquals(unknownType.status, 404);
  } finally {
    await receiver.close();
    await api.close();
  }
});

Deno.test("an organization has at most 100 endpoints, however many requests race for the last ones", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    const key = (await call(api.base, "POST", "/api-keys", admin, { name: "Zapier" })).data.key as string;
    const asKey = { "x-api-key": key, "content-type": "application/json" };
    // 97 endpoints as a hostile admin would script them; then 6 requests at once for the last 3 places.
    await sql()`insert into public.webhook_endpoints (organization_id, url, events)
                select ${a.organizationId}, 'https://cap.example.org/' || g, '{member.created}'
                from generate_series(1, 97) g`;
    const raced = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? call(api.base, "POST", "/endpoints", admin, {
            url: `https://cap.example.org/raced-${i}`,
            events: ["member.created"],
          })
          : call(api.base, "POST", "/subscriptions", asKey, {
            target_url: `https://cap.example.org/zap-${i}`,
            event: "member.created",
          })),
    );
    assertEquals(
      raced.map((r) => r.status).sort(),
      [201, 201, 201, 409, 409, 409],
      raced.map((r) => r.text).join(),
    );
    for (const r of raced.filter((r) => r.status === 409)) {
      assertEquals(r.data.error.code, "too_many_endpoints");
      assertMatch(r.data.error.message, /100 endpoints, the most it can have; delete one first/);
    }
    const [n] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_endpoints where organization_id = ${a.organizationId}`;
    assertEquals(n!.n, 100);
    // Direct SQL is held to the same cap: the database enforces it, not the API.
    await assertSqlRefused(a.organizationId);
    // Another organization is not affected; a deleted endpoint makes room again.
    const other = await call(
      api.base,
      "POST",
      "/endpoints",
      json(await tokenFor(b.admin, b.organizationId)),
      {
        url: "https://cap.example.org/other",
        events: ["member.created"],
      },
    );
    assertEquals(other.status, 201, other.text);
    const [one] = await sql()<{ id: string }[]>`
      select id from public.webhook_endpoints where organization_id = ${a.organizationId} limit 1`;
    assertEquals((await call(api.base, "DELETE", `/endpoints/${one!.id}`, admin)).status, 204);
    const again = await call(api.base, "POST", "/endpoints", admin, {
      url: "https://cap.example.org/again",
      events: ["member.created"],
    });
    assertEquals(again.status, 201, again.text);
  } finally {
    await sql()`delete from public.webhook_endpoints where url like 'https://cap.example.org/%'`;
    await api.close();
  }
});

async function assertSqlRefused(organizationId: string) {
  try {
    await sql()`insert into public.webhook_endpoints (organization_id, url, events)
                values (${organizationId}, 'https://cap.example.org/sql', '{member.created}')`;
  } catch (err) {
    assertEquals((err as { code?: string }).code, "54000");
    return;
  }
  throw new Error("the 101st endpoint was inserted");
}

Deno.test("every catalogue example has exactly the fields of a real event of its type", async () => {
  const a = await createTenant();
  const receiver = await startReceiver();
  try {
    await sql()`insert into public.webhook_endpoints (organization_id, url, events)
      values (${a.organizationId}, ${receiver.url}, ${Object.keys(EVENT_CATALOGUE)})`;
    const memberId = await addMemberRow(a.organizationId);
    await sql()`update public.members set status = 'lost' where id = ${memberId}`;
    await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency, source)
      values (${a.organizationId}, ${memberId}, 2500, 'USD', 'manual')`;
    await sql()`insert into public.attendance (organization_id, member_id) values (${a.organizationId}, ${memberId})`;
    const [wf] =
      await sql()`insert into public.workflows (organization_id, name) values (${a.organizationId}, 'Welcome') returning id`;
    await sql()`insert into public.workflow_runs (organization_id, workflow_id, member_id, status, finished_at)
      values (${a.organizationId}, ${wf!.id}, ${memberId}, 'running', null)`;
    await sql()`update public.workflow_runs set status = 'completed', finished_at = now() where workflow_id = ${
      wf!.id
    }`;
    // An endpoint that has failed every attempt for 5 days (time travel), disabled by housekeeping.
    const [created] = await sql()<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, description)
      values (${a.organizationId}, 'https://failing.example.org/h', ${["member.created"]}, 'CRM sync')
      returning id`;
    const failing = created!.id;
    // Last changed 6 days ago: the trigger that stamps updated_at is off for this one transaction only.
    await sql().begin(async (tx) => {
      await tx`alter table public.webhook_endpoints disable trigger webhook_endpoints_before_write`;
      await tx`update public.webhook_endpoints set updated_at = now() - interval '6 days'
               where id = ${failing}`;
      await tx`alter table public.webhook_endpoints enable trigger webhook_endpoints_before_write`;
    });
    await sql()`insert into public.webhook_endpoint_health (endpoint_id, organization_id, last_attempt_at,
                  last_response_status, last_outcome, consecutive_failures, failing_since)
                values (${failing}, ${a.organizationId}, now(), 500, 'failed', 40,
                        now() - interval '6 days')`;
    // Another that has failed every attempt for 2 hours: reported failing, then recovered.
    const [alerted] = await sql()<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, description)
      values (${a.organizationId}, 'https://flaky.example.org/h', ${["member.created"]}, 'CRM sync')
      returning id`;
    await sql()`insert into public.webhook_endpoint_health (endpoint_id, organization_id, last_attempt_at,
                  last_response_status, last_outcome, consecutive_failures, failing_since)
                values (${alerted!.id}, ${a.organizationId}, now(), 503, 'failed', 14,
                        now() - interval '2 hours')`;
    await sql()`select private.webhook_housekeeping()`;
    await sql()`update public.webhook_endpoint_health
                set last_outcome = 'delivered', last_response_status = 200, consecutive_failures = 0,
                    failing_since = null
                where endpoint_id = ${alerted!.id}`;
    await sql()`select private.webhook_housekeeping()`;
    const events = await sql()<{ type: string; payload: Record<string, unknown> }[]>`
      select type, payload from public.webhook_events where organization_id = ${a.organizationId}`;
    const keys = (o: unknown) => Object.keys(o as object).sort();
    for (const [type, { example }] of Object.entries(EVENT_CATALOGUE)) {
      const real = events.find((e) => e.type === type);
      assert(real, `a real ${type} event was raised`);
      assertEquals(keys(example), keys(real.payload), `${type} body`);
      // deno-lint-ignore no-explicit-any
      const [ex, re] = [(example as any).data, (real.payload as any).data];
      assertEquals(keys(ex.row), keys(re.row), `${type} row`);
      assertEquals(keys(ex.delta), keys(re.delta), `${type} delta`);
    }
  } finally {
    await receiver.close();
  }
});

Deno.test("every route refuses other organizations (404), staff and removed members (403), anonymous and expired callers (401)", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = json(await tokenFor(a.admin, a.organizationId));
    // A's resources, made as A's admin.
    const endpoint = (await call(api.base, "POST", "/endpoints", adminA, {
      url: "http://127.0.0.1:9/a",
      events: ["member.created"],
    })).data;
    await addMemberRow(a.organizationId);
    const [delivery] =
      await sql()`select id, event_id from public.webhook_deliveries where endpoint_id = ${endpoint.id}`;
    const apiKey = (await call(api.base, "POST", "/api-keys", adminA, { name: "A's key" })).data;
    const [log] =
      await sql()`insert into public.inbound_webhook_log (organization_id, provider, event, payload, signature_valid, status)
      values (${a.organizationId}, 'checkout', 'charged', '{"event":"charged"}', true, 'unmatched') returning id`;
    const invitation = (await call(api.base, "POST", "/invitations", adminA, {
      email: `invitee-${crypto.randomUUID()}@example.org`,
    }))
      .data;
    const [staffMembership] = await sql()`select id from public.profiles where user_id = ${a.staff.id}`;
    // A member of A to aim erasures at, and one A erased already.
    const memberOfA = await addMemberRow(a.organizationId, "Erasable");
    const erasure = (await call(api.base, "POST", "/erasures", adminA, {
      member_id: await addMemberRow(a.organizationId, "Erased"),
    })).data;
    // A's WhatsApp number, registered through the Connections routes.
    const number = (await call(api.base, "POST", "/connections/whatsapp/numbers", adminA, {
      phone_number_id: `${Date.now()}`.slice(-12),
      app_secret: "a".repeat(32),
    })).data;
    // A bulk retry of A's.
    const bulkRetry = (await call(api.base, "POST", "/deliveries/retry", adminA, {})).data;
    const ids: Record<string, string> = {
      "/endpoints/:id": endpoint.id,
      "/deliveries/retries/:id": bulkRetry.id,
      "/connections/whatsapp/numbers/:id": number.id,
      "/deliveries/:id": delivery!.id,
      "/events/:id": delivery!.event_id,
      "/api-keys/:id": apiKey.id,
      "/inbound-log/:id": log!.id,
      "/subscriptions/:id": endpoint.id,
      "/invitations/:id": invitation.id,
      "/people/:id": staffMembership!.id,
      "/erasures/:id": erasure.id,
      "member": memberOfA,
    };
    const bodies: Record<string, unknown> = {
      "POST /endpoints": { url: "http://127.0.0.1:9/x", events: ["member.created"] },
      "PATCH /endpoints/:id": { description: "mine now" },
      "POST /endpoints/:id/rotate-secret": {},
      "POST /endpoints/:id/recover": { since: new Date(0).toISOString() },
      "POST /deliveries/retry": {},
      "POST /deliveries/retry/preview": {},
      "POST /subscriptions": { target_url: "http://127.0.0.1:9/z", event: "member.created" },
      "POST /api-keys": { name: "x" },
      "POST /invitations": { email: `someone-else-${crypto.randomUUID()}@example.org` },
      "PATCH /people/:id": { role: "admin" },
      "POST /connections/:provider/secret": {},
      "POST /connections/whatsapp/numbers": {
        phone_number_id: `9${Date.now()}`.slice(-12),
        app_secret: "b".repeat(32),
      },
      "PATCH /connections/whatsapp/numbers/:id": { display_phone_number: "+1 555 0100" },
      "POST /connections/whatsapp/numbers/:id/verify-token": {},
      // Aimed at A without its token (whoever holds that joins: it is the invitation).
      "POST /invitations/accept": { token: "inv_" + "0".repeat(64) },
      "POST /invitations/preview": { token: "inv_" + "0".repeat(64) },
      // Aimed at A: switching into an organization one does not belong to.
      "POST /me/active-organization": { organization_id: a.organizationId },
      // Aimed at A: erasing one of A's members.
      "POST /erasures": { member_id: memberOfA },
      // Not aimed at A: the caller's own new organization, or their own active one.
      "POST /organizations": { name: `B's plant ${crypto.randomUUID().slice(0, 6)}` },
      "PATCH /organization": { contact_email: "office@b.example" },
      // Aimed at A through the platform console, which no organization's admin may use.
      "POST /platform/organizations/:id/suspend": { reason: "taking A down" },
      "POST /platform/organizations/:id/resume": {},
      "POST /platform/admins": { email: a.admin.email },
      "PUT /log-retention": { webhook_log_days: 14 },
    };
    const concrete = (path: string) =>
      path.replace("/platform/organizations/:id", `/platform/organizations/${a.organizationId}`)
        .replace("/deliveries/retries/:id", `/deliveries/retries/${ids["/deliveries/retries/:id"]}`)
        .replace("/platform/admins/:user_id", `/platform/admins/${a.admin.id}`)
        .replace(/^(\/[a-z-]+(?:\/whatsapp\/numbers)?)\/:id/, (_m, root) => `${root}/${ids[`${root}/:id`]}`)
        .replace(":provider", "checkout").replace(
          ":event_type",
          "member.created",
        ).replace(":organization_id", a.organizationId).replace(
          /^\/members\/search$/,
          "/members/search?q=Erasable",
        ).replace(/\/recover\/preview$/, "/recover/preview?since=1970-01-01T00:00:00Z");

    const staffA = json(await tokenFor(a.staff, a.organizationId));
    const adminB = json(await tokenFor(b.admin, b.organizationId));
    const keyB = (await call(api.base, "POST", "/api-keys", adminB, { name: "B's key" })).data.key as string;
    const asKeyB = { "x-api-key": keyB, "content-type": "application/json" };
    const removed = await createUser();
    await addMember(removed.id, a.organizationId, "admin");
    const removedToken = json(await tokenFor(removed, a.organizationId));
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    const expired = json(
      await tokenFor(a.admin, a.organizationId, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
    );
    // A's admin signed out elsewhere: a token of the ended session, within its hour.
    const ended = await newSession(a.admin);
    const signedOut = json(await tokenFor(a.admin, a.organizationId, { session: ended }));
    await sql()`delete from auth.sessions where id = ${ended}`;

    // A suspended organization C: its admin's token and its API key, both made before the suspension.
    const c = await createTenant();
    const adminC = json(await tokenFor(c.admin, c.organizationId));
    const keyC = (await call(api.base, "POST", "/api-keys", adminC, { name: "C's key" })).data.key as string;
    const asKeyC = { "x-api-key": keyC, "content-type": "application/json" };
    await sql()`insert into private.organization_suspensions (organization_id, reason)
                values (${c.organizationId}, 'every route tried')`;
    // Routes that do not act for the caller's active organization: the caller's own account, another
    // organization's invitation, the platform console (and the event catalogue, the same for everyone).
    const notForTheActive = new Set([
      "GET /me",
      "POST /me/active-organization",
      "POST /organizations",
      "POST /invitations/accept",
      "POST /memberships/:organization_id/leave",
    ]);
    const suspendedAnswers: string[] = [];

    let checked = 0;
    for (const { spec } of routes({} as AppDeps)) {
      if (spec.access === "public") continue;
      const path = concrete(spec.path);
      const method = spec.method.toUpperCase();
      const body = bodies[`${method} ${spec.path}`];
      const label = `${method} ${spec.path}`;
      // Routes naming something of A (by id in the path, an invitation's token or A's member in the body).
      const hasId = /:id|:organization_id/.test(spec.path) || label.startsWith("POST /invitations/") ||
        label === "POST /erasures";

      const anon = await call(api.base, method, path, { "content-type": "application/json" }, body);
      assertEquals(anon.status, 401, `anon ${label}`);
      assertEquals(
        (await call(api.base, method, path, expired, body)).data?.error?.code,
        "token_expired",
        `expired ${label}`,
      );
      assertEquals(
        (await call(api.base, method, path, signedOut, body)).data?.error?.code,
        "session_not_found",
        `signed out ${label}`,
      );

      if (spec.access === "admin") {
        assertEquals((await call(api.base, method, path, staffA, body)).status, 403, `staff ${label}`);
        assertEquals(
          (await call(api.base, method, path, removedToken, body)).status,
          403,
          `removed ${label}`,
        );
      }
      if (
        spec.access !== "authenticated" && !spec.path.startsWith("/platform/") && !notForTheActive.has(label)
      ) {
        for (const [who, headers] of [["suspended admin", adminC], ["suspended API key", asKeyC]] as const) {
          const res = await call(api.base, method, path, headers, body);
          const code = res.data?.error?.code;
          // An API key meets the routes keys may not use as any key does (refused for being a key).
          const keysRefusal = who === "suspended API key" && spec.access === "user";
          if (res.status !== 403 || (!keysRefusal && code !== "organization_suspended")) {
            suspendedAnswers.push(`${who} ${label}: ${res.status} ${code ?? res.text.slice(0, 80)}`);
          }
        }
      }
      for (const [who, headers] of [["admin of B", adminB], ["API key of B", asKeyB]] as const) {
        const res = await call(api.base, method, path, headers, body);
        if (who === "API key of B" && spec.access === "user") {
          assertEquals(res.status, 403, `${who} ${label}`);
        } else if (spec.path.startsWith("/platform/") && spec.path !== "/platform/me") {
          assert(
            ["platform_admin_required", "superadmin_required"].includes(res.data?.error?.code),
            `${who} ${label}: ${res.text}`,
          );
        } else if (label === "POST /me/active-organization") {
          assertEquals(res.data?.error?.code, "not_a_member", `${who} ${label}: ${res.text}`);
        } else if (hasId) {
          assertEquals(res.status, 404, `${who} ${label}: ${res.text}`);
        } else if (label === "POST /connections/:provider/test") {
          // B has no checkout secret (409), or this server no functions URL (503): said as such, not a
          // refusal of the caller.
          assert([409, 503].includes(res.status), `${who} ${label}: ${res.text}`);
        } else {
          assert(
            res.status < 300,
            `${who} ${label} works on their own organization (${res.status} ${res.text})`,
          );
        }
        for (const id of Object.values(ids)) {
          assert(!res.text.includes(id), `${who} ${label} shows nothing of A`);
        }
      }
      checked++;
    }
    assert(checked >= 15, `all routes were tried (${checked})`);
    assertEquals(
      suspendedAnswers,
      [],
      "a suspended organization's admin and key: 403 organization_suspended",
    );

    // Nothing of A was changed by any of that.
    const [ep] =
      await sql()`select description, secret from public.webhook_endpoints where id = ${endpoint.id}`;
    assertEquals(ep!.description, null);
    assertEquals(ep!.secret, endpoint.secret);
    const [k] = await sql()`select revoked_at from public.organization_api_keys where id = ${apiKey.id}`;
    assertEquals(k!.revoked_at, null);
    const [staff] = await sql()`select role from public.profiles where id = ${staffMembership!.id}`;
    assertEquals(staff!.role, "staff");
    const [suspended] = await sql()`select count(*)::int as n from private.organization_suspensions
                                    where organization_id = ${a.organizationId}`;
    assertEquals(suspended!.n, 0);
  } finally {
    await api.close();
  }
});

Deno.test("malformed bodies and queries are 400 naming the field", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    const cases: [string, string, unknown, string][] = [
      ["POST", "/endpoints", { url: "http://127.0.0.1:9/x", events: [] }, "events"],
      ["POST", "/endpoints", { url: "http://127.0.0.1:9/x", events: ["member.exploded"] }, "events.0"],
      ["POST", "/endpoints", { events: ["member.created"] }, "url"],
      [
        "POST",
        "/endpoints",
        { url: "http://127.0.0.1:9/x", events: ["member.created"], secret: "short" },
        "secret",
      ],
      [
        "POST",
        "/endpoints",
        { url: "http://127.0.0.1:9/x", events: ["member.created"], admin: true },
        "admin",
      ],
      ["POST", "/subscriptions", { target_url: "http://127.0.0.1:9/x", event: "nope" }, "event"],
      ["GET", "/deliveries?status=lost", undefined, "status"],
      ["GET", "/deliveries?limit=0", undefined, "limit"],
      ["GET", "/deliveries?since=yesterday", undefined, "since"],
      ["PUT", "/log-retention", { webhook_log_days: 0 }, "webhook_log_days"],
      ["PUT", "/log-retention", { webhook_log_days: 91 }, "webhook_log_days"],
      ["PUT", "/log-retention", { webhook_log_days: 1.5 }, "webhook_log_days"],
      ["PUT", "/log-retention", { webhook_log_days: "14" }, "webhook_log_days"],
      ["PUT", "/log-retention", {}, "webhook_log_days"],
      [
        "PUT",
        "/log-retention",
        { webhook_log_days: 14, organization_id: a.organizationId },
        "organization_id",
      ],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await call(api.base, method, path, admin, body);
      assertEquals(res.status, 400, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
      const fields = (res.data.error.details?.fields ?? []).map((f: { field: string }) => f.field);
      assert(fields.includes(field), `${path}: ${field} named in ${JSON.stringify(fields)}`);
    }
  } finally {
    await api.close();
  }
});

Deno.test("log retention: an admin reads the default and chooses; staff and API keys cannot; one organization only", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = json(await tokenFor(a.admin, a.organizationId));
    const adminB = json(await tokenFor(b.admin, b.organizationId));
    assertEquals((await call(api.base, "GET", "/log-retention", adminA)).data, {
      webhook_log_days: 30,
      chosen: false,
    });
    const set = await call(api.base, "PUT", "/log-retention", adminA, { webhook_log_days: 14 });
    assertEquals([set.status, set.data], [200, { webhook_log_days: 14, chosen: true }]);
    assertEquals(
      (await call(api.base, "PUT", "/log-retention", adminA, { webhook_log_days: 7 })).data.webhook_log_days,
      7,
    );
    assertEquals((await call(api.base, "GET", "/log-retention", adminA)).data, {
      webhook_log_days: 7,
      chosen: true,
    });
    // Another organization's admin chooses for theirs alone.
    assertEquals((await call(api.base, "GET", "/log-retention", adminB)).data.webhook_log_days, 30);
    const staff = json(await tokenFor(a.staff, a.organizationId));
    assertEquals(
      (await call(api.base, "PUT", "/log-retention", staff, { webhook_log_days: 90 })).status,
      403,
    );
    const key = (await call(api.base, "POST", "/api-keys", adminA, { name: "Zap" })).data.key as string;
    const asKey = { "x-api-key": key, "content-type": "application/json" };
    const byKey = await call(api.base, "PUT", "/log-retention", asKey, { webhook_log_days: 90 });
    assertEquals([byKey.status, byKey.data.error.code], [403, "user_required"]);
    const [row] = await sql()<{ days: number }[]>`
      select webhook_log_days as days from public.organization_log_retention where organization_id = ${a.organizationId}`;
    assertEquals(row!.days, 7);
  } finally {
    await api.close();
  }
});

Deno.test("bodies: JSON only, 64 KiB at most, an empty one is {}, and the declared schema decides", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    const { authorization } = admin;
    const endpoint = (await call(api.base, "POST", "/endpoints", admin, {
      url: "http://127.0.0.1:9/a",
      events: ["member.created"],
    })).data;
    const send = (path: string, headers: Record<string, string>, body?: string) =>
      fetch(`${api.base}${path}`, { method: "POST", headers, body }).then(async (r) => ({
        status: r.status,
        error: (await r.json()).error,
      }));
    const asText = await send("/api-keys", { authorization, "content-type": "text/plain" }, '{"name":"x"}');
    assertEquals([asText.status, asText.error.code], [415, "unsupported_media_type"]);
    const untyped = await send("/api-keys", { authorization }, '{"name":"x"}');
    assertEquals([untyped.status, untyped.error.code], [415, "unsupported_media_type"]);
    const huge = await send("/api-keys", admin, JSON.stringify({ name: "x".repeat(70 * 1024) }));
    assertEquals([huge.status, huge.error.code], [413, "payload_too_large"]);
    // No body at all, with or without a content type: {} (rotate-secret's fields are all optional).
    for (const headers of [{ authorization }, admin]) {
      const res = await fetch(`${api.base}/endpoints/${endpoint.id}/rotate-secret`, {
        method: "POST",
        headers,
      });
      assertEquals(res.status, 200, await res.text());
    }
    const empty = await send("/api-keys", { authorization });
    assertEquals([empty.status, empty.error.details.fields[0].field], [400, "name"]);
  } finally {
    await api.close();
  }
});

Deno.test("pagination is stable while deliveries are being written", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const admin = json(await tokenFor(a.admin, a.organizationId));
    await call(api.base, "POST", "/endpoints", admin, {
      url: "http://127.0.0.1:9/a",
      events: ["member.created"],
    });
    await sql()`insert into public.members (organization_id, first_name)
      select ${a.organizationId}, 'm' || g from generate_series(1, 40) g`;
    const before = new Set(
      (await sql()`select id from public.webhook_deliveries where organization_id = ${a.organizationId}`).map(
        (r) => r.id,
      ),
    );
    assertEquals(before.size, 40);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/deliveries?limit=7${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await call(api.base, "GET", q, admin);
      assertEquals(page.status, 200, page.text);
      seen.push(...page.data.data.map((d: { id: string }) => d.id));
      cursor = page.data.next_cursor;
      // Meanwhile new deliveries keep arriving.
      await addMemberRow(a.organizationId, `late${pages}`);
      pages++;
    } while (cursor && pages < 50);
    assertEquals(new Set(seen).size, seen.length, "no delivery on two pages");
    const missing = [...before].filter((id) => !seen.includes(id));
    assertEquals(
      missing,
      [],
      `every delivery that existed at the start was listed (${pages} pages, ${seen.length} seen)`,
    );
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
