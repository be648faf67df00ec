// Attacks on the configuration API as deployed (server pool + user pool, tokens verified with the
// test key, SUPABASE_URL unset as in tests and local runs), each of which once got through:
//   - a revoked API key was restored by an admin clearing revoked_at;
//   - a tampered pagination cursor gave 500 on /deliveries and /inbound-log;
//   - a check-constraint name leaked in an error; a JWT without `exp` was accepted; the issuer went
//     unchecked without SUPABASE_URL; a user token carrying `api_key_id` acted as that API key;
//     /samples for API keys disagreed with docs/configuration-api.md#who-can-call-it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { asConfigApi, closeSql, createTenant, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { decodeCursor, encodeCursor } from "../supabase/functions/webhooks/cursor.ts";
import { AppError } from "../supabase/functions/_shared/errors.ts";

const auth = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });
const b64url = (s: string) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

// A mulberry32 generator: a failing run prints its seed, and SECURITY_FUZZ_SEED replays it.
const seed = Number(Deno.env.get("SECURITY_FUZZ_SEED") ?? Math.floor(Math.random() * 2 ** 31));
function rng(s: number) {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

Deno.test("tampered cursor: a tampered cursor on /deliveries and /inbound-log is a 400, never a 500", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    const tampered = [
      ["2026-01-01 00:00:00+99", crypto.randomUUID()], // the attack as reported
      ["2026-13-01 00:00:00+00", crypto.randomUUID()],
      ["2026-02-30 00:00:00+00", crypto.randomUUID()],
      ["2026-01-01 25:00:00+00", crypto.randomUUID()],
      ["2026-01-01 00:61:00+00", crypto.randomUUID()],
      ["0000-01-01 00:00:00+00", crypto.randomUUID()],
      ["2026-01-01 00:00:00+14:99", crypto.randomUUID()],
      ["2026-01-01 00:00:00", "not-a-uuid"],
      [12345, crypto.randomUUID()],
    ];
    for (const path of ["/deliveries", "/inbound-log"]) {
      for (const value of tampered) {
        const res = await fetch(`${api.base}${path}?cursor=${b64url(JSON.stringify(value))}`, {
          headers: auth(admin),
        });
        const body = await res.json();
        assertEquals(
          [res.status, body.error?.code],
          [400, "invalid_cursor"],
          `${path} ${JSON.stringify(value)}`,
        );
      }
    }
    // Control: a cursor this API would hand out still pages.
    const good = encodeCursor({ cursor_at: "2026-01-01 00:00:00.123456+00", id: crypto.randomUUID() });
    for (const path of ["/deliveries", "/inbound-log"]) {
      const res = await fetch(`${api.base}${path}?cursor=${good}`, { headers: auth(admin) });
      assertEquals(res.status, 200, path);
      await res.body?.cancel();
    }
  } finally {
    await api.close();
  }
});

Deno.test("tampered cursor: fuzzed cursors either decode to a timestamp PostgreSQL accepts or are refused as 400", async () => {
  const random = rng(seed);
  const alphabet = "0123456789-+:. TZ:abc\u0000é";
  const base = JSON.stringify(["2026-11-22 10:15:30.123456+00", "3f0e4c1a-1b2c-4d3e-8f40-5a6b7c8d9e0f"]);
  const decoded: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const chars = [...base];
    const edits = 1 + Math.floor(random() * 3);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(random() * chars.length);
      const c = alphabet[Math.floor(random() * alphabet.length)]!;
      const op = random();
      if (op < 0.6) chars[at] = c;
      else if (op < 0.8) chars.splice(at, 0, c);
      else chars.splice(at, 1);
    }
    const text = chars.join("");
    const cursor = random() < 0.9 ? b64url(unescape(encodeURIComponent(text))) : text;
    try {
      decoded.push(decodeCursor(cursor)[0]);
    } catch (err) {
      assert(err instanceof AppError && err.status === 400, `seed ${seed}: ${text} threw ${err}`);
    }
  }
  assert(decoded.length > 20, `seed ${seed}: the fuzzer produced few valid cursors (${decoded.length})`);
  // Everything the decoder let through is a timestamp PostgreSQL accepts.
  for (const at of new Set(decoded)) {
    try {
      await sql()`select ${at}::text::timestamptz`;
    } catch (err) {
      throw new Error(
        `seed ${seed}: decodeCursor accepted ${JSON.stringify(at)}, PostgreSQL refused: ${err}`,
      );
    }
  }
});

