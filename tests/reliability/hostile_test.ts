// Hostile input against every inbound endpoint (checkout-webhook, payments-webhook, messaging-webhook
// GET and POST): the checked-in corpus and a seeded mutation generator over each provider's valid
// payload, each sent with every signature variant; oversized bodies, wrong methods and content types.
// Promises checked: no 5xx for any client error, the service still answers /health, and nothing is
// written to the domain unless the signature was valid.
//
//   HOSTILE_SEED=<n>   replays another generator run (default below; the seed is printed)
//   HOSTILE_COUNT=<n>  mutations per endpoint (default 60; the long variant in RELIABILITY.md uses 2000)
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql } from "../helpers/db.ts";
import { createSubscription, paymentTenant } from "../helpers/payments.ts";
import { change, createAccount, textMessage, webhookBody } from "../helpers/whatsapp.ts";
import { type HostileCase, loadCorpus, mutations } from "../hostile/corpus.ts";
import { changed, domainSnapshot, pool, serveInbound, signatureVariants, waitHealthy } from "./harness.ts";

const DEFAULT_SEED = 20261122;
const seed = Number(Deno.env.get("HOSTILE_SEED") ?? DEFAULT_SEED);
const perEndpoint = Number(Deno.env.get("HOSTILE_COUNT") ?? 60);
console.log(`hostile: HOSTILE_SEED=${seed} HOSTILE_COUNT=${perEndpoint}`);

const inbound = await serveInbound();
const a = await paymentTenant();
const b = await paymentTenant();
const subA = await createSubscription(a.organizationId);
const accountA = await createAccount(a.organizationId);
const accountB = await createAccount(b.organizationId);

interface Target {
  name: string;
  url: string;
  header: string;
  secret: string;
  otherSecret: string;
  valid: unknown;
}

const at = new Date(Date.UTC(2026, 10, 22, 11, 0)).toISOString();
const bySegment: Target[] = [
  {
    name: "checkout",
    url: `${inbound.checkout}/${a.organizationId}`,
    header: "x-checkout-signature",
    secret: a.secret,
    otherSecret: b.secret,
    valid: {
      event: "charged",
      subscription_id: subA.gatewayId,
      occurred_at: at,
      payment: { id: "pay_hostile_valid", amount_minor: 50000, currency: "INR" },
    },
  },
  {
    name: "payments",
    url: `${inbound.payments}/${a.organizationId}`,
    header: "x-payments-signature",
    secret: a.secret,
    otherSecret: b.secret,
    valid: {
      event: "payment.captured",
      occurred_at: at,
      payment: { id: "pay_hostile_once", amount_minor: 1200, currency: "INR" },
    },
  },
  {
    name: "messaging",
    url: inbound.messaging,
    header: "x-hub-signature-256",
    secret: accountA.appSecret,
    otherSecret: accountB.appSecret,
    valid: webhookBody([change(accountA, { messages: [textMessage("15550001111", "hello")] })]),
  },
];
// The payment receivers also route by the payload (no organization in the URL).
const targets: Target[] = [
  ...bySegment,
  ...bySegment.filter((t) => t.name !== "messaging").map((t) => ({
    ...t,
    name: `${t.name} (routed by payload)`,
    url: t.url.slice(0, t.url.lastIndexOf("/")),
  })),
];

interface Outcome {
  label: string;
  status: number;
}

/** Every 5xx seen, with what was sent: the suite fails listing them all. */
let serverErrors: Outcome[] = [];
let sent = 0;
let totalServerErrors = 0;

async function send(
  url: string,
  init: RequestInit & { headers?: Record<string, string> },
  label: string,
): Promise<number> {
  sent++;
  let status: number;
  try {
    const res = await fetch(url, init);
    await res.body?.cancel();
    status = res.status;
  } catch (err) {
    // The server dropping the connection counts as a failure of ours, like a 5xx.
    status = 599;
    label += ` (${(err as Error).message})`;
  }
  if (status >= 500) {
    serverErrors.push({ label, status });
    totalServerErrors++;
  }
  return status;
}

async function sendSigned(t: Target, c: HostileCase, validOnly: boolean, invalidOnly: boolean) {
  for (const v of signatureVariants(t.secret, t.otherSecret)) {
    if ((validOnly && !v.valid) || (invalidOnly && v.valid)) continue;
    const headers: Record<string, string> = { "content-type": "application/json" };
    const signature = await v.value(c.body);
    if (signature !== null) headers[t.header] = signature;
    if (t.name !== "messaging") headers["idempotency-key"] = `hostile-${crypto.randomUUID()}`;
    await send(
      t.url,
      { method: "POST", headers, body: c.body as BodyInit },
      `${t.name} ${c.name} [${v.name}]`,
    );
  }
}

function assertNoServerErrors(step: string) {
  const errors = serverErrors;
  serverErrors = [];
  assertEquals(
    errors.length,
    0,
    `${step}: ${errors.length} server errors:\n${
      errors.slice(0, 20).map((e) => `${e.status} ${e.label}`).join("\n")
    }`,
  );
}

async function assertHealthy() {
  for (const base of [inbound.checkout, inbound.payments, inbound.messaging]) {
    await waitHealthy(`${base}/health`, 5_000);
  }
}

