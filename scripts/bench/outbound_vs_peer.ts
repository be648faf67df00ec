// Outbound webhooks against a graphile-worker peer, same work, side by side in one run:
// 5,000 members in 500-row inserts, 4 subscribed endpoints = 20,000 deliveries to one loopback
// receiver process. Ours and the peer alternate, each run in a fresh throwaway cluster made by
// scripts/bench/run.sh with the same settings, after a warm-up of one 500-row insert. Per run: deliveries/s
// from the first insert until every delivery was received AND recorded delivered, wall time, CPU seconds
// per component from /proc (PostgreSQL: the postmaster and all its backends, exited ones included; the
// dispatcher or peer worker process; the receiver process), and the delivering process's peak RSS
// (VmHWM). Then medians, the ratio ours / peer, and a Markdown table.
//
// Run it through scripts/bench/outbound_vs_peer.sh (installs the peer's own dependencies first).
//   BENCH_REPEATS=3 bash scripts/bench/outbound_vs_peer.sh
// Our side alone, with a V8 CPU profile of the dispatcher (summarize with scripts/bench/cpuprofile.ts):
//   BENCH_SIDES=ours BENCH_REPEATS=1 BENCH_SKIP_CLAIM=1 \
//     BENCH_DISPATCHER_ARGS="--cpu-prof-dir=/tmp/prof" bash scripts/bench/outbound_vs_peer.sh
// With custom request headers on each of our endpoints (read by the claim, sent and masked per delivery):
//   BENCH_CUSTOM_HEADERS=2 BENCH_REPEATS=1 BENCH_SKIP_CLAIM=1 bash scripts/bench/outbound_vs_peer.sh
// BENCH_DISPATCHER_CHILD=path runs another dispatcher child script instead (an experiment's copy).
// A/B in one run, alternating: BENCH_SIDES=ours,ours-alt BENCH_ALT_CHILD=/tmp/old/scripts/bench/dispatcher_child.ts
// (e.g. a `git archive` of an earlier commit unpacked in /tmp/old).
// Where PostgreSQL's time goes (how the bimodal claim plan was found): BENCH_PG_STATS=1 prints, after
// each measured run, the statements that took the most time (pg_stat_statements, nested ones included)
// and the reads of every index of the side's tables; BENCH_PG_EXPLAIN_MS=15 also logs the plan, with
// actual rows and buffers, of every statement slower than that into BENCH_PG_LOG_DIR (default
// /tmp/bench-pglog, made writable for the cluster).
// These settings cost some CPU themselves: compare runs made with the same ones. BENCH_PG_EXTRA adds
// server settings to every side (e.g. "-o wal_buffers=64MB"), for experiments.
import { createSql, type Sql } from "../../supabase/functions/_shared/db.ts";
import { signedHeaders } from "../../supabase/functions/webhook-dispatcher/signing.ts";
import { machine } from "./stats.ts";
// @ts-types="./peer/sign.d.ts"
import { signedHeaders as peerSignedHeaders } from "./peer/sign.mjs";

