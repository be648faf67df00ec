-- Test fixtures shared by every pgTAP file, in a `tests` schema this first file creates and commits
-- (files run in name order, each in its own session, and every other file rolls back). The model is
-- Basejump's Supabase test helpers. zzzzz_fixtures_drop.test.sql drops the schema again, so a run
-- against a linked project leaves nothing behind; scripts/test-in-cluster.sh adds both files to any
-- selection of pgTAP files.
--
--   tests.create_user(email [, id, confirmed])      a Supabase Auth user (address confirmed unless said); its id
--   tests.create_organization(name [, id])          returns its id
--   tests.add_member(user, organization [, role])   a profile (role 'staff' unless said)
--   tests.act_as(user, organization)                the rest of the transaction runs as `authenticated` with
--                                                   the claims PostgREST sets for that user's token (null
--                                                   organization: a token without one)
--   tests.act_as_api_key(key, organization)         ... for an organization API key's request
--   tests.act_as_anon()                             ... for a request with the anon key
--   tests.clear_act_as()                            back to the role that runs the tests, no claims
--   tests.can_become(role)                          whether this connection may SET ROLE to it (hosted
--                                                   `postgres` may not become supabase_auth_admin)
--   tests.is_superuser()                            whether the tests run as a superuser (not on hosted)
begin;
select plan(6);

create schema if not exists tests;
-- Whatever role a test has become calls act_as to switch to the next.
grant usage on schema tests to public;

create or replace function tests.create_user(email text, id uuid default gen_random_uuid(),
                                             confirmed boolean default true) returns uuid
language sql as $$
  insert into auth.users (id, email, aud, role, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
  values (id, email, 'authenticated', 'authenticated', case when confirmed then now() end,
          '{"provider":"email","providers":["email"]}', '{}')
  returning id
$$;

create or replace function tests.create_organization(name text, id uuid default gen_random_uuid()) returns uuid
language sql as $$
  insert into public.organizations (id, name) values (id, name) returning id
$$;

create or replace function tests.add_member(user_id uuid, organization_id uuid, role text default 'staff')
returns uuid
language sql as $$
  insert into public.profiles (user_id, organization_id, role) values (user_id, organization_id, role)
  returning id
$$;

-- Transaction-local, as PostgREST sets them per request: the next test file starts clean whatever
-- happens here.
create or replace function tests.set_claims(role text, claims jsonb) returns void
language sql as $$
  select set_config('request.jwt.claims', claims::text, true), set_config('role', role, true)
$$;

create or replace function tests.act_as(user_id uuid, organization_id uuid) returns void
language sql as $$
  select tests.set_claims('authenticated', jsonb_strip_nulls(jsonb_build_object(
    'sub', user_id, 'role', 'authenticated', 'aud', 'authenticated', 'organization_id', organization_id)))
$$;

-- The claims the configuration API builds for a request with an organization API key (actor.ts).
create or replace function tests.act_as_api_key(api_key_id uuid, organization_id uuid) returns void
language sql as $$
  select tests.set_claims('authenticated', jsonb_build_object(
    'role', 'authenticated', 'api_key_id', api_key_id, 'organization_id', organization_id))
$$;

create or replace function tests.act_as_anon() returns void
language sql as $$ select tests.set_claims('anon', '{"role":"anon"}') $$;

create or replace function tests.clear_act_as() returns void
language sql as $$
  select set_config('request.jwt.claims', '', true), set_config('role', 'none', true)
$$;

create or replace function tests.can_become(role text) returns boolean
language sql stable as $$ select pg_has_role(session_user, role, 'member') $$;

create or replace function tests.is_superuser() returns boolean
language sql stable as $$ select rolsuper from pg_roles where rolname = session_user $$;


-- The fixtures themselves.
select tests.create_organization('Fixture Church', 'f1f1f1f1-0000-4000-8000-000000000001');
select tests.add_member(tests.create_user('fixture@example.org', 'f1f1f1f1-0000-4000-8000-0000000000a1'),
                        'f1f1f1f1-0000-4000-8000-000000000001', 'admin');
select tests.act_as('f1f1f1f1-0000-4000-8000-0000000000a1', 'f1f1f1f1-0000-4000-8000-000000000001');
select is(current_user::text, 'authenticated', 'act_as: the role PostgREST becomes for a user token');
select is(auth.uid() || ' ' || (auth.jwt() ->> 'organization_id'),
          'f1f1f1f1-0000-4000-8000-0000000000a1 f1f1f1f1-0000-4000-8000-000000000001',
          'act_as: the user and organization in the claims');
select is((select count(*)::int from public.profiles), 1, 'act_as: row-level security applies');
select tests.act_as_anon();
select is(current_user || ' ' || auth.role(), 'anon anon', 'act_as_anon');
select tests.clear_act_as();
select is(current_user || ' ' || coalesce(auth.uid()::text, 'no user'), session_user || ' no user',
          'clear_act_as: back, no claims');
select ok(tests.can_become(current_user::text), 'can_become: one''s own role');
delete from public.profiles where organization_id = 'f1f1f1f1-0000-4000-8000-000000000001';
delete from public.organizations where id = 'f1f1f1f1-0000-4000-8000-000000000001';
delete from auth.users where id = 'f1f1f1f1-0000-4000-8000-0000000000a1';

select * from finish();
commit;
