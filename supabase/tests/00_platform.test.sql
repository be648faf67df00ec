-- The local bootstrap's Supabase platform objects behave like Supabase's: auth.uid()/auth.jwt()/
-- auth.role() read `request.jwt.claims` as PostgREST sets it, `authenticated` is subject to row-level
-- security and `service_role` bypasses it.
begin;
select plan(14);

select has_role('anon');
select has_role('authenticated');
select has_role('service_role');
select ok((select rolbypassrls from pg_roles where rolname = 'service_role'), 'service_role bypasses RLS');

-- Two doors: the configuration API's role has all of authenticated's privileges, and PostgREST's login
-- cannot become it (docs/two-doors.md#two-doors-one-rule).
select ok(pg_has_role('config_api', 'authenticated', 'usage'), 'config_api has everything authenticated has');
select ok(not pg_has_role('authenticator', 'config_api', 'member'), 'authenticator (the Data API) cannot become config_api');
select ok(not (select rolcanlogin from pg_roles where rolname = 'config_api'), 'config_api cannot log in');
select ok(pg_has_role('edge_user', 'config_api', 'member'), 'edge_user (the user-request pool) may become config_api');

-- (the raw setting, as PostgREST writes it: what these functions read is the subject here)
select set_config('request.jwt.claims',
  '{"sub":"6f1d4c4e-1111-4a2b-9c3d-000000000001","role":"authenticated","email":"a@example.org","organization_id":"x"}',
  true);
select is(auth.uid(), '6f1d4c4e-1111-4a2b-9c3d-000000000001'::uuid, 'auth.uid() reads sub from request.jwt.claims');
select is(auth.jwt() ->> 'organization_id', 'x', 'auth.jwt() returns the whole claims object');
select is(auth.role(), 'authenticated', 'auth.role() reads role');

-- A table with RLS on and one policy: authenticated sees only what the policy allows, service_role all.
create table public._rls_probe (id int, owner uuid);
alter table public._rls_probe enable row level security;
create policy own on public._rls_probe for select to authenticated using (owner = (select auth.uid()));
insert into public._rls_probe values (1, '6f1d4c4e-1111-4a2b-9c3d-000000000001'), (2, gen_random_uuid());
grant select on public._rls_probe to authenticated, service_role;

set local role authenticated;
select is((select array_agg(id) from public._rls_probe), array[1], 'authenticated is subject to RLS');
reset role;
set local role service_role;
select is((select count(*)::int from public._rls_probe), 2, 'service_role bypasses RLS');
reset role;

select set_config('request.jwt.claims', '', true);
select is(auth.uid(), null, 'no claims: auth.uid() is null');

select * from finish();
rollback;