const env = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const REPEATS = env("BENCH_REPEATS", 3);
const MEMBERS = env("BENCH_MEMBERS", 5000);
const BATCH = env("BENCH_BATCH", 500);
const ENDPOINTS = 4;
// Custom request headers on each of our endpoints (docs/custom-headers.md): the claim then reads them
// and the dispatcher sends and masks them on every delivery. 0: none, as most endpoints have.
const CUSTOM_HEADERS = env("BENCH_CUSTOM_HEADERS", 0);
const RUN_TIMEOUT_MS = env("BENCH_RUN_TIMEOUT_S", 300) * 1000;
const PG_STATS = Deno.env.get("BENCH_PG_STATS") === "1";
const PG_EXPLAIN_MS = Deno.env.get("BENCH_PG_EXPLAIN_MS");
const PG_LOG_DIR = Deno.env.get("BENCH_PG_LOG_DIR") ?? "/tmp/bench-pglog";
if (PG_EXPLAIN_MS) {
  Deno.mkdirSync(PG_LOG_DIR, { recursive: true });
  Deno.chmodSync(PG_LOG_DIR, 0o777); // the cluster runs as the postgres user
}
const PG_OPTS = [
  "-o fsync=off -o synchronous_commit=off",
  ...(Deno.env.get("BENCH_PG_EXTRA") ? [Deno.env.get("BENCH_PG_EXTRA")!] : []),
  ...(PG_STATS || PG_EXPLAIN_MS
    ? [
      `-o shared_preload_libraries=pg_cron${PG_STATS ? ",pg_stat_statements" : ""}${
        PG_EXPLAIN_MS ? ",auto_explain" : ""
      }`,
    ]
    : []),
  ...(PG_STATS ? ["-o pg_stat_statements.track=all"] : []),
  ...(PG_EXPLAIN_MS
    ? [
      `-o auto_explain.log_min_duration=${Number(PG_EXPLAIN_MS)} -o auto_explain.log_analyze=on`,
      `-o auto_explain.log_buffers=on -o auto_explain.log_nested_statements=on`,
      `-o logging_collector=on -o log_directory=${PG_LOG_DIR}`,
    ]
    : []),
].join(" ");
const PEER_CONCURRENCY = env("PEER_CONCURRENCY", 64);
const here = new URL(".", import.meta.url).pathname;
const root = new URL("../../", import.meta.url).pathname;

// "peer": graphile-worker with its documented batching on (localQueue, batched completion), the
// strongest configuration we know for it; "peer-defaults": the same worker with graphile-worker's defaults;
// "peer-row": defaults and a row-level trigger calling add_job per delivery, as graphile-worker's docs show.
const SIDES = ["ours", "peer", "peer-defaults", "peer-row", "ours-alt"] as const;
type Side = typeof SIDES[number];
// By default ours against the tuned peer; BENCH_SIDES=ours,peer,peer-defaults,peer-row adds the others.
const sides = (Deno.env.get("BENCH_SIDES") ?? "ours,peer").split(",").map((s) => s.trim()) as Side[];
for (const s of sides) {
  if (!SIDES.includes(s)) throw new Error(`BENCH_SIDES: unknown side ${s}; known: ${SIDES.join(", ")}`);
}
if (sides[0] !== "ours") throw new Error("BENCH_SIDES must start with ours (the ratios are ours / peer)");
const LABEL: Record<Side, string> = {
  ours: "ours (dispatcher)",
  peer: "graphile-worker peer, batching on",
  "peer-defaults": "graphile-worker peer, defaults",
  "peer-row": "graphile-worker peer, defaults, row trigger + add_job",
  "ours-alt": "ours, BENCH_ALT_CHILD",
};
const ALT_CHILD = Deno.env.get("BENCH_ALT_CHILD");
if (sides.includes("ours-alt") && !ALT_CHILD) {
  throw new Error("BENCH_SIDES has ours-alt: set BENCH_ALT_CHILD");
}
interface Result {
  side: Side;
  rate: number;
  wall: number;
  pg: number;
  worker: number;
  receiver: number;
  rssMiB: number;
  readyRssMiB: number;
}
type Metric = Exclude<keyof Result, "side">;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Same work means the same signatures: check the peer's against ours once, before anything runs.
{
  const body = new TextEncoder().encode('{"id":"e","type":"member.created","data":{"row":{}}}');
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const a = signedHeaders({ eventId: "e", eventType: "member.created", secret, body, timestamp: 1700000000 });
  const b = peerSignedHeaders("e", "member.created", secret, body, 1700000000);
  for (const h of ["x-webhook-signature", "webhook-signature", "webhook-id", "webhook-timestamp"]) {
    if (a[h] !== b[h]) throw new Error(`the peer's ${h} differs from ours: ${b[h]} vs ${a[h]}`);
  }
}

// Child processes ---------------------------------------------------------------------------------------

