// The hosted path against the local loop, side by side in one run, on one database: deliveries per
// second from the insert until the receivers have every delivery and it is recorded delivered.
//   local:  the dev server's loop (dispatcher_child.ts: startLocalDispatcher, woken by NOTIFY).
//   hosted: pg_net -> webhook-dispatcher's index.ts under scripts/edge-runtime.ts (EdgeRuntime.waitUntil,
//           202 at once), started by the insert's wake-up trigger and by the runs' own continuations, as
//           on a hosted project. The minute cron job is unscheduled meanwhile, so a tick falling inside
//           one measurement and not another does not decide the comparison.
// Receivers in their own process (receivers_child.ts, 20 endpoints); each side in its own process, its
// CPU read from /proc. Every hosted run's log line is kept: how many runs, how each stopped, the CPU each
// used (the budget is 2,000 ms an invocation) and the gaps between them.
// BENCH_BEFORE_ROOT=/tmp/old (`git archive <commit> | tar -x -C /tmp/old`, with this tree's
// scripts/edge-runtime.ts copied in) adds a third side: that version's webhook-dispatcher on the hosted
// path, against this database (an A/B of the dispatcher; the migrations are this tree's).
// Run it through scripts/bench/hosted_dispatch.sh (a cluster with pg_net).
//   BENCH_ROWS=1000 BENCH_REPEATS=3 bash scripts/bench/hosted_dispatch.sh
import { createSql, type Sql } from "../../supabase/functions/_shared/db.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run scripts/bench/hosted_dispatch.sh");
const ROWS = Number(Deno.env.get("BENCH_ROWS") ?? 1000);
const REPEATS = Number(Deno.env.get("BENCH_REPEATS") ?? 3);
const BEFORE_ROOT = Deno.env.get("BENCH_BEFORE_ROOT");
/** BENCH_LOG_DIR: each hosted side's whole log (every run's line, errors) goes to a file there. */
const LOG_DIR = Deno.env.get("BENCH_LOG_DIR");
let hostedBursts = 0;
const ENDPOINTS = 20;
const root = new URL("../../", import.meta.url).pathname;
const secret = `bench-${crypto.randomUUID()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Processes ------------------------------------------------------------------------------------------
interface Child {
  process: Deno.ChildProcess;
  output(): string;
  until(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

function spawn(args: string[], env: Record<string, string> = {}, cwd = root): Child {
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  };
  drain(process.stdout);
  drain(process.stderr);
  return {
    process,
    output: () => out,
    async until(pattern, ms = 30_000) {
      for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(10)) {
        const m = out.match(pattern);
        if (m) return m;
      }
      throw new Error(`no ${pattern} within ${ms} ms:\n${out}`);
    },
  };
}

/** CPU time (user + system) of a process so far, in ms. */
function cpuMs(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

async function stop(child: Child): Promise<void> {
  child.process.kill("SIGTERM");
  await child.process.status;
}

// Receivers ------------------------------------------------------------------------------------------
const receivers = spawn(["run", "--allow-net", "scripts/bench/receivers_child.ts"]);
const control = `http://127.0.0.1:${(await receivers.until(/control (\d+)/))[1]}`;
const call = async <T>(method: string, path: string): Promise<T> =>
  await (await fetch(`${control}${path}`, { method })).json() as T;
const ports = await call<number[]>("GET", "/ports");
const received = async () =>
  (await call<{ counts: number[] }>("GET", "/stats")).counts.reduce((a, b) => a + b, 0);

// Database -------------------------------------------------------------------------------------------
const sql = createSql(url, { max: 4 });
// Vault as on a hosted project, or a table with its view's name where supabase_vault is not installed.
const hasVault = (await sql`select 1 from pg_available_extensions where name = 'supabase_vault'`).length > 0;
if (hasVault) await sql`create extension if not exists supabase_vault cascade`;
else {
  await sql`create schema if not exists vault`;
  await sql`create table if not exists vault.decrypted_secrets (name text primary key, decrypted_secret text)`;
}
const [net] = await sql<
  { ok: boolean }[]
>`select to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)')
                                            is not null as ok`;
if (!net!.ok) throw new Error("pg_net is not installed in this database (is it preloaded?)");
await sql`select cron.unschedule('webhook-dispatch')`;

async function setSecrets(projectUrl: string): Promise<void> {
  const secrets: [string, string][] = [["project_url", projectUrl], ["webhook_dispatch_secret", secret]];
  for (const [name, value] of secrets) {
    if (hasVault) {
      await sql`delete from vault.secrets where name = ${name}`;
      await sql`select vault.create_secret(${value}, ${name})`;
    } else {
      await sql`insert into vault.decrypted_secrets values (${name}, ${value})
                on conflict (name) do update set decrypted_secret = excluded.decrypted_secret`;
    }
  }
}

