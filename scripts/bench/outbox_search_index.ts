// What recording a member change costs, and what Webhook Logs' content search adds to it: members'
// inserts (whose outbox trigger writes each event and its deliveries) with the search as shipped, with
// it off, and with it on the write path as it once was, side by side in one run; then the same inserts
// with one stage of the write path taken away at a time, so each stage's share is known and the next
// feature that adds to recording is measured against them. Each round inserts MEMBERS members in
// 500-row statements, 4 subscribed endpoints (MEMBERS events, 4 x MEMBERS deliveries), in a transaction
// that takes its design's stage away and is rolled back, so every round starts from the same tables;
// designs alternate round by round.
//   - shipped: as migrated; the search is indexed afterwards by its batch job, off the write path
//     (20261129100000_webhook_logs_search.sql), whose own cost per event is measured after each
//     shipped round (the job's batches, in the same transaction, until it has indexed the round's events);
//   - search off: the search's table and its erasure trigger dropped;
//   - search on the write path: the design before, an organization-keyed trigram index on the events;
//   - no member links: without the events' index of the member each is about (erasure follows it);
//   - no logs index: without the deliveries' Webhook Logs index (organization, time, filters);
//   - no deliveries: no endpoint subscribed: the outbox trigger looks, and writes nothing;
//   - member row only: the outbox trigger disabled: the member row, its indexes and tenancy triggers.
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
// Nothing else runs meanwhile: the search's own cron job is measured here, in the shipped rounds.
await sql`select cron.unschedule(jobname) from cron.job`;

