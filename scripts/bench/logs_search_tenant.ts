// Webhook Logs' content search with a hostile tenant: organization A holds `hostile` bodies that all
// contain organization B's pastor's address (copied on purpose, or a value common to A), B holds one
// body in a hundred, interleaved with A's in the table as events of two active organizations are, one of
// which holds the address. B searches for it, and for a value in none of its bodies.
// Side by side in one run, rounds alternating, each in a rolled-back transaction that keeps one index:
//   - before: a trigram index on the body over every organization (gin_trgm_ops), main's first design;
//   - btree_gin: organization_id and the body's trigrams in one GIN index, (organization_id,
//     (payload::text) gin_trgm_ops);
//   - now: the trigrams keyed by organization (20261129100000_webhook_logs_search.sql), as an index on
//     the events here (the design's first layout; shipped, the same keys live in webhook_event_search,
//     written by a batch job after the fact), through the function's first query.
// Timed: the index step of a search (the matching bodies' ids, at most 5,001), as the table's owner, as
// the security-definer function runs it; and the index's buffers for the same query, once.
//   bash scripts/bench/run.sh logs_search_tenant [hostile=250000] [rounds=5]
import postgres from "postgres";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const hostile = Number(Deno.args[0] ?? 250_000);
const rounds = Number(Deno.args[1] ?? 5);
const PER_ROUND = 5;
const sql = postgres(url, { max: 1, onnotice: () => {} });
await sql`select cron.unschedule('log-retention')`;

const orgs = await sql<{ id: string }[]>`
  insert into public.organizations (name) values ('Hostile A'), ('Searcher B') returning id`;
const a = orgs[0]!.id;
const b = orgs[1]!.id;
const ADDRESS = "pastor@church-b.example";
const t0 = performance.now();
await sql.begin(async (tx) => {
  await tx`set local session_replication_role = replica`;
  await tx`
    insert into public.webhook_events (organization_id, type, payload, created_at)
    select case when g % 100 = 0 then ${b}::uuid else ${a}::uuid end, 'member.created',
           jsonb_build_object('id', gen_random_uuid(), 'first_name', 'Maria', 'last_name', 'Fernandes ' || g,
                              'email', case when g % 100 <> 0 or g = ${50 * 100} then ${ADDRESS}
                                            else 'member' || g || '@example.org' end,
                              'primary_phone', '+55 11 9' || lpad(g::text, 8, '0'), 'status', 'active',
                              'created_at', now(), 'updated_at', now()),
           now() - make_interval(secs => ${hostile} - g)
    from generate_series(1, ${Math.round(hostile / 0.99)}::int) g`;
});
const loadSeconds = (performance.now() - t0) / 1000;
const INDEXES = {
  before: `create index bench_any_body_trgm_idx on public.webhook_events
             using gin ((payload::text) extensions.gin_trgm_ops)`,
  btree_gin: `create index bench_org_then_body_trgm_idx on public.webhook_events
                using gin (organization_id, (payload::text) extensions.gin_trgm_ops)`,
  now: `create index webhook_events_org_body_trgm_idx on public.webhook_events
          using gin (private.webhook_body_trigrams(organization_id, payload::text))`,
};
type Variant = keyof typeof INDEXES;
const NAMES: Record<Variant, string> = {
  before: "bench_any_body_trgm_idx",
  btree_gin: "bench_org_then_body_trgm_idx",
  now: "webhook_events_org_body_trgm_idx",
};
await sql`create extension if not exists btree_gin with schema extensions`;
const build: Record<string, string> = {};
for (const [v, ddl] of Object.entries(INDEXES)) {
  const t = performance.now();
  await sql.unsafe(ddl);
  const [s] = await sql<{ size: string }[]>`select pg_size_pretty(pg_relation_size(${
    NAMES[v as Variant]
  })) as size`;
  build[v] = `${((performance.now() - t) / 1000).toFixed(1)} s, ${s!.size}`;
}
await sql`vacuum analyze public.webhook_events`;

