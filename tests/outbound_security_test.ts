// Attacks on outbound webhooks and their operations (existence oracle, internal names, address ranges,
// Retry-After, an organization's own secret): each as it was performed, kept as a regression test
// (each failed before its fix).
import { Webhook } from "standardwebhooks";
import { assert, assertEquals } from "./helpers/assert.ts";
import { asConfigApi, closeSql, createTenant, sql, type Tx } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import {
  createEndpoint,
  deliveriesOf,
  headerObject,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";
import { verifyHexSignature } from "../supabase/functions/_shared/hmac.ts";
import { blockedAddressReason, checkTargetUrl } from "../supabase/functions/_shared/webhook_targets.ts";

const json = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

async function post(base: string, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  // deno-lint-ignore no-explicit-any
  return { status: res.status, text, data: JSON.parse(text || "null") as any };
}

const fails = (p: Promise<unknown>) =>
  p.then(() => ({ code: "none", message: "succeeded" }), (e) => ({ code: e.code, message: e.message }));

Deno.test("existence oracle: the operations answer alike for another organization's row and a missing one, and lock neither", async () => {
  const a = await createTenant();
  const b = await createTenant();
  const receiver = await startReceiver(() => new Response("no", { status: 500 }));
  const ep = await createEndpoint(a.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${a.organizationId}, 'x')`;
    const [delivery] = await deliveriesOf(ep.id);
    const missing = crypto.randomUUID();
    const calls: [string, (id: string) => (tx: Tx) => Promise<unknown>][] = [
      ["webhook_redeliver", (id) => (tx) => tx`select public.webhook_redeliver(${id})`],
      ["webhook_send_test_event", (id) => (tx) => tx`select public.webhook_send_test_event(${id})`],
      ["webhook_rotate_secret", (id) => (tx) => tx`select public.webhook_rotate_secret(${id})`],
    ];
    for (const [name, call] of calls) {
      const theirs = name === "webhook_redeliver" ? delivery!.id : ep.id;
      const other = await fails(asConfigApi(b.adminClaims, call(theirs)));
      const none = await fails(asConfigApi(b.adminClaims, call(missing)));
      assertEquals(other.code, "42501", `${name}: refused`);
      assertEquals(other, none, `${name}: another organization's id and a random one look the same`);
    }
    // While A's dispatcher (here: a transaction) holds A's rows, B's probes answer at once: the caller
    // is checked before anything is locked.
    await sql().begin(async (held) => {
      await held`select 1 from public.webhook_deliveries where id = ${delivery!.id} for update`;
      await held`select 1 from public.webhook_endpoints where id = ${ep.id} for update`;
      for (const [name, call] of calls) {
        const theirs = name === "webhook_redeliver" ? delivery!.id : ep.id;
        const got = await fails(asConfigApi(b.adminClaims, async (tx) => {
          await tx`set local lock_timeout = '500ms'`;
          return await call(theirs)(tx);
        }));
        assertEquals(got.code, "42501", `${name}: answered without waiting for A's lock (${got.message})`);
      }
    });
    // Staff of A are refused before any lookup too, with the same answer for A's row and a random id.
    const staffTheirs = await fails(asConfigApi(a.staffClaims, calls[0]![1](delivery!.id)));
    const staffNone = await fails(asConfigApi(a.staffClaims, calls[0]![1](missing)));
    assertEquals(staffTheirs, staffNone);
    // The organization's own admin still operates.
    await asConfigApi(a.adminClaims, calls[1]![1](ep.id));
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("internal names: a refused URL never tells an internal name from one that does not exist, nor its address", async () => {
  const resolve = (host: string) =>
    host === "db.corp.internal.example"
      ? Promise.resolve(["10.1.2.3"])
      : host === "loop.corp.internal.example"
      ? Promise.resolve(["127.0.0.1"])
      : Promise.reject(new Error("NXDOMAIN"));
  const reasons: string[] = [];
  for (const name of ["db", "loop", "nothing"]) {
    const v = await checkTargetUrl(`https://${name}.corp.internal.example/hook`, {
      allowPrivate: false,
      resolve,
    });
    assert(!v.ok);
    if (!v.ok) reasons.push(v.reason.replace(name, "<host>"));
  }
  // A private address, a loopback one, and no address at all: one answer, naming no address.
  assertEquals(new Set(reasons).size, 1, reasons.join(" | "));
  assert(
    !reasons[0]!.includes("10.1.2.3") && !/private|loopback|could not/.test(reasons[0]!),
    reasons[0]!,
  );
  // The dispatcher's record of a refused send (shown in Webhook Logs) does not reveal it either.
  const tenant = await createTenant();
  const ep = await createEndpoint(tenant.organizationId, "https://db.corp.internal.example/hook", [
    "member.created",
  ]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x')`;
    await testEngine({ allowPrivateTargets: false, resolve }).run({ stopWhenIdle: true });
    const [d] = await deliveriesOf(ep.id);
    assertEquals(
      d!.last_error,
      "target refused: db.corp.internal.example does not resolve to a public internet address",
    );
    assert(!d!.last_error!.includes("10.1.2.3"), d!.last_error!);
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("address ranges: in development, metadata written in IPv6 translation forms is still refused", () => {
  // ::ffff:0:a.b.c.d (SIIT, RFC 6145) and the local-use NAT64 prefix 64:ff9b:1::/48 carry an IPv4
  // address a translator reaches; production refuses both prefixes outright, development must still see
  // the metadata address inside.
  for (
    const address of [
      "::ffff:0:a9fe:a9fe",
      "::ffff:0:169.254.169.254",
      "64:ff9b:1::a9fe:a9fe",
      "64:ff9b:1::6464:64c8", // 100.100.100.200
    ]
  ) {
    assert(blockedAddressReason(address, true) !== null, `${address} must be refused in development`);
    assert(blockedAddressReason(address, false) !== null, `${address} must be refused in production`);
  }
  // A translated public address stays refused in production (the prefix is not globally reachable).
  assert(blockedAddressReason("::ffff:0:808:808", false) !== null);
  assert(blockedAddressReason("64:ff9b:1::808:808", false) !== null);
  assertEquals(blockedAddressReason("::ffff:0:7f00:1", true), null, "loopback stays allowed in development");
});

Deno.test("address ranges: IPv4-translated and IANA special-purpose ranges are refused; metadata even in development", async () => {
  for (
    const a of [
      "::ffff:0:7f00:1", // IPv4-translated ::ffff:0:0/96 (127.0.0.1)
      "[::ffff:0:7f00:1]",
      "::ffff:0:a01:203",
      "2001:2::1", // benchmarking
      "2001:20::1", // ORCHIDv2
      "3fff::1", // documentation
      "5f00::1", // SRv6
      "192.31.196.1", // AS112
      "192.175.48.1",
      "2001:4:112::1",
      "2620:4f:8000::1",
      "64:ff9b:1::1", // NAT64 local-use
      "100.100.100.200", // Alibaba metadata (in CGNAT)
    ]
  ) {
    assert(blockedAddressReason(a) !== null, `${a} must be refused`);
  }
  for (const a of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "192.52.193.1"]) {
    assertEquals(blockedAddressReason(a), null, `${a} is globally reachable`);
  }
  const prod = await checkTargetUrl("https://[::ffff:0:7f00:1]/hook", { allowPrivate: false });
  assert(!prod.ok, "the bracketed IPv4-translated loopback URL is refused");

  // Development mode allows loopback, never cloud metadata: literal, embedded, by name, or resolved.
  const dev = { allowPrivate: true };
  assert((await checkTargetUrl("http://127.0.0.1:8080/hook", dev)).ok);
  for (
    const url of [
      "http://169.254.169.254/latest",
      "http://[::ffff:169.254.169.254]/latest",
      "http://[fd00:ec2::254]/latest",
      "http://168.63.129.16/",
      "http://100.100.100.200/",
      "http://metadata.google.internal/computeMetadata/v1/",
    ]
  ) {
    assert(!(await checkTargetUrl(url, dev)).ok, `${url} must be refused in development too`);
  }
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const tenant = await createTenant();
  try {
    const admin = json(await tokenFor(tenant.admin, tenant.organizationId));
    const res = await post(api.base, "/endpoints", admin, {
      url: "http://169.254.169.254/latest",
      events: ["member.created"],
    });
    assertEquals(res.status, 400, res.text);
    assertEquals(res.data.error.code, "invalid_url");
  } finally {
    await api.close();
  }
  // A name that resolves to the metadata address is refused at send time in development as well.
  const ep = await createEndpoint(tenant.organizationId, "http://imds.attacker.example/latest", [
    "member.created",
  ]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x')`;
    const resolve = () => Promise.resolve(["169.254.169.254"]);
    await testEngine({ allowPrivateTargets: true, resolve }).run({ stopWhenIdle: true });
    const [d] = await deliveriesOf(ep.id);
    assertEquals(
      d!.last_error,
      "target refused: imds.attacker.example does not resolve to a public internet address",
    );
  } finally {
    await retireEndpoints(ep.id);
  }
});

Deno.test("Retry-After only lengthens our backoff, and is capped", async () => {
  const tenant = await createTenant();
  const eager = await startReceiver((_r, i) =>
    new Response("busy", { status: 503, headers: { "retry-after": i % 2 ? "0" : "1" } })
  );
  const lazy = await startReceiver(() =>
    new Response("busy", { status: 503, headers: { "retry-after": "999999" } })
  );
  const epEager = await createEndpoint(tenant.organizationId, `${eager.url}/hook`, ["member.created"]);
  const epLazy = await createEndpoint(tenant.organizationId, `${lazy.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name)
                select ${tenant.organizationId}, 'm' || g from generate_series(1, 2) g`;
    await testEngine().run({ stopWhenIdle: true });
    const seconds = (d: { next_attempt_at: Date | null }) =>
      (d.next_attempt_at!.getTime() - Date.now()) / 1000;
    for (const d of await deliveriesOf(epEager.id)) {
      assertEquals(d.status, "retrying");
      assert(seconds(d) >= 7, `Retry-After 0/1 did not shorten our 10 s (±25%) backoff: ${seconds(d)} s`);
    }
    for (const d of await deliveriesOf(epLazy.id)) {
      assert(seconds(d) > 3500 && seconds(d) <= 3601, `Retry-After capped at 1 hour: ${seconds(d)} s`);
    }
    // Two more seconds of dispatching: nothing is due, the receiver is not hammered.
    await new Promise((r) => setTimeout(r, 1500));
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(eager.requests.length, 2, "one attempt per delivery, no quick retries");
  } finally {
    await retireEndpoints(epEager.id, epLazy.id);
    await Promise.all([eager.close(), lazy.close()]);
  }
});

Deno.test("own secret: an organization's own secret is accepted and signs both schemes", async () => {
  const own = "our-church-webhook-secret-2026";
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const receiver = await startReceiver();
  const tenant = await createTenant();
  let endpointId: string | undefined;
  try {
    const admin = json(await tokenFor(tenant.admin, tenant.organizationId));
    const created = await post(api.base, "/endpoints", admin, {
      url: `${receiver.url}/hook`,
      events: ["member.created"],
      secret: own,
    });
    assertEquals(created.status, 201, created.text);
    assertEquals(created.data.secret, own);
    endpointId = created.data.id;
    // Weak or ambiguous secrets are still refused, by the API and by the database.
    for (
      const weak of [
        "short-secret-2026",
        "a".repeat(30),
        "whsec_not-base64-at-all-but-long-enough",
        "x y".repeat(10),
      ]
    ) {
      const res = await post(api.base, "/endpoints", admin, {
        url: `${receiver.url}/hook`,
        events: ["member.created"],
        secret: weak,
      });
      assertEquals(res.status, 400, `${weak}: ${res.text}`);
      const db = await fails(sql()`insert into public.webhook_endpoints (organization_id, url, events, secret)
        values (${tenant.organizationId}, ${receiver.url}, ${["member.created"]}, ${weak})`);
      assertEquals(db.code, "23514", weak);
    }

    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x')`;
    await testEngine().run({ stopWhenIdle: true });
    const [req] = await receiver.waitFor(1);
    // The hex header is HMAC-SHA256 keyed with the secret exactly as the organization typed it.
    assert(await verifyHexSignature(own, req!.body, req!.headers.get("x-webhook-signature")));
    // Standard Webhooks: keyed with the secret's UTF-8 bytes (the libraries' "raw" format).
    new Webhook(own, { format: "raw" }).verify(req!.text, headerObject(req!.headers));
  } finally {
    if (endpointId) await retireEndpoints(endpointId);
    await api.close();
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