Deno.test("corpus and generated mutations with wrong or missing signatures: no 5xx, no domain row", async () => {
  const corpus = await loadCorpus();
  const before = await domainSnapshot();
  const sentBefore = sent;
  for (const t of targets) {
    const cases = [...corpus, ...mutations(t.valid, perEndpoint, seed)];
    await pool(cases, 8, (c) => sendSigned(t, c, false, true));
  }
  const after = await domainSnapshot();
  console.log(`hostile: ${sent - sentBefore} wrongly signed requests, ${serverErrors.length} 5xx`);
  assertNoServerErrors("wrong signatures");
  assertEquals(changed(before, after), [], "nothing is written without a valid signature");
  await assertHealthy();
});

Deno.test("corpus and generated mutations validly signed (plain, upper-case, sha256=): no 5xx", async () => {
  const corpus = await loadCorpus();
  const sentBefore = sent;
  for (const t of targets) {
    const cases = [...corpus, ...mutations(t.valid, perEndpoint, seed)];
    await pool(cases, 8, (c) => sendSigned(t, c, true, false));
  }
  console.log(`hostile: ${sent - sentBefore} validly signed requests, ${serverErrors.length} 5xx`);
  assertNoServerErrors("valid signatures");
  await assertHealthy();
});

Deno.test("oversized bodies are 413 whether declared or streamed, signed or not", async () => {
  const big = new Uint8Array(1024 * 1024 + 1).fill(0x61);
  for (const t of targets) {
    for (const signed of [false, true]) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (signed) headers[t.header] = "0".repeat(64);
      assertEquals(
        await send(t.url, { method: "POST", headers, body: big }, `${t.name} 1 MiB+1 declared`),
        413,
      );
      // No Content-Length: the body arrives chunked and the reader stops at the limit.
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 17; i++) controller.enqueue(new Uint8Array(64 * 1024).fill(0x62));
          controller.close();
        },
      });
      assertEquals(
        await send(t.url, { method: "POST", headers, body: stream }, `${t.name} 1 MiB+ chunked`),
        413,
      );
    }
  }
  assertNoServerErrors("oversized");
  await assertHealthy();
});

Deno.test("wrong methods and content types are 4xx, never 5xx", async () => {
  const before = await domainSnapshot();
  for (const t of targets) {
    for (const method of ["PUT", "DELETE", "PATCH", ...(t.name === "messaging" ? [] : ["GET"])]) {
      const status = await send(
        t.url,
        { method, body: method === "GET" ? undefined : "{}" },
        `${t.name} ${method}`,
      );
      assert(status >= 400 && status < 500, `${t.name} ${method}: ${status}`);
    }
    const raw = new TextEncoder().encode(JSON.stringify(t.valid));
    for (
      const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "",
      ]
    ) {
      // Wrong content type, unsigned or signed by another organization: refused, nothing written.
      for (const v of signatureVariants(t.secret, t.otherSecret).filter((v) => !v.valid)) {
        const headers: Record<string, string> = { "content-type": type };
        const sig = await v.value(raw);
        if (sig !== null) headers[t.header] = sig;
        const status = await send(
          t.url,
          { method: "POST", headers, body: raw },
          `${t.name} ${type} ${v.name}`,
        );
        assert(status >= 400 && status < 500, `${t.name} ${type} ${v.name}: ${status}`);
      }
    }
  }
  assertEquals(changed(before, await domainSnapshot()), []);
  assertNoServerErrors("methods and content types");
  await assertHealthy();
});

Deno.test("messaging GET handshake with hostile query strings: 403/400, never 5xx", async () => {
  const q = (params: string) => `${inbound.messaging}?${params}`;
  const cases: [string, number][] = [
    ["", 403],
    ["hub.mode=subscribe", 403],
    ["hub.mode=subscribe&hub.verify_token=&hub.challenge=1", 403],
    [`hub.mode=subscribe&hub.verify_token=${"x".repeat(8000)}&hub.challenge=1`, 403],
    [`hub.mode=unsubscribe&hub.verify_token=${accountA.verifyToken}&hub.challenge=1`, 403],
    [`hub.mode=subscribe&hub.verify_token=${accountA.verifyToken}`, 400],
    [`hub.mode=subscribe&hub.verify_token=${accountA.verifyToken}&hub.challenge=${"9".repeat(300)}`, 400],
    ["hub.mode=subscribe&hub.verify_token=%00%ff%fe&hub.challenge=1", 403],
    ["hub.mode=subscribe&hub.verify_token=%E0%A4%A&hub.challenge=1", 403],
    [`hub.mode=subscribe&hub.verify_token=${accountA.verifyToken.toUpperCase()}&hub.challenge=1`, 403],
    [`hub.mode=subscribe&hub.verify_token=${accountA.verifyToken} &hub.challenge=1`, 403],
    [`hub.mode=subscribe&hub.verify_token=' or '1'='1&hub.challenge=1`, 403],
    [`hub.mode[]=subscribe&hub.verify_token=${accountA.verifyToken}&hub.challenge=1`, 403],
  ];
  for (const [params, expected] of cases) {
    assertEquals(
      await send(q(params), { method: "GET" }, `messaging GET ?${params.slice(0, 60)}`),
      expected,
      params,
    );
  }
  // Control: the real token still answers the challenge.
  const ok = await fetch(q(`hub.mode=subscribe&hub.verify_token=${accountA.verifyToken}&hub.challenge=4242`));
  assertEquals([ok.status, await ok.text()], [200, "4242"]);
  assertNoServerErrors("messaging GET");
});

Deno.test("hostile summary and cleanup", async () => {
  console.log(`hostile: ${sent} requests in total, ${totalServerErrors} 5xx, seed ${seed}`);
  await assertHealthy();
  await inbound.close();
  await closeSql();
});
