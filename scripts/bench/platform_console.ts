// What the platform console costs. (1) Every configuration API request's first statement now also asks
// whether the claimed organization is suspended: that statement with and without the question,
// alternating, as `config_api` with an admin's claims. (2) A page of the console's organization list,
// where one organization is hostile (100 endpoints, `open` deliveries due, `inbound` log rows of which a
// third failed): the page holding it against a page of ordinary organizations, alternating. Each health
// count reads a bounded number of index entries per organization, so the two should stay close
// whatever the hostile one holds.
//   bash scripts/bench/run.sh platform_console [organizations=2000] [open=100000] [inbound=60000] [rounds=200]
import postgres from "postgres";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const organizations = Number(Deno.args[0] ?? 2000);
const open = Number(Deno.args[1] ?? 100000);
const inbound = Number(Deno.args[2] ?? 60000);
const rounds = Number(Deno.args[3] ?? 200);
const sql = postgres(url, { max: 1, onnotice: () => {} });

// Organizations named so that the hostile one ("A hostile church") leads the first page, and each has
// an admin with a session; a platform admin with a session.
await sql.unsafe(`
  insert into public.organizations (id, name)
    select gen_random_uuid(), 'Church ' || lpad(g::text, 6, '0') from generate_series(1, ${organizations}) g;
  insert into public.organizations (id, name) values ('00000000-0000-4000-8000-00000000a001', 'A hostile church');
  insert into auth.users (id, email)
    select gen_random_uuid(), 'admin-' || o.id || '@example.org' from public.organizations o;
  insert into public.profiles (user_id, organization_id, role)
    select u.id, o.id, 'admin' from public.organizations o join auth.users u on u.email = 'admin-' || o.id || '@example.org';
  insert into auth.sessions (id, user_id, created_at, updated_at, aal)
    select gen_random_uuid(), u.id, now(), now(), 'aal1' from auth.users u;
  insert into auth.users (id, email) values ('00000000-0000-4000-8000-00000000b001', 'ops@platform.example');
  insert into auth.sessions (id, user_id, created_at, updated_at, aal)
    values ('00000000-0000-4000-8000-00000000c001', '00000000-0000-4000-8000-00000000b001', now(), now(), 'aal1');
  insert into public.platform_user_flags (user_id, is_platform_admin) values ('00000000-0000-4000-8000-00000000b001', true);
  -- The hostile organization: 100 endpoints, open deliveries spread over them, a large inbound log.
  alter table public.webhook_deliveries disable trigger user;
  insert into public.webhook_endpoints (organization_id, url, events)
    select '00000000-0000-4000-8000-00000000a001', 'https://h' || g || '.example.org/hook', '{member.created}'
    from generate_series(1, 100) g;
  insert into public.webhook_events (id, organization_id, type, payload)
    select gen_random_uuid(), '00000000-0000-4000-8000-00000000a001', 'member.created', jsonb_build_object('n', g)
    from generate_series(1, ${open}) g;
  with e as (select id, row_number() over () as n from public.webhook_events
             where organization_id = '00000000-0000-4000-8000-00000000a001'),
       p as (select id, row_number() over () - 1 as n from public.webhook_endpoints
             where organization_id = '00000000-0000-4000-8000-00000000a001')
  insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, body_bytes, status,
                                         attempt_count, next_attempt_at)
    select '00000000-0000-4000-8000-00000000a001', e.id, p.id, 'member.created', 10,
           case when e.n % 2 = 0 then 'retrying' else 'pending' end, (e.n % 2)::int, now() - interval '1 minute'
    from e join p on p.n = e.n % 100;
  alter table public.webhook_deliveries enable trigger user;
  insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, signature_valid,
                                          status, received_at)
    select '00000000-0000-4000-8000-00000000a001', 'checkout', 'charged', 'k' || g, '{"event":"charged"}', true,
           case when g % 3 = 0 then 'failed' when g % 3 = 1 then 'processed' else 'received' end,
           now() - make_interval(secs => g)
    from generate_series(1, ${inbound}) g;
  analyze;
`);

