// Benchmark: checkout-webhook over loopback vs. the same SQL issued directly, at the same concurrency.
//
//   bash scripts/bench/checkout_webhook.sh [--write]     (throwaway cluster; --write updates docs/benchmarks/checkout-webhook.md)
//   BENCH_DATABASE_URL=... deno run -A scripts/bench/checkout_webhook.ts [--write]
//
// Workload: signed `charged` events (unique Idempotency-Key and payment id) spread over 1000
// subscriptions of one organization: each moves a subscription and records a donation. "Direct" runs,
// per event, exactly the pipeline's three statements (find the organization and secret, write the log
// row, apply) with the receiver's and the pipeline's own functions, on a pool of the same size as the app's. "App"
// sends the HTTP requests to scripts/dev.ts in its own process, so HTTP, HMAC, validation and JSON are
// what separates the two. Rounds alternate (direct, app, direct, app, ...) and medians are reported.
import { parseArgs } from "node:util";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";
import { logVerified } from "../../supabase/functions/_shared/inbound/store.ts";
import type { Change } from "../../supabase/functions/_shared/inbound/types.ts";
import { receiver } from "../../supabase/functions/checkout-webhook/app.ts";
import { KeepAliveClient } from "./http_client.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    write: { type: "boolean", default: false },
    concurrency: { type: "string", default: "32" },
    requests: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    pool: { type: "string", default: "10" },
  },
});
const CONCURRENCY = Number(values.concurrency);
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const POOL = Number(values.pool);
const SUBSCRIPTIONS = 1000;
const dbUrl = Deno.env.get("BENCH_DATABASE_URL") ?? Deno.env.get("SUPABASE_DB_URL");
if (!dbUrl) throw new Error("set BENCH_DATABASE_URL (or run scripts/bench/checkout_webhook.sh)");

const sql = createSql(dbUrl, { max: POOL });