// The query each design runs, for a pattern. `now` is the function's (webhook_events_containing).
function query(v: Variant, pattern: string): string {
  // The benchmark's own constants, quoted as literals (custom plans, as the function's).
  const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
  return v === "now"
    ? `select array(select e.id from public.webhook_events e
         where private.webhook_body_trigrams(e.organization_id, e.payload::text)
                 @> private.webhook_pattern_trigrams(${lit(b)}::uuid, ${lit(pattern)})
           and e.organization_id = ${lit(b)} and e.payload::text ilike ${lit(pattern)} limit 5001)`
    : `select array(select e.id from public.webhook_events e
         where e.organization_id = ${lit(b)} and e.payload::text ilike ${lit(pattern)} limit 5001)`;
}

async function withOnly<T>(v: Variant, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let out: T;
  try {
    await sql.begin(async (tx) => {
      for (const o of Object.keys(NAMES) as Variant[]) {
        if (o !== v) await tx.unsafe(`drop index public.${NAMES[o]}`);
      }
      out = await fn(tx);
      throw new Error("rollback");
    });
  } catch (e) {
    if ((e as Error).message !== "rollback") throw e;
  }
  return out!;
}

const searches: [string, string][] = [
  ["B's pastor's address (1 of B's bodies, every one of A's)", `%${ADDRESS}%`],
  ["B's pastor's domain (1 of B's bodies, every one of A's)", "%church-b%"],
  ["a member's address of B's (1 body)", "%member5100@example.org%"],
];
const variants: Variant[] = ["before", "btree_gin", "now"];
const samples = new Map<string, number[]>();
const found = new Map<string, number>();
const buffers = new Map<string, string>();
for (let r = 0; r < rounds; r++) {
  for (const v of variants) {
    await withOnly(v, async (tx) => {
      for (const [name, pattern] of searches) {
        const q = query(v, pattern);
        await tx.unsafe(q); // warm
        for (let i = 0; i < PER_ROUND; i++) {
          const t = performance.now();
          const [row] = await tx.unsafe<{ array: string[] }[]>(q);
          const ms = performance.now() - t;
          const key = `${v}|${name}`;
          samples.set(key, [...(samples.get(key) ?? []), ms]);
          found.set(key, row!.array.length);
        }
        if (r === 0) {
          const [plan] = await tx.unsafe<{ "QUERY PLAN": unknown }[]>(
            `explain (analyze, buffers, format json) ${q}`,
          );
          const nodes: { name: string; blocks: number }[] = [];
          const walk = (n: Record<string, unknown>) => {
            if (n["Node Type"] === "Bitmap Index Scan" || String(n["Node Type"]).startsWith("Index")) {
              nodes.push({
                name: String(n["Index Name"]),
                blocks: Number(n["Shared Hit Blocks"] ?? 0) + Number(n["Shared Read Blocks"] ?? 0),
              });
            }
            for (const c of (n["Plans"] as Record<string, unknown>[] | undefined) ?? []) walk(c);
          };
          const root = (plan!["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0]!.Plan;
          walk(root);
          buffers.set(`${v}|${name}`, nodes.map((n) => `${n.name} ${n.blocks}`).join(" + ") || "no index");
        }
      }
    });
  }
}

const [avg] = await sql<
  { avg: number }[]
>`select avg(length(payload::text))::int as avg from public.webhook_events`;
console.log(`Webhook Logs content search with a hostile tenant: the index step, B searching`);
console.log(`machine: ${machine()}; ${new Date().toISOString()}`);
console.log(
  `data: A ${hostile} bodies all holding ${ADDRESS}, B ${Math.round(hostile / 99)} (one row in 100, ` +
    `interleaved), bodies ${avg!.avg} bytes on average; loaded in ${loadSeconds.toFixed(0)} s; ` +
    `index built: ${variants.map((v) => `${v} ${build[v]}`).join("; ")}`,
);
console.log(`rounds ${rounds} x ${PER_ROUND} runs per design, designs alternating`);
console.log(`| search | design | ids | p50 | p90 | index buffers (one run) | p50 / now |`);
console.log(`|---|---|---|---|---|---|---|`);
for (const [name] of searches) {
  const now = summarize(samples.get(`now|${name}`)!).p50;
  for (const v of variants) {
    const s = summarize(samples.get(`${v}|${name}`)!);
    console.log(
      `| ${name} | ${v} | ${found.get(`${v}|${name}`)} | ${fmt(s.p50)} | ${fmt(s.p90)} | ${
        buffers.get(`${v}|${name}`)
      } | ${(s.p50 / now).toFixed(1)}x |`,
    );
  }
}
await sql.end();