async function organization(): Promise<{ org: string; endpoints: string[] }> {
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

async function delivered(s: Sql, org: string): Promise<number> {
  const [r] = await s<{ n: number }[]>`
    select count(*)::int as n from public.webhook_deliveries where organization_id = ${org} and status = 'delivered'`;
  return r!.n;
}

interface Burst {
  perSecond: number;
  cpuMs: number;
  runs?: RunLog[];
}

interface RunLog {
  claimed: number;
  claiming_ms: number;
  continued_at_ms?: number;
  stopped: string;
  cpu_ms: number;
  duration_ms: number;
  continued?: boolean | null;
  at: number;
}

/** ROWS members, each a delivery to each of the 20 endpoints; timed until received and recorded. */
async function burst(side: Child): Promise<Burst> {
  await call("POST", "/reset?hang=0");
  const { org } = await organization();
  const expected = ROWS * ENDPOINTS;
  const cpuBefore = cpuMs(side.process.pid);
  const started = Date.now();
  await sql`insert into public.members (organization_id, first_name, last_name)
            select ${org}, 'b' || g, 'burst' from generate_series(1, ${ROWS}::int) g`;
  while ((await received()) < expected) {
    if (Date.now() - started > 300_000) {
      throw new Error(`stuck at ${await received()} of ${expected}:\n${side.output()}`);
    }
    await sleep(10);
  }
  while ((await delivered(sql, org)) < expected) await sleep(5);
  const elapsed = (Date.now() - started) / 1000;
  await sql`update public.webhook_endpoints set enabled = false where organization_id = ${org}`;
  return { perSecond: expected / elapsed, cpuMs: cpuMs(side.process.pid) - cpuBefore };
}

async function local(): Promise<Burst> {
  const child = spawn(["run", "-A", "scripts/bench/dispatcher_child.ts"], { BENCH_DATABASE_URL: url! });
  await child.until(/ready/);
  try {
    return await burst(child);
  } finally {
    await stop(child);
  }
}

async function hosted(tree = root): Promise<Burst> {
  const child = spawn(["run", "-A", "scripts/edge-runtime.ts", "webhook-dispatcher"], {
    SUPABASE_DB_URL: url!,
    WEBHOOK_DISPATCH_SECRET: secret,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  }, tree);
  const base = (await child.until(/serving (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
  await setSecrets(base);
  await sql`update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher'`;
  const logFrom = child.output().length;
  try {
    const result = await burst(child);
    // The last run waits out its idle grace (10 s for a continuation): wait for every run's line.
    await sleep(11_000);
    const runs = child.output().slice(logFrom).split("\n").flatMap((line) => {
      try {
        const e = JSON.parse(line);
        return e.msg === "dispatch finished" ? [{ ...e, at: Date.now() }] : [];
      } catch {
        return [];
      }
    });
    return { ...result, runs };
  } finally {
    await stop(child);
    if (LOG_DIR) Deno.writeTextFileSync(`${LOG_DIR}/hosted-${++hostedBursts}.log`, child.output());
  }
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

console.log(`deliveries per burst: ${ROWS * ENDPOINTS} (${ROWS} members x ${ENDPOINTS} endpoints)`);
await local(); // warm-up: the database's caches and plans
await hosted();
const rows: { local: Burst; hosted: Burst; before?: Burst }[] = [];
for (let i = 0; i < REPEATS; i++) {
  // Alternating which goes first.
  const pair: { local: Burst; hosted: Burst; before?: Burst } = i % 2 === 0
    ? { local: await local(), hosted: await hosted() }
    : { hosted: await hosted(), local: await local() };
  if (BEFORE_ROOT) {
    pair.before = await hosted(BEFORE_ROOT);
    const r = pair.before.runs ?? [];
    console.log(
      `run ${i + 1} before (${BEFORE_ROOT}): hosted ${
        pair.before.perSecond.toFixed(0)
      }/s (${pair.before.cpuMs} ms CPU): ` +
        `${((pair.before.perSecond / pair.local.perSecond) * 100).toFixed(0)}% of local; runs ${r.length}, ` +
        `CPU per run max ${Math.max(0, ...r.map((x) => x.cpu_ms))} ms, deliveries per run ${
          r.map((x) => x.claimed).join(" ")
        }`,
    );
  }
  rows.push(pair);
  const runs = pair.hosted.runs ?? [];
  const stops = runs.reduce<Record<string, number>>(
    (a, r) => ((a[r.stopped] = (a[r.stopped] ?? 0) + 1), a),
    {},
  );
  console.log(
    `run ${i + 1}: local ${pair.local.perSecond.toFixed(0)}/s (${pair.local.cpuMs} ms CPU), ` +
      `hosted ${pair.hosted.perSecond.toFixed(0)}/s (${pair.hosted.cpuMs} ms CPU): ` +
      `${((pair.hosted.perSecond / pair.local.perSecond) * 100).toFixed(0)}%; hosted runs ${runs.length} ` +
      `${JSON.stringify(stops)}, CPU per run max ${Math.max(0, ...runs.map((r) => r.cpu_ms))} ms, ` +
      `runs (deliveries/ms claiming/ms when it asked for the next): ${
        runs.map((r) => `${r.claimed}/${r.claiming_ms}/${r.continued_at_ms ?? "-"}`).join(" ")
      }`,
  );
}
const l = median(rows.map((r) => r.local.perSecond));
const h = median(rows.map((r) => r.hosted.perSecond));
const ratios = rows.map((r) => r.hosted.perSecond / r.local.perSecond);
console.log("");
console.log(`median deliveries/s: local loop ${l.toFixed(0)}, hosted path ${h.toFixed(0)}`);
console.log(`hosted / local: median of the runs' ratios ${(median(ratios) * 100).toFixed(0)}%`);
if (BEFORE_ROOT) {
  const b = rows.map((r) => r.before!.perSecond / r.local.perSecond);
  console.log(
    `before (${BEFORE_ROOT}): median ${median(rows.map((r) => r.before!.perSecond)).toFixed(0)}/s, ` +
      `of local: median ${(median(b) * 100).toFixed(0)}%`,
  );
}
console.log(
  `hosted CPU per invocation, highest of all runs: ${
    Math.max(0, ...rows.flatMap((r) => (r.hosted.runs ?? []).map((x) => x.cpu_ms)))
  } ms (budget 2000)`,
);
await sql`select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()')`;
await sql.end();
await stop(receivers);