// One organization with a secret and its subscriptions.
const [org] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('Bench church') returning id`;
const organizationId = org!.id;
const secret = `whsec_${crypto.randomUUID()}`;
await sql`insert into public.organization_settings (organization_id, webhook_secret) values (${organizationId}, ${secret})`;
await sql`
  insert into public.recurring_donations (organization_id, gateway_subscription_id, status, amount_minor, currency)
  select ${organizationId}, 'sub_bench_' || g, 'active', 50000, 'INR' from generate_series(1, ${SUBSCRIPTIONS}) g`;

let seq = 0;
function nextEvent() {
  const n = seq++;
  const body = {
    event: "charged",
    subscription_id: `sub_bench_${(n % SUBSCRIPTIONS) + 1}`,
    occurred_at: new Date(Date.now()).toISOString(),
    payment: { id: `pay_bench_${n}`, amount_minor: 50000, currency: "INR" },
  };
  return { key: `evt_bench_${n}_${crypto.randomUUID()}`, body };
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

interface Prepared {
  key: string;
  body: ReturnType<typeof nextEvent>["body"];
  raw: string;
  signature: string;
}

/** Events are made and signed before the clock starts: signing is the provider's cost, not ours. */
async function prepare(n: number): Promise<Prepared[]> {
  const out: Prepared[] = [];
  for (let i = 0; i < n; i++) {
    const { key, body } = nextEvent();
    const raw = JSON.stringify(body);
    out.push({ key, body, raw, signature: await hmacSha256Hex(secret, raw) });
  }
  return out;
}

async function drive(n: number, one: (p: Prepared) => Promise<boolean>): Promise<Result> {
  const prepared = await prepare(n);
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (issued < n) {
      const p = prepared[issued++]!;
      const t0 = performance.now();
      const ok = await one(p).catch(() => false);
      latencies.push(performance.now() - t0);
      if (!ok) errors++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!;
  return { rps: n / elapsed, p50: pct(0.5), p99: pct(0.99), errors };
}

// The SQL a delivery costs, issued directly: the pipeline's own statements.
async function direct({ key, body, raw: text }: Prepared): Promise<boolean> {
  const { targets } = await receiver.route(sql, body, organizationId);
  const bytes = new TextEncoder().encode(text);
  const logged = await logVerified(sql, {
    organizationId: targets[0]!.organizationId,
    accountId: null,
    provider: "checkout",
    event: body.event,
    idempotencyKey: key,
    bodySha256: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
    bodyBytes: bytes.byteLength,
    payloadText: text,
    rawBody: null,
    headers: { "content-type": "application/json", "idempotency-key": key },
  });
  const change: Change = {
    kind: "subscription",
    subscription_id: body.subscription_id,
    status: "active",
    occurred_at: body.occurred_at,
    payment_failed: false,
    payment: { ...body.payment, paid_at: body.occurred_at },
  };
  const result = await receiver.apply(sql, logged.id, change);
  return result.outcome === "applied" || result.outcome === "stale";
}

// The app in its own process, served as its index.ts deploys it.
const server = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    // e.g. BENCH_SERVER_FLAGS="--cpu-prof-dir=/tmp/prof --cpu-prof-md" to profile the app under load
    ...(Deno.env.get("BENCH_SERVER_FLAGS")?.split(/\s+/).filter(Boolean) ?? []),
    "--allow-net",
    "--allow-env",
    "--allow-read",
    "--allow-sys",
    "scripts/bench/serve_function.ts",
    "checkout-webhook",
  ],
  env: { SUPABASE_DB_URL: dbUrl, PORT: "0", DB_POOL_MAX: String(POOL) },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
let banner = "";
let base: string | undefined;
while (!base) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`dev server exited: ${banner}`);
  banner += value;
  base = banner.match(/serving (http:\/\/127\.0\.0\.1:\d+\/checkout-webhook)/)?.[1];
}
const url = `${base}/${organizationId}`;
// Keep reading so the child never blocks on a full pipe.
(async () => {
  while (!(await reader.read()).done) { /* drain */ }
})();

// One keep-alive connection per concurrent worker, as a provider's delivery workers would hold.
const target = new URL(url);
const clients = await Promise.all(
  Array.from({ length: CONCURRENCY }, () => KeepAliveClient.connect(target.hostname, Number(target.port))),
);
const idle = [...clients];
async function app({ key, raw, signature }: Prepared): Promise<boolean> {
  const client = idle.pop()!;
  try {
    const res = await client.send(
      KeepAliveClient.post(target, {
        "content-type": "application/json",
        "idempotency-key": key,
        "x-checkout-signature": signature,
      }, raw),
    );
    return res.status === 200;
  } finally {
    idle.push(client);
  }
}

// The same app in this process, called without HTTP: separates the pipeline's cost from the HTTP stack's.
const { createApp } = await import("../../supabase/functions/checkout-webhook/app.ts");
const { loadConfig } = await import("../../supabase/functions/_shared/config.ts");
const inProcessApp = createApp({ sql, config: loadConfig({ SUPABASE_DB_URL: dbUrl }) });
const inProcessUrl = `http://bench.local/checkout-webhook/${organizationId}`;
async function inProcess({ key, raw, signature }: Prepared): Promise<boolean> {
  const res = await inProcessApp.fetch(
    new Request(inProcessUrl, {
      method: "POST",
      body: raw,
      headers: {
        "content-type": "application/json",
        "idempotency-key": key,
        "x-checkout-signature": signature,
      },
    }),
  );
  await res.body?.cancel();
  return res.status === 200;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rounds: { direct: Result[]; app: Result[]; inProcess: Result[] } = {
  direct: [],
  app: [],
  inProcess: [],
};
try {
  // Warm-up: connections, JIT, plan caches.
  await drive(300, direct);
  await drive(300, app);
  for (let r = 0; r < ROUNDS; r++) {
    rounds.direct.push(await drive(REQUESTS, direct));
    rounds.app.push(await drive(REQUESTS, app));
    rounds.inProcess.push(await drive(REQUESTS, inProcess));
    console.error(
      `round ${r + 1}: direct ${rounds.direct[r]!.rps.toFixed(0)} req/s, app ${
        rounds.app[r]!.rps.toFixed(0)
      } req/s, ` +
        `in-process ${rounds.inProcess[r]!.rps.toFixed(0)} req/s`,
    );
  }
} finally {
  for (const c of clients) c.close();
  server.kill("SIGINT");
  await server.status;
}

const [counted] = await sql<{ count: number }[]>`
  select count(*)::int as count from public.donations where organization_id = ${organizationId}`;
const count = counted!.count;
await sql.end({ timeout: 5 });
const expected = seq;

const summary = (rs: Result[]) => ({
  rps: median(rs.map((r) => r.rps)),
  p50: median(rs.map((r) => r.p50)),
  p99: median(rs.map((r) => r.p99)),
  errors: rs.reduce((a, r) => a + r.errors, 0),
});
const d = summary(rounds.direct);
const a = summary(rounds.app);
const ip = summary(rounds.inProcess);
const cpu = (() => {
  try {
    return Deno.readTextFileSync("/proc/cpuinfo").match(/model name\s*:\s*(.*)/)?.[1];
  } catch {
    return undefined;
  }
})();
const row = (name: string, s: ReturnType<typeof summary>) =>
  `| ${name} | ${s.rps.toFixed(0)} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.errors} |`;
const report = [
  "<!-- checkout-webhook:start -->",
  "## checkout-webhook: signed deliveries over loopback vs. the same SQL directly",
  "",
  `Measured ${
    new Date().toISOString().slice(0, 16).replace("T", " ")
  } UTC on ${navigator.hardwareConcurrency} cores${cpu ? ` (${cpu})` : ""}, ` +
  "a machine shared with other engineers' test runs (noisy); PostgreSQL 15 in a throwaway cluster " +
  "(fsync and synchronous_commit off, as in the test run), the app (served as its index.ts deploys it, " +
  "scripts/bench/serve_function.ts) and the load generator as separate Deno processes on the same two cores. " +
  "The load generator signs every event before the clock starts and sends prepared bytes over one keep-alive " +
  "connection per concurrent request (scripts/bench/http_client.ts), so it takes little CPU from what it measures.",
  "",
  "```sh",
  "bash scripts/bench/checkout_webhook.sh --write",
  "```",
  "",
  `Workload: \`charged\` events with unique Idempotency-Key and payment id over ${SUBSCRIPTIONS} subscriptions ` +
  `(each moves a subscription and records a donation); ${CONCURRENCY} concurrent requests; pool of ${POOL} ` +
  `connections on both sides; ${ROUNDS} alternating rounds of ${REQUESTS} requests after a warm-up; medians ` +
  'of the rounds. "Direct" issues the pipeline\'s three statements (organization and secret, log row, apply) ' +
  "per event with the pipeline's own store functions.",
  "",
  "| path | req/s | p50 ms | p99 ms | errors |",
  "|---|---:|---:|---:|---:|",
  row("direct SQL (ceiling)", d),
  row("checkout-webhook over HTTP", a),
  row("the same app called in-process (no HTTP)", ip),
  "",
  `App throughput is **${
    ((a.rps / d.rps) * 100).toFixed(0)
  }%** of the direct-SQL ceiling (goal: at least 80%); ` +
  `app p99 **${
    a.p99.toFixed(1)
  } ms** (goal: under 50 ms). Donations recorded: ${count} of ${expected} events.`,
  "<!-- checkout-webhook:end -->",
].join("\n");
console.log(report);

if (values.write) {
  const path = new URL("../../docs/benchmarks/checkout-webhook.md", import.meta.url);
  let doc = "";
  try {
    doc = await Deno.readTextFile(path);
  } catch {
    doc = "# checkout-webhook benchmark: the latest report\n";
  }
  const re = /<!-- checkout-webhook:start -->[\s\S]*<!-- checkout-webhook:end -->/;
  doc = re.test(doc) ? doc.replace(re, report) : `${doc.trimEnd()}\n\n${report}\n`;
  await Deno.writeTextFile(path, doc);
  console.error("docs/benchmarks/checkout-webhook.md updated; copy its figures into BENCHMARKS.md's summary");
}