Deno.test("error details: a check violation answers with the field, never the constraint's name", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    // URLs the TypeScript check accepts but the table's syntax check refuses.
    const res = await fetch(`${api.base}/endpoints`, {
      method: "POST",
      headers: auth(admin),
      body: JSON.stringify({ url: "http://127.0.0.1:9/a b", events: ["member.created"] }),
    });
    const text = await res.text();
    assertEquals(res.status, 400, text);
    assert(!/_check|_key|_fkey|constraint|violates|relation/i.test(text), `leaks a database name: ${text}`);
    const body = JSON.parse(text);
    assertEquals(body.error.details?.fields?.[0]?.field, "url", text);
  } finally {
    await api.close();
  }
});

Deno.test("token checks: tokens without exp, with a foreign or missing issuer are refused; the local issuer is accepted", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const get = (t: string) => fetch(`${api.base}/endpoints`, { headers: auth(t) });
    const cases: [string, string, number][] = [
      ["no exp", await tokenFor(a.admin, a.organizationId, { expiresIn: null }), 401],
      [
        "foreign issuer",
        await tokenFor(a.admin, a.organizationId, { issuer: "https://evil.example/auth/v1" }),
        401,
      ],
      ["no issuer", await tokenFor(a.admin, a.organizationId, { issuer: null }), 401],
      ["control: local issuer, with exp", await tokenFor(a.admin, a.organizationId), 200],
    ];
    for (const [name, token, status] of cases) {
      const res = await get(token);
      const body = await res.json();
      assertEquals(res.status, status, `${name}: ${JSON.stringify(body)}`);
      if (status === 401) assertEquals(body.error.code, "invalid_token", name);
    }
  } finally {
    await api.close();
  }
});