/** Every child we start, so that any exit path stops exactly these (by PID, nothing else). */
const children = new Set<Deno.ChildProcess>();
// An uncaught error ends this process without running the cleanup below: signal our children first (a
// cluster goes away by itself once our end of its input closes; the receiver and workers would not).
const killChildren = () => {
  for (const c of children) {
    try {
      c.kill("SIGTERM");
    } catch { /* already gone */ }
  }
};
globalThis.addEventListener("error", killChildren);
globalThis.addEventListener("unhandledrejection", killChildren);

function spawn(cmd: string, args: string[], opts: { env?: Record<string, string>; stdin?: boolean } = {}) {
  const child = new Deno.Command(cmd, {
    args,
    cwd: root,
    env: opts.env,
    stdin: opts.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  children.add(child);
  child.status.finally(() => children.delete(child));
  return child;
}

/** Reads a child's stdout until a line matches; its stderr is kept for the error message. */
async function waitForLine(
  child: Deno.ChildProcess,
  what: string,
  pattern: RegExp,
  timeoutMs = 120_000,
): Promise<RegExpMatchArray> {
  let errText = "";
  (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      errText = (errText + chunk).slice(-4000);
    }
  })().catch(() => {});
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const timer = setTimeout(() => reader.cancel().catch(() => {}), timeoutMs);
  try {
    while (true) {
      const m = out.match(pattern);
      if (m) {
        // Keep draining stdout so the child never blocks on a full pipe.
        (async () => {
          while (!(await reader.read()).done) { /* discard */ }
        })().catch(() => {});
        return m;
      }
      const { value, done } = await reader.read();
      if (done) {
        throw new Error(
          `${what} did not start (no line matching ${pattern} within ${timeoutMs / 1000} s or it exited).\n` +
            `stdout: ${out.slice(-2000)}\nstderr: ${errText}`,
        );
      }
      out += value;
    }
  } finally {
    clearTimeout(timer);
  }
}

async function stopChild(child: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM"): Promise<void> {
  try {
    child.kill(signal);
  } catch { /* already gone */ }
  const done = await Promise.race([child.status.then(() => true), sleep(15_000).then(() => false)]);
  if (!done) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
  }
}

/**
 * A throwaway cluster from run.sh (bootstrapped, migrated); removed when we close its input. Tried up to
 * three times: pg_virtualenv picks a port that another user of the machine may take first (port conflict).
 */
async function startCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  for (let attempt = 1;; attempt++) {
    try {
      return await startClusterOnce();
    } catch (err) {
      if (attempt >= 3) throw err;
      const why = err instanceof Error ? err.message.split("\n").slice(-4).join(" ") : String(err);
      console.error(`throwaway cluster failed to start (attempt ${attempt} of 3: ${why}); trying again`);
      await sleep(2000 * attempt);
    }
  }
}

async function startClusterOnce(): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn("bash", [`${here}run.sh`, "cluster_hold"], {
    env: { BENCH_PG_OPTS: PG_OPTS },
    stdin: true,
  });
  const stdin = child.stdin.getWriter();
  let m: RegExpMatchArray;
  try {
    // BENCH_CLUSTER_START_S: a loaded shared machine may need longer to make and migrate a cluster.
    m = await waitForLine(
      child,
      "throwaway cluster (scripts/bench/run.sh cluster_hold)",
      /cluster (\S+)\n/,
      env("BENCH_CLUSTER_START_S", 120) * 1000,
    );
  } catch (err) {
    await stdin.close().catch(() => {});
    await stopChild(child);
    throw err;
  }
  return {
    url: m[1]!,
    async stop() {
      await stdin.close().catch(() => {});
      const done = await Promise.race([child.status.then(() => true), sleep(60_000).then(() => false)]);
      if (!done) await stopChild(child);
    },
  };
}

// /proc -------------------------------------------------------------------------------------------------

