// Outbound webhook benchmark: end-to-end deliveries per second (insert -> received by a loopback
// receiver -> marked delivered), insert-to-receipt latency on the local NOTIFY path, and healthy
// throughput while 1 of 20 endpoints hangs. The receivers run in their own process
// (receivers_child.ts), as real receivers would. Run it through scripts/bench/outbound_dispatch.sh,
// which makes a throwaway database; or point BENCH_DATABASE_URL at a bootstrapped one you can spare.
//
//   BENCH_ROWS=500 BENCH_REPEATS=3 bash scripts/bench/outbound_dispatch.sh
import { createSql, type Sql } from "../../supabase/functions/_shared/db.ts";
import { startLocalDispatcher } from "../../supabase/functions/webhook-dispatcher/local_loop.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run scripts/bench/outbound_dispatch.sh");
const ROWS = Number(Deno.env.get("BENCH_ROWS") ?? 500);
const REPEATS = Number(Deno.env.get("BENCH_REPEATS") ?? 3);
const ENDPOINTS = 20;

// Receivers -------------------------------------------------------------------------------------------
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "--allow-net", new URL("./receivers_child.ts", import.meta.url).pathname],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let banner = "";
while (!/control \d+/.test(banner)) {
  const { value, done } = await lines.read();
  if (done) throw new Error("receiver process exited");
  banner += value;
}
const control = `http://127.0.0.1:${banner.match(/control (\d+)/)![1]}`;
const call = async <T>(method: string, path: string): Promise<T> =>
  await (await fetch(`${control}${path}`, { method })).json() as T;
const ports = await call<number[]>("GET", "/ports");

// Helpers ---------------------------------------------------------------------------------------------
async function setup(sql: Sql): Promise<{ org: string; endpoints: string[] }> {
  const [o] = await sql<
    { id: string }[]
  >`insert into public.organizations (name) values ('bench') returning id`;
  const endpoints: string[] = [];
  for (const port of ports) {
    const [e] = await sql<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events)
      values (${o!.id}, ${`http://127.0.0.1:${port}/hook`}, ${["member.created"]}) returning id`;
    endpoints.push(e!.id);
  }
  return { org: o!.id, endpoints };
}

async function received(from = 0): Promise<number> {
  const { counts } = await call<{ counts: number[] }>("GET", "/stats");
  return counts.slice(from).reduce((a, b) => a + b, 0);
}

async function delivered(sql: Sql, org: string, endpoints: string[]): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from public.webhook_deliveries
    where organization_id = ${org} and endpoint_id = any(${endpoints}::uuid[]) and status = 'delivered'`;
  return r!.n;
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}
const median = (v: number[]) => pct(v, 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One burst: ROWS members in one statement, fanned out to 20 endpoints; endpoint 0 may hang. */
async function burst(sql: Sql, hanging: boolean): Promise<number> {
  await call("POST", `/reset?hang=${hanging ? 1 : 0}`);
  const { org, endpoints } = await setup(sql);
  const from = hanging ? 1 : 0;
  const expected = ROWS * (ENDPOINTS - from);
  const local = startLocalDispatcher(sql, { allowPrivateTargets: true, log: () => {} });
  await sleep(200);
  const started = Date.now();
  await sql`insert into public.members (organization_id, first_name, last_name)
            select ${org}, 'b' || g, 'burst' from generate_series(1, ${ROWS}::int) g`;
  while ((await received(from)) < expected) await sleep(10);
  while ((await delivered(sql, org, endpoints.slice(from))) < expected) await sleep(5);
  const elapsed = (Date.now() - started) / 1000;
  await call("POST", "/release");
  await local.stop();
  await sql`update public.webhook_endpoints set enabled = false where organization_id = ${org}`;
  return expected / elapsed;
}

/** Steady stream: 10 rows every 100 ms (200 deliveries per tick); latency insert -> receipt. */
async function stream(sql: Sql): Promise<{ p50: number; p99: number; n: number }> {
  await call("POST", "/reset?hang=0");
  const { org } = await setup(sql);
  // A one-minute poll: every delivery here is woken by the NOTIFY.
  const local = startLocalDispatcher(sql, {
    allowPrivateTargets: true,
    pollMs: 60_000,
    log: () => {},
  });
  await sleep(200);
  const ticks = Math.max(10, Math.floor(ROWS / 10));
  const sentAt = new Map<string, number>();
  for (let t = 0; t < ticks; t++) {
    const tag = `tick${t}`;
    const next = Date.now() + 100;
    sentAt.set(tag, Date.now());
    await sql`insert into public.members (organization_id, first_name, last_name)
              select ${org}, 's' || g, ${tag} from generate_series(1, 10) g`;
    await sleep(Math.max(0, next - Date.now()));
  }
  const total = ticks * 10 * ENDPOINTS;
  const deadline = Date.now() + 30_000;
  while ((await received()) < total && Date.now() < deadline) await sleep(20);
  await local.stop();
  await sql`update public.webhook_endpoints set enabled = false where organization_id = ${org}`;
  const receipts = await call<Record<string, number[]>>("GET", "/receipts");
  const latencies = Object.entries(receipts).flatMap(([tag, times]) =>
    times.map((t) => t - sentAt.get(tag)!)
  );
  return { p50: pct(latencies, 50), p99: pct(latencies, 99), n: latencies.length };
}

// Run -------------------------------------------------------------------------------------------------
const sql = createSql(url, { max: 10 });
console.log(
  `rows per burst: ${ROWS}, endpoints: ${ENDPOINTS}, ` +
    `deliveries per burst: ${ROWS * ENDPOINTS}`,
);
await burst(sql, false); // warm-up
const base: number[] = [];
const withHang: number[] = [];
for (let i = 0; i < REPEATS; i++) {
  const a = await burst(sql, false);
  const b = await burst(sql, true);
  base.push(a);
  withHang.push(b);
  console.log(
    `run ${i + 1}: all healthy ${a.toFixed(0)} deliveries/s; ` +
      `1 of 20 hanging: healthy ${b.toFixed(0)} deliveries/s (${((b / a) * 100).toFixed(0)}%)`,
  );
}
const lat = await stream(sql);
console.log("");
console.log(
  `median deliveries/s (insert -> received -> marked delivered), 20 healthy endpoints: ${
    median(base).toFixed(0)
  }`,
);
console.log(`median healthy deliveries/s with 1 of 20 endpoints hanging: ${median(withHang).toFixed(0)}`);
console.log(`ratio of medians: ${((median(withHang) / median(base)) * 100).toFixed(0)}%`);
console.log(
  `latency insert -> receipt, NOTIFY path, ${lat.n} deliveries: p50 ${lat.p50} ms, p99 ${lat.p99} ms`,
);
await sql.end();
child.kill("SIGTERM");
await child.status;
