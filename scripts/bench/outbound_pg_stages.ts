// Where PostgreSQL's CPU goes per outbound delivery, stage by stage, with no HTTP and no dispatcher:
// one connection (one backend), whose CPU time is read from /proc before and after each stage, and
// the WAL each stage writes. The same work as outbound_vs_peer: 5,000 members in 500-row inserts, 4
// subscribed endpoints = 20,000 deliveries.
//   1. enqueue: the members' inserts (the outbox trigger makes the events and fans them out);
//   2. claim: private.webhook_claim, 256 rows at a time (64 per endpoint), as the dispatcher holds at most
//      256 in flight;
//   3. record: private.webhook_record_results, each claimed batch recorded delivered before the next
//      claim (so, as in a running dispatcher, the leases live at any time are one batch);
//   3'. the same recording again on a second set, with the endpoint health trigger disabled (in this
//      throwaway database only), to show that trigger's share.
// Each set is new work on top of the previous ones (tables grow by 20,000 deliveries a set); statistics
// are whatever autovacuum has made of them, as on a running system.
// Run it through scripts/bench/outbound_pg_stages.sh (a throwaway cluster, fsync off as in the test run).
//   BENCH_REPEATS=3 bash scripts/bench/outbound_pg_stages.sh
import { createSql, type Sql } from "../../supabase/functions/_shared/db.ts";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run scripts/bench/outbound_pg_stages.sh");
const REPEATS = Number(Deno.env.get("BENCH_REPEATS") ?? 3);
const MEMBERS = 5000;
const BATCH = 500;
const ENDPOINTS = 4;
const DELIVERIES = MEMBERS * ENDPOINTS;
const CLK_TCK = 100;

const sql = createSql(url, { max: 1 });

/** CPU seconds of one backend so far (user + system), from /proc. */
function backendCpu(pid: number): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

async function wal(s: Sql): Promise<{ bytes: number; records: number }> {
  const [w] = await s<{ bytes: string; records: string }[]>`
    select wal_bytes::text as bytes, wal_records::text as records from pg_stat_wal`;
  return { bytes: Number(w!.bytes), records: Number(w!.records) };
}

interface Stage {
  us: number;
  walBytes: number;
  walRecords: number;
}

/** CPU and WAL, per delivery, accumulated over the calls `measure` wraps. */
class Meter {
  private cpu = 0;
  private walBytes = 0;
  private walRecords = 0;

  constructor(private readonly pid: number) {}

  async measure<T>(fn: () => Promise<T>): Promise<T> {
    // pg_stat_wal counts what backends have reported; make this one report before each reading.
    await sql`select pg_stat_force_next_flush()`;
    const w0 = await wal(sql);
    const c0 = backendCpu(this.pid);
    const out = await fn();
    this.cpu += backendCpu(this.pid) - c0;
    await sql`select pg_stat_force_next_flush()`;
    const w1 = await wal(sql);
    this.walBytes += w1.bytes - w0.bytes;
    this.walRecords += w1.records - w0.records;
    return out;
  }

  result(): Stage {
    return {
      us: (this.cpu / DELIVERIES) * 1e6,
      walBytes: this.walBytes / DELIVERIES,
      walRecords: this.walRecords / DELIVERIES,
    };
  }
}

async function setup(): Promise<string> {
  const [o] = await sql<{ id: string }[]>`
    insert into public.organizations (name) values ('pg stages') returning id`;
  await sql`insert into public.webhook_endpoints (organization_id, url, events)
            select ${o!.id}, 'https://e' || g || '.example.org/hook', array['member.created']
            from generate_series(1, ${ENDPOINTS}::int) g`;
  return o!.id;
}

async function enqueue(org: string): Promise<void> {
  for (let done = 0; done < MEMBERS; done += BATCH) {
    await sql`insert into public.members (organization_id, first_name, last_name)
              select ${org}, 'm' || g, 'run' from generate_series(1, ${BATCH}::int) g`;
  }
}

type Lease = { delivery_id: string; endpoint_id: string; lease_token: string };

