-- Fixtures for every pgTAP file (the model: Basejump's Supabase test helpers), in a schema `tests` this
-- first file commits; each other file rolls back, and zzzzz_fixtures_drop.test.sql drops the schema, so
-- a run against a linked project leaves nothing. scripts/test-in-cluster.sh runs both around any
-- selection. act_as* set the role and claims PostgREST sets per request, transaction-local like them;
-- can_become / is_superuser tell the checks a hosted project's `postgres` cannot run (they skip()).
begin;
select plan(6);
create schema if not exists tests;
grant usage on schema tests to public; -- whatever role a test has become switches to the next

create or replace function tests.create_user(email text, id uuid default gen_random_uuid(),
                                             confirmed boolean default true) returns uuid
language sql as $$
  insert into auth.users (id, email, aud, role, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
  values (id, email, 'authenticated', 'authenticated', case when confirmed then now() end,
          '{"provider":"email","providers":["email"]}', '{}') returning id $$;
create or replace function tests.create_organization(name text, id uuid default gen_random_uuid()) returns uuid
language sql as $$ insert into public.organizations (id, name) values (id, name) returning id $$;
create or replace function tests.add_member(user_id uuid, organization_id uuid, role text default 'staff')
returns uuid language sql as $$
  insert into public.profiles (user_id, organization_id, role) values (user_id, organization_id, role) returning id $$;

create or replace function tests.set_claims(role text, claims jsonb) returns void
language sql as $$ select set_config('request.jwt.claims', claims::text, true), set_config('role', role, true) $$;
-- A user's token (a null organization: a token without one).
create or replace function tests.act_as(user_id uuid, organization_id uuid) returns void
language sql as $$ select tests.set_claims('authenticated', jsonb_strip_nulls(jsonb_build_object(
  'sub', user_id, 'role', 'authenticated', 'aud', 'authenticated', 'organization_id', organization_id))) $$;
-- An organization API key's request, with the claims the configuration API builds (actor.ts).
create or replace function tests.act_as_api_key(api_key_id uuid, organization_id uuid) returns void
language sql as $$ select tests.set_claims('authenticated', jsonb_build_object(
  'role', 'authenticated', 'api_key_id', api_key_id, 'organization_id', organization_id)) $$;
create or replace function tests.act_as_anon() returns void
language sql as $$ select tests.set_claims('anon', '{"role":"anon"}') $$;
create or replace function tests.clear_act_as() returns void
language sql as $$ select set_config('request.jwt.claims', '', true), set_config('role', 'none', true) $$;
create or replace function tests.can_become(role text) returns boolean
language sql stable as $$ select pg_has_role(session_user, role, 'member') $$;
create or replace function tests.is_superuser() returns boolean
language sql stable as $$ select rolsuper from pg_roles where rolname = session_user $$;
-- The plan of one statement of a PL/pgSQL function as the function runs it: its text cut from the
-- function's source (`statement`: a regular expression whose first group is the statement), the
-- function's parameters as $1, $2, … (PL/pgSQL's cached plans are generic), explained with `args`.
create or replace function tests.statement_plan(fn regprocedure, statement text, args text) returns text
language plpgsql as $$
declare
  p pg_proc;
  q text;
  line text;
  out text := '';
begin
  select * into p from pg_proc where oid = fn;
  q := substring(p.prosrc from statement);
  if q is null then
    raise exception 'no statement matching % in %', statement, fn;
  end if;
  for i in 1 .. p.pronargs loop
    q := regexp_replace(q, '\m' || p.proargnames[i] || '\M', '$' || i, 'g');
  end loop;
  execute format('prepare tests_statement_plan(%s) as %s', oidvectortypes(p.proargtypes), q);
  for line in execute format('explain (costs off) execute tests_statement_plan(%s)', args) loop
    out := out || line || E'\n';
  end loop;
  deallocate tests_statement_plan;
  return out;
end $$;

-- The fixtures themselves.
select tests.add_member(tests.create_user('fixture@example.org', 'f1f1f1f1-0000-4000-8000-0000000000a1'),
  tests.create_organization('Fixture Church', 'f1f1f1f1-0000-4000-8000-000000000001'), 'admin');
select tests.act_as('f1f1f1f1-0000-4000-8000-0000000000a1', 'f1f1f1f1-0000-4000-8000-000000000001');
select is(current_user::text, 'authenticated', 'act_as: the role PostgREST becomes for a user token');
select is(auth.uid() || ' ' || (auth.jwt() ->> 'organization_id'),
  'f1f1f1f1-0000-4000-8000-0000000000a1 f1f1f1f1-0000-4000-8000-000000000001', 'act_as: user and organization');
select is((select count(*)::int from public.profiles), 1, 'act_as: row-level security applies');
select tests.act_as_anon();
select is(current_user || ' ' || auth.role(), 'anon anon', 'act_as_anon');
select tests.clear_act_as();
select is(current_user || ' ' || coalesce(auth.uid()::text, '-'), session_user || ' -', 'clear_act_as: back, no claims');
select ok(tests.can_become(current_user::text), 'can_become: one''s own role');
delete from public.organizations where id = 'f1f1f1f1-0000-4000-8000-000000000001';
delete from auth.users where id = 'f1f1f1f1-0000-4000-8000-0000000000a1';
select * from finish();
commit;