const CLK_TCK = await (async () => {
  try {
    const out = await new Deno.Command("getconf", { args: ["CLK_TCK"] }).output();
    return Number(new TextDecoder().decode(out.stdout).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime, stime, cutime, cstime (ticks) and the parent PID of a process; null if it is gone. */
function procStat(pid: number): { ppid: number; own: number; reaped: number } | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
  // Fields after "(comm)": state ppid ... utime(14) stime(15) cutime(16) cstime(17), 1-based overall.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const n = (i: number) => Number(f[i - 3]);
  return { ppid: n(4), own: n(14) + n(15), reaped: n(16) + n(17) };
}

/** CPU seconds of one process (all its threads). */
function cpuOf(pid: number): number {
  const s = procStat(pid);
  if (!s) throw new Error(`process ${pid} is gone; it should still be running`);
  return s.own / CLK_TCK;
}

/** CPU seconds of a cluster: the postmaster, its live children, and its children that exited. */
function clusterCpu(postmaster: number): number {
  const pm = procStat(postmaster);
  if (!pm) throw new Error(`postmaster ${postmaster} is gone`);
  let ticks = pm.own + pm.reaped;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const s = procStat(Number(entry.name));
    if (s && s.ppid === postmaster) ticks += s.own + s.reaped;
  }
  return ticks / CLK_TCK;
}

function peakRssMiB(pid: number): number {
  const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/^VmHWM:\s+(\d+) kB/m);
  if (!m) throw new Error(`no VmHWM for process ${pid}`);
  return Number(m[1]) / 1024;
}

async function postmasterPid(sql: Sql): Promise<number> {
  const [r] = await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`;
  return Number(Deno.readTextFileSync(`${r!.dir}/postmaster.pid`).split("\n")[0]);
}

// The receiver ------------------------------------------------------------------------------------------

const receiver = spawn(Deno.execPath(), ["run", "--allow-net", `${here}receivers_child.ts`]);
const control = `http://127.0.0.1:${
  (await waitForLine(receiver, "receiver process (receivers_child.ts)", /control (\d+)/))[1]
}`;
async function call<T>(method: string, path: string): Promise<T> {
  const res = await fetch(`${control}${path}`, { method });
  if (!res.ok) throw new Error(`receiver ${method} ${path}: HTTP ${res.status}`);
  return await res.json() as T;
}
const ports = (await call<number[]>("GET", "/ports")).slice(0, ENDPOINTS);
const received = async () =>
  (await call<{ counts: number[] }>("GET", "/stats")).counts.reduce((a, b) => a + b, 0);

// One run -----------------------------------------------------------------------------------------------

async function waitFor(what: string, target: number, count: () => Promise<number>, everyMs: number) {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  let n = 0;
  while ((n = await count()) < target) {
    if (Date.now() > deadline) {
      throw new Error(`${what}: ${n} of ${target} after ${RUN_TIMEOUT_MS / 1000} s (BENCH_RUN_TIMEOUT_S)`);
    }
    await sleep(everyMs);
  }
}

async function insertMembers(sql: Sql, org: string, rows: number, tag: string) {
  await sql`insert into public.members (organization_id, first_name, last_name)
            select ${org}, 'm' || g, ${tag} from generate_series(1, ${rows}::int) g`;
}

async function runOnce(side: Side): Promise<Result> {
  const cluster = await startCluster();
  const sql = createSql(cluster.url, { max: 2 });
  let worker: Deno.ChildProcess | undefined;
  try {
    const postmaster = await postmasterPid(sql);
    const [o] = await sql<{ id: string }[]>`
      insert into public.organizations (name) values (${`bench ${side}`}) returning id`;
    const org = o!.id;
    const urls = ports.map((p) => `http://127.0.0.1:${p}/hook`);
    let delivered: () => Promise<number>;
    if (side === "ours" || side === "ours-alt") {
      for (const url of urls) {
        await sql`insert into public.webhook_endpoints (organization_id, url, events)
                  values (${org}, ${url}, ${["member.created"]})`;
      }
      if (CUSTOM_HEADERS > 0) {
        const headers = Array.from({ length: CUSTOM_HEADERS }, (_, i) => ({
          name: `X-Bench-${i}`,
          value: `Bearer bench-${i}-${crypto.randomUUID()}`,
        }));
        const list = sql.json(headers);
        await sql`insert into private.webhook_endpoint_headers (endpoint_id, headers)
                  select id, ${list} from public.webhook_endpoints where organization_id = ${org}`;
        await sql`update public.webhook_endpoints e
                     set custom_headers = (select jsonb_agg(jsonb_build_object('name', h ->> 'name', 'value_hint',
                                                  private.webhook_header_value_hint(h ->> 'value')))
                                           from jsonb_array_elements(${list}::jsonb) h)
                   where organization_id = ${org}`;
      }
      // As scripts/dev.sh starts the dev server (its in-process dispatcher): 4 MiB semi-spaces.
      // BENCH_DISPATCHER_V8_FLAGS="" runs the child with V8's defaults.
      const v8 = Deno.env.get("BENCH_DISPATCHER_V8_FLAGS") ?? "--max-semi-space-size=4";
      // Profiling and experiments: extra deno run arguments (e.g. --cpu-prof-dir=/tmp/prof) and another
      // child script (a scratch copy of the dispatcher), both only for our side.
      const extra = (Deno.env.get("BENCH_DISPATCHER_ARGS") ?? "").split(" ").filter((a) => a !== "");
      const child = side === "ours-alt"
        ? ALT_CHILD!
        : Deno.env.get("BENCH_DISPATCHER_CHILD") ?? `${here}dispatcher_child.ts`;
      worker = spawn(Deno.execPath(), [
        "run",
        "-A",
        ...(v8 ? [`--v8-flags=${v8}`] : []),
        ...extra,
        child,
      ], {
        env: { BENCH_DATABASE_URL: cluster.url },
      });
      await waitForLine(worker, "our dispatcher (dispatcher_child.ts)", /^ready$/m);
      delivered = async () =>
        (await sql<{ n: number }[]>`
          select count(*)::int as n from public.webhook_deliveries where status = 'delivered'`)[0]!.n;
    } else {
      const defaults: Record<string, string> = side === "peer" ? {} : {
        PEER_LOCAL_QUEUE: "-1",
        PEER_COMPLETE_BATCH_MS: "-1",
        PEER_TRIGGER: side === "peer-row" ? "row" : "",
      };
      worker = spawn("node", [`${here}peer/worker.mjs`], {
        env: { DATABASE_URL: cluster.url, PEER_CONCURRENCY: String(PEER_CONCURRENCY), ...defaults },
      });
      await waitForLine(worker, "graphile-worker peer (peer/worker.mjs)", /^ready$/m);
      for (const url of urls) {
        await sql`insert into peer.endpoints (organization_id, url, secret, events)
                  values (${org}, ${url}, private.webhook_new_secret(), ${["member.created"]})`;
      }
      delivered = async () =>
        (await sql<{ n: number }[]>`
          select count(*)::int as n from peer.deliveries where status = 'delivered'`)[0]!.n;
    }
    const readyRssMiB = peakRssMiB(worker.pid);
    // Warm-up: one batch through the whole path (connections, JIT, caches), not measured.
    await call("POST", "/reset?hang=0");
    await insertMembers(sql, org, BATCH, "warm-up");
    await waitFor(`${side} warm-up received`, BATCH * ENDPOINTS, received, 20);
    await waitFor(`${side} warm-up recorded delivered`, BATCH * ENDPOINTS, delivered, 20);
    await call("POST", "/reset?hang=0");

    const expected = MEMBERS * ENDPOINTS;
    if (PG_STATS) {
      await sql`create extension if not exists pg_stat_statements with schema extensions`;
      await sql`select extensions.pg_stat_statements_reset(), pg_stat_reset(), pg_stat_reset_shared('wal')`;
    }
    const cpu0 = { pg: clusterCpu(postmaster), worker: cpuOf(worker.pid), receiver: cpuOf(receiver.pid) };
    const started = performance.now();
    for (let done = 0; done < MEMBERS; done += BATCH) {
      await insertMembers(sql, org, Math.min(BATCH, MEMBERS - done), "run");
    }
    await waitFor(`${side}: deliveries received`, expected, received, 20);
    await waitFor(`${side}: deliveries recorded delivered`, expected + BATCH * ENDPOINTS, delivered, 5);
    const wall = (performance.now() - started) / 1000;
    if (PG_STATS) await printPgStats(sql, side);
    const cpu1 = { pg: clusterCpu(postmaster), worker: cpuOf(worker.pid), receiver: cpuOf(receiver.pid) };
    return {
      side,
      rate: expected / wall,
      wall,
      pg: cpu1.pg - cpu0.pg,
      worker: cpu1.worker - cpu0.worker,
      receiver: cpu1.receiver - cpu0.receiver,
      rssMiB: peakRssMiB(worker.pid),
      readyRssMiB,
    };
  } finally {
    if (worker) await stopChild(worker);
    await sql.end({ timeout: 5 }).catch(() => {});
    await cluster.stop();
  }
}

