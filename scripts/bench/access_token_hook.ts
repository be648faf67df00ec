// How long the access-token hook takes when Supabase Auth calls it, with a realistic population:
// many organizations, users with several memberships, remembered choices and platform flags.
// Supabase Auth gives the hook 2 s; we want it far below that.
//   bash scripts/bench/run.sh access_token_hook [users=20000] [calls=2000]
import postgres from "postgres";
import { fmt, machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const users = Number(Deno.args[0] ?? 20000);
const calls = Number(Deno.args[1] ?? 2000);
const sql = postgres(url, { max: 1, onnotice: () => {} });

await sql.unsafe(`
  insert into public.organizations (id, name)
    select gen_random_uuid(), 'Church ' || g from generate_series(1, ${Math.max(1, users / 20)}) g;
  insert into auth.users (id, email) select gen_random_uuid(), 'u' || g || '@example.org' from generate_series(1, ${users}) g;
  with o as (select id, row_number() over () as n from public.organizations),
       u as (select id, row_number() over () as n from auth.users)
  insert into public.profiles (user_id, organization_id, role)
    select u.id, o.id, case when u.n % 10 = 0 then 'admin' else 'staff' end
    from u join o on o.n = 1 + (u.n % (select count(*) from o))
    union all
    select u.id, o.id, 'staff' from u join o on o.n = 1 + ((u.n + 7) % (select count(*) from o)) where u.n % 3 = 0
    on conflict do nothing;
  insert into public.user_active_organization (user_id, organization_id)
    select p.user_id, min(p.organization_id::text)::uuid from public.profiles p group by p.user_id having count(*) > 1;
  insert into public.platform_user_flags (user_id, is_platform_admin) select id, true from auth.users limit 50;
  analyze;
`);
const ids = (await sql<{ id: string }[]>`select id from auth.users order by random() limit ${calls}`).map((
  r,
) => r.id);

const samples: number[] = [];
await sql.begin(async (tx) => {
  await tx`set local role supabase_auth_admin`;
  for (const id of ids) {
    const event = {
      user_id: id,
      authentication_method: "password",
      claims: {
        sub: id,
        aud: "authenticated",
        role: "authenticated",
        exp: 1795000000,
        iat: 1794996400,
        aal: "aal1",
      },
    };
    const t0 = performance.now();
    await tx`select public.custom_access_token_hook(${sql.json(event)})`;
    samples.push(performance.now() - t0);
  }
});
const s = summarize(samples);
console.log(`access-token hook, ${users} users, ${calls} calls (one connection, round trip included)`);
console.log(`machine: ${machine()}`);
console.log(`p50 ${fmt(s.p50)}  p90 ${fmt(s.p90)}  p99 ${fmt(s.p99)}  max ${fmt(s.max)}`);
await sql.end();