Deno.test("token checks: a user token carrying api_key_id is that user, never the API key", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    const key = await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: auth(admin),
      body: JSON.stringify({ name: "Zapier" }),
    })).json();
    // Staff may not configure webhooks; the same staff token naming the organization's live key must not either.
    const staff = await tokenFor(a.staff, a.organizationId, { claims: { api_key_id: key.id } });
    for (
      const [method, path, body] of [
        ["GET", "/endpoints", undefined],
        ["GET", "/deliveries", undefined],
        ["GET", "/samples/member.created", undefined],
      ] as const
    ) {
      const res = await fetch(`${api.base}${path}`, {
        method,
        headers: auth(staff),
        body: body && JSON.stringify(body),
      });
      const answer = await res.json();
      assertEquals([res.status, answer.error?.code], [403, "admin_required"], `${method} ${path}`);
    }
    // Through the database alone (as the configuration API's role, the only one that reaches the
    // webhook tables, would run such a token): no key rights either.
    const [row] = await sql().begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${
        JSON.stringify({
          sub: a.staff.id,
          role: "authenticated",
          organization_id: a.organizationId,
          session_id: a.staff.sessionId,
          api_key_id: key.id,
        })
      }, true), set_config('role', 'config_api', true)`;
      return await tx<{ org: string | null; endpoints: number }[]>`
        select private.api_key_organization_id() as org,
               (select count(*)::int from public.webhook_endpoints) as endpoints`;
    });
    assertEquals(row!.org, null, "a signed-in user's claims never name an API key");
    // Control: the key itself still works.
    const asKey = await fetch(`${api.base}/endpoints`, { headers: { "x-api-key": key.key } });
    assertEquals(asKey.status, 200);
    await asKey.body?.cancel();
  } finally {
    await api.close();
  }
});

Deno.test("samples for API keys: an API key reads samples only of event types it could subscribe to (docs/configuration-api.md: the same rows a subscription delivers)", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    const key = (await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: auth(admin),
      body: JSON.stringify({ name: "Zapier" }),
    })).json()).key;
    await sql()`insert into public.webhook_endpoints (organization_id, url, events)
                values (${a.organizationId}, 'https://hooks.example.org/samples', array['member.created'])`;
    await sql()`insert into public.members (organization_id, first_name) values (${a.organizationId}, 'Sample')`;
    const samples = await fetch(`${api.base}/samples/member.created`, { headers: { "x-api-key": key } });
    assertEquals(samples.status, 200);
    const bodies = await samples.json();
    assertEquals(
      bodies[0].data.row.first_name,
      "Sample",
      "the body a subscription to member.created delivers",
    );
    const internal = await fetch(`${api.base}/samples/webhook.test`, { headers: { "x-api-key": key } });
    assertEquals(internal.status, 404, "no samples of event types one cannot subscribe to");
    await internal.body?.cancel();
  } finally {
    await api.close();
  }
});

Deno.test("revocation is final: a key revoked through the API cannot be restored by an admin with direct SQL", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    const key = await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: auth(admin),
      body: JSON.stringify({ name: "Leaked" }),
    })).json();
    const revoked = await fetch(`${api.base}/api-keys/${key.id}`, { method: "DELETE", headers: auth(admin) });
    assertEquals(revoked.status, 200);
    await revoked.body?.cancel();
    // The attack as reported: the admin clears revoked_at in SQL, with the configuration API's role
    // (PostgREST's cannot reach the table at all).
    const restore = await asConfigApi(
      a.adminClaims,
      (tx) => tx`update public.organization_api_keys set revoked_at = null where id = ${key.id}`,
    ).then(
      () => "restored",
      (err) => (err as { code?: string }).code,
    );
    assertEquals(restore, "42501");
    const probe = await fetch(`${api.base}/endpoints`, { headers: { "x-api-key": key.key } });
    assertEquals([probe.status, (await probe.json()).error.code], [401, "invalid_api_key"]);
  } finally {
    await api.close();
  }
});

Deno.test("malformed text: a NUL character or an unpaired surrogate in any body or query field is a 400 naming it, never a 500", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const admin = await tokenFor(a.admin, a.organizationId);
    // JSON escapes, so the bytes on the wire are the ones a hostile client sends.
    const cases: [string, string, string | undefined, string][] = [
      [
        "POST",
        "/endpoints",
        '{"url":"http://127.0.0.1:9/a","events":["member.created"],"description":"a\\u0000b"}',
        "description",
      ],
      [
        "POST",
        "/endpoints",
        '{"url":"http://127.0.0.1:9/a","events":["member.created"],"description":"a\\ud800b"}',
        "description",
      ],
      ["POST", "/api-keys", '{"name":"Zapier\\u0000"}', "name"],
      ["POST", "/invitations/accept", '{"token":"inv_\\u0000"}', "token"],
      ["POST", "/invitations", '{"email":"someone@example.org","role":"staff","x":"\\u0000"}', ""],
      ["GET", "/deliveries?event_type=member.created%00", undefined, "event_type"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await fetch(`${api.base}${path}`, { method, headers: auth(admin), body });
      const text = await res.text();
      if (field === "") {
        // An unknown key is dropped by the schema before it reaches the database: not an error.
        assert(res.status < 500, `${method} ${path}: ${res.status} ${text}`);
        continue;
      }
      assertEquals(res.status, 400, `${method} ${path} ${body ?? ""}: ${text}`);
      assertEquals(JSON.parse(text).error.details?.fields?.[0]?.field, field, text);
    }
    const [row] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_endpoints where organization_id = ${a.organizationId}`;
    assertEquals(row?.n, 0, "nothing was stored");
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
