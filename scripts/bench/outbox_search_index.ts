// What the content search's index costs the outbox: recording events (members' inserts, whose outbox
// trigger writes each event and its deliveries) with and without the index on the events' bodies, side
// by side in one run. Each round inserts MEMBERS members in 500-row statements, 4 subscribed endpoints
// (MEMBERS events, 4 x MEMBERS deliveries), in a transaction that keeps one design and is rolled back,
// so every round starts from the same tables; designs alternate round by round.
//   - none: no index on the bodies;
//   - now: webhook_events_org_body_trgm_idx (20261129100000_webhook_logs_search.sql), trigrams keyed by
//     organization, GIN fastupdate on (PostgreSQL's default: new entries go to a pending list, merged
//     at gin_pending_list_limit (4 MB) or by (auto)vacuum);
//   - now, fastupdate off: the same, each insert writing its entries into the index at once;
//   - before: a trigram index on the body over every organization (gin_trgm_ops), main's first design.
// Measured per event: the wall time of the inserts and the backend's CPU (from /proc), and WAL bytes.
//   BENCH_PG_OPTS="-o fsync=off -o synchronous_commit=off" bash scripts/bench/run.sh outbox_search_index [members=2000] [rounds=7]
import postgres from "postgres";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const MEMBERS = Number(Deno.args[0] ?? 2000);
const ROUNDS = Number(Deno.args[1] ?? 7);
const BATCH = 500;
const CLK_TCK = 100;
const sql = postgres(url, { max: 1, onnotice: () => {} });
await sql`select cron.unschedule('log-retention')`;

const [org] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('outbox index') returning id`;
await sql`insert into public.webhook_endpoints (organization_id, url, events)
          select ${org!.id}, 'https://e' || g || '.example.org/hook', array['member.created']
          from generate_series(1, 4) g`;
await sql`create index bench_any_body_trgm_idx on public.webhook_events
            using gin ((payload::text) extensions.gin_trgm_ops)`;
const pid = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;

function backendCpu(): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

type Design = "none" | "now" | "now, fastupdate off" | "before";
const designs: Design[] = ["none", "now", "now, fastupdate off", "before"];
const drops: Record<Design, string[]> = {
  none: ["webhook_events_org_body_trgm_idx", "bench_any_body_trgm_idx"],
  now: ["bench_any_body_trgm_idx"],
  "now, fastupdate off": ["bench_any_body_trgm_idx"],
  before: ["webhook_events_org_body_trgm_idx"],
};
let bodyBytes = 0;
const wall = new Map<Design, number[]>();
const cpu = new Map<Design, number[]>();
const walBytes = new Map<Design, number[]>();

async function round(d: Design) {
  try {
    await sql.begin(async (tx) => {
      for (const i of drops[d]) await tx.unsafe(`drop index public.${i}`);
      if (d === "now, fastupdate off") {
        await tx`alter index public.webhook_events_org_body_trgm_idx set (fastupdate = off)`;
      }
      const [w0] = await tx<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`;
      const c0 = backendCpu();
      const t0 = performance.now();
      for (let done = 0; done < MEMBERS; done += BATCH) {
        await tx`insert into public.members (organization_id, first_name, last_name, email, primary_phone)
                 select ${org!.id}, 'Maria ' || g, 'Fernandes ' || g, 'member' || g || '@example.org',
                        '+55 11 9' || lpad(g::text, 8, '0')
                 from generate_series(${done + 1}::int, ${done + BATCH}::int) g`;
      }
      const ms = performance.now() - t0;
      const c = backendCpu() - c0;
      const [w] = await tx<{ bytes: string }[]>`
        select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${w0!.lsn}::pg_lsn)::text as bytes`;
      const [n] = await tx<{ n: number; bytes: number }[]>`
        select count(*)::int as n, avg(length(payload::text))::int as bytes from public.webhook_events
        where organization_id = ${org!.id}`;
      bodyBytes = n!.bytes;
      if (n!.n !== MEMBERS) throw new Error(`expected ${MEMBERS} events, found ${n!.n}`);
      wall.set(d, [...(wall.get(d) ?? []), (ms * 1000) / MEMBERS]);
      cpu.set(d, [...(cpu.get(d) ?? []), (c * 1e6) / MEMBERS]);
      walBytes.set(d, [...(walBytes.get(d) ?? []), Number(w!.bytes) / MEMBERS]);
      throw new Error("rollback");
    });
  } catch (e) {
    if ((e as Error).message !== "rollback") throw e;
  }
}

await round("none"); // warm-up, not counted
wall.clear(), cpu.clear(), walBytes.clear();
for (let r = 0; r < ROUNDS; r++) {
  // A different order each round, so no design always follows another.
  for (let i = 0; i < designs.length; i++) await round(designs[(i + r) % designs.length]!);
}

console.log(`What the content search's index costs the outbox, per event recorded (4 deliveries each)`);
console.log(
  `machine: ${machine()}; ${new Date().toISOString()}; load ${
    Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
  }`,
);
console.log(
  `${ROUNDS} rounds x ${MEMBERS} members (500-row inserts) per design, designs alternating; event bodies ${bodyBytes} bytes on average`,
);
console.log(
  `| design | wall p50 µs/event | CPU p50 µs/event | WAL p50 bytes/event | wall vs none | CPU vs none |`,
);
console.log(`|---|---|---|---|---|---|`);
const base = { w: summarize(wall.get("none")!).p50, c: summarize(cpu.get("none")!).p50 };
for (const d of designs) {
  const w = summarize(wall.get(d)!).p50;
  const c = summarize(cpu.get(d)!).p50;
  const b = summarize(walBytes.get(d)!).p50;
  console.log(
    `| ${d} | ${w.toFixed(0)} | ${c.toFixed(0)} | ${b.toFixed(0)} | ${
      ((w / base.w - 1) * 100).toFixed(0)
    }% | ${((c / base.c - 1) * 100).toFixed(0)}% |`,
  );
}
await sql.end();