/** BENCH_PG_STATS: the costliest statements of the run and the index reads of the side's tables. */
async function printPgStats(sql: Sql, side: Side): Promise<void> {
  const statements = await sql<{ calls: number; ms: number; rows: number; query: string }[]>`
    select calls::int, round(total_exec_time)::int as ms, rows::int,
           left(regexp_replace(query, '\\s+', ' ', 'g'), 100) as query
    from extensions.pg_stat_statements where query !~* 'pg_stat' order by total_exec_time desc limit 10`;
  console.log(`  PostgreSQL statements of this ${side} run (calls, total ms, rows, statement):`);
  for (const s of statements) console.log(`    ${s.calls}\t${s.ms} ms\t${s.rows}\t${s.query}`);
  const indexes = await sql<{ name: string; scans: number; read: number; fetched: number }[]>`
    select relname || '.' || indexrelname as name, idx_scan::int as scans, idx_tup_read::int as read,
           idx_tup_fetch::int as fetched
    from pg_stat_user_indexes where idx_scan > 0 and schemaname in ('public', 'private', 'peer', 'graphile_worker')
    order by idx_tup_read desc limit 10`;
  console.log("  index scans, entries read, rows fetched:");
  for (const i of indexes) console.log(`    ${i.name}: ${i.scans}, ${i.read}, ${i.fetched}`);
  // WAL written, and how often a backend found the WAL buffers full and had to write them itself.
  const [wal] = await sql<{ mib: number; records: number; fpi: number; full: number }[]>`
    select round(wal_bytes / 1048576)::int as mib, wal_records::int as records, wal_fpi::int as fpi,
           wal_buffers_full::int as full
    from pg_stat_wal`;
  console.log(
    `  WAL: ${wal!.mib} MiB, ${wal!.records} records, ${wal!.fpi} full-page images, ` +
      `buffers full ${wal!.full} times`,
  );
}