async function timed(role: string, claims: Record<string, unknown>, text: string, args: unknown[] = []) {
  return await sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${
      JSON.stringify(claims)
    }, true), set_config('role', ${role}, true)`;
    const t0 = performance.now();
    const rows = await tx.unsafe(text, args as never[]);
    return { ms: performance.now() - t0, rows };
  });
}

// (1) The first statement of every request.
const admins = await sql<{ sub: string; org: string; session: string }[]>`
  select p.user_id as sub, p.organization_id as org, s.id as session
  from public.profiles p join auth.sessions s on s.user_id = p.user_id order by random() limit ${rounds * 5}`;
const FIRST = {
  "admin rule + session":
    `select private.webhook_admin_organization_id() as org, private.session_is_live() as live`,
  "+ suspended?": `select private.webhook_admin_organization_id() as org, private.session_is_live() as live,
                    private.claimed_organization_is_suspended() as suspended`,
};
const first: Record<string, number[]> = Object.fromEntries(Object.keys(FIRST).map((k) => [k, []]));
for (let i = 0; i < admins.length; i++) {
  const a = admins[i]!;
  const claims = { sub: a.sub, role: "authenticated", organization_id: a.org, session_id: a.session };
  const order = i % 2 ? Object.entries(FIRST) : Object.entries(FIRST).reverse();
  for (const [name, text] of order) {
    const { ms, rows } = await timed("config_api", claims, text);
    if (!rows[0]?.org) throw new Error(`${name}: not an admin`);
    first[name]!.push(ms);
  }
}

// (2) A page of 50 organizations with their health.
const ops = {
  sub: "00000000-0000-4000-8000-00000000b001",
  role: "authenticated",
  session_id: "00000000-0000-4000-8000-00000000c001",
};
const PAGE = `select * from private.platform_organizations(null, null, false, $1, $2::uuid, 51)`;
const [ordinaryStart] = await sql<{ name: string; id: string }[]>`
  select name, id from public.organizations where name like 'Church %' order by name, id offset ${
  Math.floor(organizations / 2)
} limit 1`;
const PAGES: Record<string, unknown[]> = {
  "page with the hostile org": [null, null],
  "page of ordinary orgs": [ordinaryStart!.name, ordinaryStart!.id],
};
const pages: Record<string, number[]> = Object.fromEntries(Object.keys(PAGES).map((k) => [k, []]));
for (let i = 0; i < rounds; i++) {
  const order = i % 2 ? Object.entries(PAGES) : Object.entries(PAGES).reverse();
  for (const [name, args] of order) {
    const { ms, rows } = await timed("config_api", ops, PAGE, args);
    if (rows.length !== 51) throw new Error(`${name}: ${rows.length} rows`);
    pages[name]!.push(ms);
  }
}
const [hostile] = await timed(
  "config_api",
  ops,
  `select * from private.platform_organizations($1, null, false, null, null, 1)`,
  [
    "00000000-0000-4000-8000-00000000a001",
  ],
).then((r) => r.rows);
await sql.end();

const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(
  `platform console: ${organizations + 1} organizations, the hostile one with 100 endpoints, ${open} open ` +
    `deliveries, ${inbound} inbound rows; ${machine()}; load ${load}`,
);
const report = (samples: Record<string, number[]>) => {
  const base = summarize(Object.values(samples)[0]!);
  for (const [name, s] of Object.entries(samples)) {
    const r = summarize(s);
    console.log(
      `  ${name.padEnd(28)} p50 ${fmt(r.p50)}  p90 ${fmt(r.p90)}  p99 ${fmt(r.p99)}  (p50 x${
        (r.p50 / base.p50).toFixed(2)
      }, ${r.n} samples)`,
    );
  }
};
report(first);
report(pages);
console.log(`  the hostile organization as listed: ${JSON.stringify(hostile)}`);