/** Claims and records until nothing is left, each claimed batch recorded before the next claim. */
async function dispatch(claim: Meter, record: Meter): Promise<number> {
  let total = 0;
  for (;;) {
    // 256 rows, 32 MiB of bodies, 64 per endpoint, 256 per organization (all of this benchmark's), 60 s.
    const leases = await claim.measure(() =>
      sql<Lease[]>`select delivery_id, endpoint_id, lease_token
                   from private.webhook_claim(256, 33554432, 64, 256, 60)`
    );
    if (leases.length === 0) return total;
    total += leases.length;
    const at = new Date().toISOString();
    const results = leases.map((l) => ({
      ...l,
      outcome: "delivered",
      attempted_at: at,
      duration_ms: 2,
      response_status: 200,
      error: null,
      response_excerpt: "ok",
      retry_after_seconds: null,
    }));
    await record.measure(() => sql`select private.webhook_record_results(${sql.json(results)})`);
  }
}

const [backend] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
const pid = backend!.pid;
const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");
console.log(`${machine()}; started ${new Date().toISOString()}, load average ${loadavg()}`);
console.log(
  `${
    DELIVERIES.toLocaleString("en")
  } deliveries (${MEMBERS} members in ${BATCH}-row inserts x ${ENDPOINTS} ` +
    `endpoints) per repeat, ${REPEATS} repeats; one backend, its CPU from /proc`,
);
const names = ["enqueue", "claim", "record", "record, health trigger off"] as const;
const samples = new Map<string, Stage[]>(names.map((n) => [n, []]));
// Warm-up: one repeat's worth of work, not measured (caches, plans).
{
  const org = await setup();
  await enqueue(org);
  await dispatch(new Meter(pid), new Meter(pid));
}
for (let r = 0; r < REPEATS; r++) {
  for (const healthOff of [false, true]) {
    const org = await setup();
    const enqueued = new Meter(pid);
    await enqueued.measure(() => enqueue(org));
    const [claim, record] = [new Meter(pid), new Meter(pid)];
    if (healthOff) {
      await sql`alter table public.webhook_delivery_attempts disable trigger webhook_delivery_attempts_fold_health`;
    }
    const done = await dispatch(claim, record);
    if (healthOff) {
      await sql`alter table public.webhook_delivery_attempts enable trigger webhook_delivery_attempts_fold_health`;
      samples.get("record, health trigger off")!.push(record.result());
    } else {
      samples.get("enqueue")!.push(enqueued.result());
      samples.get("claim")!.push(claim.result());
      samples.get("record")!.push(record.result());
    }
    console.log(
      `repeat ${r + 1}${healthOff ? ", health trigger off" : ""}: enqueue ${
        enqueued.result().us.toFixed(0)
      } µs, ` +
        `claim ${claim.result().us.toFixed(0)} µs, record ${record.result().us.toFixed(0)} µs per delivery`,
    );
    const [open] = await sql<{ n: number }[]>`
      select count(*)::int as n from public.webhook_deliveries where status <> 'delivered'`;
    if (done !== DELIVERIES || open!.n !== 0) throw new Error(`dispatched ${done}, ${open!.n} left open`);
  }
}
const med = (xs: number[]) => summarize(xs).p50;
console.log("");
console.log(`finished ${new Date().toISOString()}, load average ${loadavg()}`);
console.log("");
console.log(
  `| stage (medians of ${REPEATS}) | backend CPU per delivery, µs | WAL per delivery, bytes | WAL records |`,
);
console.log("|---|---|---|---|");
let total = 0;
for (const name of names) {
  const s = samples.get(name)!;
  const us = med(s.map((x) => x.us));
  if (name !== "record, health trigger off") total += us;
  console.log(
    `| ${name} | ${us.toFixed(0)} | ${med(s.map((x) => x.walBytes)).toFixed(0)} | ${
      med(s.map((x) => x.walRecords)).toFixed(1)
    } |`,
  );
}
console.log(`| **enqueue + claim + record** | **${total.toFixed(0)}** | | |`);
await sql.end();