// Report ------------------------------------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const n0 = (x: number) => Math.round(x).toLocaleString("en");
const n2 = (x: number) => x.toFixed(2);

function line(r: Result, i: number): string {
  return `run ${i} ${LABEL[r.side]}: ${n0(r.rate)} deliveries/s, ${n2(r.wall)} s wall; ` +
    `CPU PostgreSQL ${n2(r.pg)} s, ${r.side.startsWith("ours") ? "dispatcher" : "worker"} ${
      n2(r.worker)
    } s, ` +
    `receiver ${n2(r.receiver)} s; peak RSS ${n0(r.rssMiB)} MiB (${n0(r.readyRssMiB)} MiB when ready)`;
}

let stopping = false;
async function cleanup() {
  stopping = true;
  await Promise.all([...children].map((c) => stopChild(c)));
}
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => {
    if (stopping) return;
    console.error(`${sig}: stopping the benchmark's processes`);
    cleanup().finally(() => Deno.exit(130));
  });
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");
const startedAt = new Date().toISOString().replace(/\.\d+Z$/, "Z");
const nodeVersion = new TextDecoder().decode(
  (await new Deno.Command("node", { args: ["--version"] }).output()).stdout,
)
  .trim();
console.log(`${machine()}; Node ${nodeVersion} (the peer)`);
console.log(`started ${startedAt}, load average ${loadavg()}`);
console.log(
  `${MEMBERS.toLocaleString("en")} members in ${BATCH}-row inserts x ${ENDPOINTS} endpoints = ` +
    `${(MEMBERS * ENDPOINTS).toLocaleString("en")} deliveries per run, ${REPEATS} runs each, alternating ${
      sides.join(", ")
    }; ` +
    `PostgreSQL settings ${PG_OPTS}; peer concurrency ${PEER_CONCURRENCY}`,
);
const results: Result[] = [];
try {
  for (let i = 1; i <= REPEATS; i++) {
    for (const side of sides) {
      const r = await runOnce(side);
      results.push(r);
      console.log(line(r, i));
    }
  }
} catch (err) {
  console.error(`benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  await cleanup();
  Deno.exit(1);
}
await cleanup();

const of = (side: Side, k: Metric) => median(results.filter((r) => r.side === side).map((r) => r[k]));
const peers = sides.slice(1);
const cells = (f: (side: Side) => string, ratio: (peer: Side) => string) =>
  `| ${sides.map(f).join(" | ")} | ${peers.map(ratio).join(" | ")} |`;
const row = (label: string, k: Metric, f: (x: number) => string) =>
  `| ${label} ` + cells((s) => f(of(s, k)), (p) => `${n2(of("ours", k) / of(p, k))}x`);
const total = (side: Side) => of(side, "pg") + of(side, "worker") + of(side, "receiver");
console.log("");
console.log(`finished ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log("");
console.log(
  `| median of ${REPEATS} runs | ${sides.map((s) => LABEL[s]).join(" | ")} | ` +
    `${peers.map((p) => `ours / ${LABEL[p].replace("graphile-worker ", "")}`).join(" | ")} |`,
);
console.log(`|---|${sides.map(() => "---|").join("")}${peers.map(() => "---|").join("")}`);
console.log(row("**deliveries/s** (received and recorded `delivered`)", "rate", n0));
console.log(row("wall time, s", "wall", n2));
console.log(row("CPU PostgreSQL (postmaster + backends), s", "pg", n2));
console.log(row("CPU dispatcher / peer worker process, s", "worker", n2));
console.log(row("CPU receiver process, s", "receiver", n2));
console.log(
  "| CPU total (sum of the medians), s " +
    cells((s) => n2(total(s)), (p) => `${n2(total("ours") / total(p))}x`),
);
console.log(row("peak RSS of the dispatcher / peer worker (VmHWM), MiB", "rssMiB", n0));
console.log(row("the same, right after start (before any delivery), MiB", "readyRssMiB", n0));
// CPU per delivery of each component: the median CPU seconds over the run's deliveries.
const perDelivery = (side: Side, k: Metric) => (of(side, k) / (MEMBERS * ENDPOINTS)) * 1e6;
const usRow = (label: string, k: Metric) =>
  `| ${label} ` + cells((s) => n0(perDelivery(s, k)), (p) => `${n2(of("ours", k) / of(p, k))}x`);
console.log(usRow("CPU per delivery, PostgreSQL, µs", "pg"));
console.log(usRow("CPU per delivery, dispatcher / peer worker, µs", "worker"));
console.log(usRow("CPU per delivery, receiver, µs", "receiver"));
console.log("");
const ours = results.filter((r) => r.side === "ours");
const maxRss = Math.max(...ours.map((r) => r.rssMiB));
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
if (sides.includes("peer")) {
  const ratio = of("ours", "rate") / of("peer", "rate");
  console.log(`goal >= 2x the tuned peer's throughput: ${verdict(ratio >= 2)} (${n2(ratio)}x)`);
}
for (const [label, k] of [["dispatcher", "worker"], ["PostgreSQL", "pg"]] as const) {
  const us = perDelivery("ours", k);
  console.log(`goal ${label} CPU <= 100 µs per delivery: ${verdict(us <= 100)} (${n0(us)} µs)`);
}
console.log(
  `goal dispatcher peak RSS < 150 MiB: ${verdict(maxRss < 150)} (highest of the runs ${n0(maxRss)} MiB)`,
);