const [org] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('outbox index') returning id`;
await sql`insert into public.webhook_endpoints (organization_id, url, events)
          select ${org!.id}, 'https://e' || g || '.example.org/hook', array['member.created']
          from generate_series(1, 4) g`;
const pid = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;

function backendCpu(): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

const designs = [
  "shipped",
  "search off",
  "search on the write path",
  "no member links",
  "no logs index",
  "no deliveries",
  "member row only",
] as const;
type Design = typeof designs[number];
const setup: Record<Design, string[]> = {
  shipped: [],
  "search off": [
    "drop trigger webhook_events_search_forget on public.webhook_events",
    "drop table private.webhook_event_search",
  ],
  "search on the write path": [
    `create index bench_org_body_trgm_idx on public.webhook_events
       using gin (private.webhook_body_trigrams(organization_id, payload::text))`,
  ],
  "no member links": ["drop index public.webhook_events_member_links_idx"],
  "no logs index": ["drop index public.webhook_deliveries_log_idx"],
  "no deliveries": [
    `update public.webhook_endpoints set enabled = false where organization_id = '${org!.id}'`,
  ],
  "member row only": ["alter table public.members disable trigger members_webhook_created"],
};
const expectEvents = (d: Design) => d === "no deliveries" || d === "member row only" ? 0 : MEMBERS;

let bodyBytes = 0;
const wall = new Map<string, number[]>();
const cpu = new Map<string, number[]>();
const walBytes = new Map<string, number[]>();
const add = (m: Map<string, number[]>, k: string, v: number) => m.set(k, [...(m.get(k) ?? []), v]);

type Tx = postgres.TransactionSql;
async function measured<T>(tx: Tx, key: string, per: number, work: () => Promise<T>): Promise<T> {
  const [w0] = await tx<{ lsn: string }[]>`select pg_current_wal_insert_lsn()::text as lsn`;
  const c0 = backendCpu();
  const t0 = performance.now();
  const out = await work();
  const ms = performance.now() - t0;
  const c = backendCpu() - c0;
  const [w] = await tx<{ bytes: string }[]>`
    select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${w0!.lsn}::pg_lsn)::text as bytes`;
  add(wall, key, (ms * 1000) / per);
  add(cpu, key, (c * 1e6) / per);
  add(walBytes, key, Number(w!.bytes) / per);
  return out;
}

const INDEXING = "the search's batch job, afterwards";

async function round(d: Design) {
  try {
    await sql.begin(async (tx) => {
      for (const s of setup[d]) await tx.unsafe(s);
      await measured(tx, d, MEMBERS, async () => {
        for (let done = 0; done < MEMBERS; done += BATCH) {
          await tx`insert into public.members (organization_id, first_name, last_name, email, primary_phone)
                   select ${org!.id}, 'Maria ' || g, 'Fernandes ' || g, 'member' || g || '@example.org',
                          '+55 11 9' || lpad(g::text, 8, '0')
                   from generate_series(${done + 1}::int, ${done + BATCH}::int) g`;
        }
      });
      const [n] = await tx<{ n: number; bytes: number }[]>`
        select count(*)::int as n, coalesce(avg(length(payload::text)), 0)::int as bytes from public.webhook_events
        where organization_id = ${org!.id}`;
      if (n!.n !== expectEvents(d)) {
        throw new Error(`${d}: expected ${expectEvents(d)} events, found ${n!.n}`);
      }
      if (n!.bytes) bodyBytes = n!.bytes;
      if (d === "shipped") {
        // The job's batches, as its cron job runs them, until the round's events all have their keys.
        const indexed = await measured(tx, INDEXING, MEMBERS, async () => {
          let total = 0;
          for (;;) {
            const [b] = await tx<{ n: number | null }[]>`
              select private.webhook_search_index_batch(2000, interval '0 seconds') as n`;
            if (!b!.n) break;
            total += b!.n;
          }
          return total;
        });
        if (indexed !== MEMBERS) throw new Error(`the job indexed ${indexed} events of ${MEMBERS}`);
      }
      throw new Error("rollback");
    });
  } catch (e) {
    if ((e as Error).message !== "rollback") throw e;
  }
}

await round("shipped"); // warm-up, not counted
wall.clear(), cpu.clear(), walBytes.clear();
for (let r = 0; r < ROUNDS; r++) {
  // A different order each round, so no design always follows another.
  for (let i = 0; i < designs.length; i++) await round(designs[(i + r) % designs.length]!);
}

const p50 = (m: Map<string, number[]>, k: string) => summarize(m.get(k)!).p50;
console.log(`What recording a member change costs, per event recorded (4 deliveries each), and its stages`);
console.log(
  `machine: ${machine()}; ${new Date().toISOString()}; load ${
    Deno.loadavg().map((l) => l.toFixed(1)).join(" ")
  }`,
);
console.log(
  `${ROUNDS} rounds x ${MEMBERS} members (500-row inserts) per design, designs alternating; event bodies ${bodyBytes} bytes on average`,
);
console.log(
  `| design | wall p50 µs/event | CPU p50 µs/event | WAL p50 bytes/event | wall vs shipped | WAL vs shipped |`,
);
console.log(`|---|---|---|---|---|---|`);
const base = { w: p50(wall, "shipped"), b: p50(walBytes, "shipped") };
const pct = (x: number, y: number) => `${x >= y ? "+" : ""}${((x / y - 1) * 100).toFixed(1)}%`;
for (const d of [...designs, INDEXING]) {
  const w = p50(wall, d);
  const b = p50(walBytes, d);
  console.log(
    `| ${d} | ${w.toFixed(0)} | ${p50(cpu, d).toFixed(0)} | ${b.toFixed(0)} | ${
      d === INDEXING ? "(off the write path)" : pct(w, base.w)
    } | ${d === INDEXING ? "" : pct(b, base.b)} |`,
  );
}

// Each stage's share of recording (shipped), from the designs that take one away.
const share = (label: string, without: Design) => {
  const w = base.w - p50(wall, without);
  const b = base.b - p50(walBytes, without);
  console.log(
    `| ${label} | ${w.toFixed(0)} µs (${((w / base.w) * 100).toFixed(0)}%) | ${b.toFixed(0)} B (${
      ((b / base.b) * 100).toFixed(0)
    }%) |`,
  );
};
console.log();
console.log(
  `Stages of recording one member change (shipped: ${base.w.toFixed(0)} µs, ${base.b.toFixed(0)} B WAL)`,
);
console.log(`| stage | wall | WAL |`);
console.log(`|---|---|---|`);
const row = p50(wall, "member row only");
const rowWal = p50(walBytes, "member row only");
console.log(
  `| the member row (its indexes, tenancy triggers) | ${row.toFixed(0)} µs (${
    ((row / base.w) * 100).toFixed(0)
  }%) | ${rowWal.toFixed(0)} B (${((rowWal / base.b) * 100).toFixed(0)}%) |`,
);
{
  const w = p50(wall, "no deliveries") - row;
  const b = p50(walBytes, "no deliveries") - rowWal;
  console.log(
    `| outbox trigger, subscription lookup | ${w.toFixed(0)} µs (${((w / base.w) * 100).toFixed(0)}%) | ${
      b.toFixed(0)
    } B (${((b / base.b) * 100).toFixed(0)}%) |`,
  );
}
share("event + 4 deliveries, all their indexes", "no deliveries");
share("… of which the member links (erasure)", "no member links");
share("… of which the deliveries' Webhook Logs index", "no logs index");
share("content search", "search off");
console.log(`| endpoint health | 0 (folded when an attempt is recorded, not an event) | 0 |`);
await sql.end();
