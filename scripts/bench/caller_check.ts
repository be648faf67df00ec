// What the configuration API's first statement per request costs with the session check folded in:
// `select private.webhook_admin_organization_id(), private.session_is_live()` against the admin rule
// alone (which since sessions are checked by every policy helper holds a session check of its own),
// alternating, as `config_api` with an admin's claims, over a population of users, memberships and
// Supabase Auth sessions.
//   bash scripts/bench/run.sh caller_check [users=20000] [rounds=4000]
import postgres from "postgres";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const users = Number(Deno.args[0] ?? 20000);
const rounds = Number(Deno.args[1] ?? 4000);
const sql = postgres(url, { max: 1, onnotice: () => {} });

await sql.unsafe(`
  insert into public.organizations (id, name)
    select gen_random_uuid(), 'Church ' || g from generate_series(1, ${Math.max(1, users / 20)}) g;
  insert into auth.users (id, email) select gen_random_uuid(), 'u' || g || '@example.org' from generate_series(1, ${users}) g;
  with o as (select id, row_number() over () as n from public.organizations),
       u as (select id, row_number() over () as n from auth.users)
  insert into public.profiles (user_id, organization_id, role)
    select u.id, o.id, 'admin' from u join o on o.n = 1 + (u.n % (select count(*) from o));
  -- Three sessions per user, as several devices leave them.
  insert into auth.sessions (id, user_id, created_at, updated_at, aal)
    select gen_random_uuid(), u.id, now(), now(), 'aal1' from auth.users u, generate_series(1, 3);
  analyze;
`);
const callers = await sql<{ sub: string; org: string; session: string }[]>`
  select distinct on (p.user_id) p.user_id as sub, p.organization_id as org, s.id as session
  from public.profiles p join auth.sessions s on s.user_id = p.user_id
  order by p.user_id, random() limit ${rounds}`;

const QUERIES = {
  "admin rule alone": `select private.webhook_admin_organization_id() as org`,
  "admin rule + session check":
    `select private.webhook_admin_organization_id() as org, private.session_is_live() as live`,
};
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(QUERIES).map((k) => [k, []]));
for (let i = 0; i < callers.length; i++) {
  const c = callers[i]!;
  const claims = JSON.stringify({
    sub: c.sub,
    role: "authenticated",
    organization_id: c.org,
    session_id: c.session,
  });
  // Alternating which goes first, so neither always meets the warmer cache.
  const order = i % 2 ? Object.entries(QUERIES) : Object.entries(QUERIES).reverse();
  for (const [name, text] of order) {
    await sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${claims}, true), set_config('role', 'config_api', true)`;
      const t0 = performance.now();
      const [row] = await tx.unsafe(text);
      samples[name]!.push(performance.now() - t0);
      if (!row?.org || row.live === false) throw new Error(`${name}: unexpected ${JSON.stringify(row)}`);
    });
  }
}
await sql.end();

const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(
  `caller check: ${users} users, ${users * 3} sessions, ${callers.length} rounds; ${machine()}; load ${load}`,
);
const base = summarize(samples["admin rule alone"]!);
for (const [name, s] of Object.entries(samples)) {
  const r = summarize(s);
  console.log(
    `  ${name.padEnd(28)} p50 ${fmt(r.p50)}  p90 ${fmt(r.p90)}  p99 ${fmt(r.p99)}  (p50 x${
      (r.p50 / base.p50).toFixed(2)
    })`,
  );
}
