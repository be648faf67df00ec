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
-- (`joined`: a membership's age matters to the access-token hook, which picks the oldest)
create or replace function tests.add_member(user_id uuid, organization_id uuid, role text default 'staff',
                                            joined timestamptz default now()) returns uuid
language sql as $$
  insert into public.profiles (user_id, organization_id, role, created_at)
  values (user_id, organization_id, role, joined) returning id $$;
-- The two-tenant setup of the tenancy tests: organizations Church A and Church B, an admin and a staff
-- member of A, an admin of B (admin-a@, staff-a@, admin-b@example.org).
create or replace function tests.create_tenants(org_a uuid, org_b uuid, admin_a uuid, staff_a uuid, admin_b uuid)
returns void language sql as $$
  select tests.create_organization('Church A', org_a), tests.create_organization('Church B', org_b);
  select tests.add_member(tests.create_user('admin-a@example.org', admin_a), org_a, 'admin'),
         tests.add_member(tests.create_user('staff-a@example.org', staff_a), org_a, 'staff'),
         tests.add_member(tests.create_user('admin-b@example.org', admin_b), org_b, 'admin') $$;
-- An endpoint (its URL made from its id unless given); a member.created subscriber unless told.
create or replace function tests.create_endpoint(organization_id uuid, id uuid default gen_random_uuid(),
                                                 events text[] default array['member.created'],
                                                 url text default null) returns uuid
language sql as $$
  insert into public.webhook_endpoints (id, organization_id, url, events)
  values (id, organization_id, coalesce(url, 'https://hooks.example.org/' || id), events) returning id $$;
-- `n` members m1, m2, … (each raises member.created through the outbox triggers).
create or replace function tests.create_members(organization_id uuid, n integer) returns integer
language sql as $$
  with m as (insert into public.members (organization_id, first_name)
             select organization_id, 'm' || g from generate_series(1, n) g returning 1)
  select count(*)::int from m $$;
-- `n` member.created events of an organization, each with one delivery to `endpoint_id` due since
-- `due_since`, written as the outbox would (no member rows, no other endpoint); `payload` is added to
-- each event's {"n": …}.
create or replace function tests.create_due_deliveries(organization_id uuid, endpoint_id uuid, n integer default 1,
                                                       due_since interval default '1 minute',
                                                       payload jsonb default '{}') returns integer
language sql as $$
  with e as (
    insert into public.webhook_events (organization_id, type, payload)
    select organization_id, 'member.created', jsonb_build_object('n', g) || payload from generate_series(1, n) g
    returning id
  ), d as (
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, next_attempt_at)
    select organization_id, e.id, endpoint_id, now() - due_since from e
    returning 1
  )
  select count(*)::int from d $$;
-- One attempt's result as the dispatcher reports it to private.webhook_record_results: delivered for a
-- 2xx status, else failed with the status as its error (and the receiver's Retry-After, if any).
create or replace function tests.result(delivery_id uuid, endpoint_id uuid, lease_token uuid,
                                        response_status integer default 200, attempted_at timestamptz default now(),
                                        retry_after_seconds integer default null) returns jsonb
language sql as $$
  select jsonb_build_object('delivery_id', delivery_id, 'endpoint_id', endpoint_id, 'lease_token', lease_token,
                            'outcome', case when response_status between 200 and 299 then 'delivered' else 'failed' end,
                            'attempted_at', attempted_at, 'duration_ms', 4, 'response_status', response_status)
      || case when response_status between 200 and 299 then '{}'
              else jsonb_build_object('error', 'HTTP ' || response_status, 'retry_after_seconds', retry_after_seconds) end $$;
-- The access-token hook's input as Supabase Auth builds it for a user (the documented event shape),
-- and the claims the hook returns for it, called as whatever role is current.
create or replace function tests.hook_event(user_id text, method text default 'password', extra jsonb default '{}')
returns jsonb language sql as $$
  select jsonb_build_object(
    'user_id', user_id,
    'authentication_method', method,
    'claims', jsonb_build_object(
      'iss', 'http://127.0.0.1:54321/auth/v1', 'aud', 'authenticated',
      'exp', 1795000000, 'iat', 1794996400, 'sub', user_id, 'email', 'x@example.org', 'phone', '',
      'app_metadata', '{"provider":"email","providers":["email"]}'::jsonb, 'user_metadata', '{}'::jsonb,
      'role', 'authenticated', 'aal', 'aal1',
      'amr', jsonb_build_array(jsonb_build_object('method', method, 'timestamp', 1794996400)),
      'session_id', '5b1a5b1a-0000-4000-8000-000000000001', 'is_anonymous', false) || extra) $$;
create or replace function tests.token_claims(user_id text, method text default 'password', extra jsonb default '{}')
returns jsonb language sql as $$
  select public.custom_access_token_hook(tests.hook_event(user_id, method, extra)) -> 'claims' $$;

create or replace function tests.set_claims(role text, claims jsonb) returns void
language sql as $$ select set_config('request.jwt.claims', claims::text, true), set_config('role', role, true) $$;
-- The user's live session in auth.sessions, as signing in makes one (made when first asked for, and
-- again after tests.sign_out): its id, for the token's `session_id`. Security definer: a test acting as
-- one user switches to the next through this.
create or replace function tests.session_of(user_id uuid) returns uuid
language sql security definer set search_path = '' as $$
  insert into auth.sessions (id, user_id, created_at, updated_at, aal)
  select gen_random_uuid(), u.id, now(), now(), 'aal1' from auth.users u
  where u.id = session_of.user_id
    and not exists (select 1 from auth.sessions s where s.user_id = u.id and s.not_after is null);
  select s.id from auth.sessions s where s.user_id = session_of.user_id and s.not_after is null
  order by s.created_at limit 1 $$;
-- Signing out: the user's sessions end (Supabase Auth deletes them); tokens naming them live on.
create or replace function tests.sign_out(user_id uuid) returns void
language sql security definer set search_path = '' as $$
  delete from auth.sessions s where s.user_id = sign_out.user_id $$;
-- A user's token through the Data API, as PostgREST runs it (a null organization: a token without one),
-- naming the user's live session unless `session` names another (a signed-out token keeps its old one).
create or replace function tests.act_as(user_id uuid, organization_id uuid, session uuid default null) returns void
language sql as $$ select tests.set_claims('authenticated', jsonb_strip_nulls(jsonb_build_object(
  'sub', user_id, 'role', 'authenticated', 'aud', 'authenticated', 'organization_id', organization_id,
  'session_id', coalesce(session, tests.session_of(user_id))))) $$;
-- The same token through the configuration API, which runs as config_api (webhooks/actor.ts).
create or replace function tests.act_as_config_api(user_id uuid, organization_id uuid, session uuid default null)
returns void language sql as $$
  select tests.act_as(user_id, organization_id, session), set_config('role', 'config_api', true) $$;
-- An organization API key's request, with the claims the configuration API builds (actor.ts): keys exist
-- only there.
create or replace function tests.act_as_api_key(api_key_id uuid, organization_id uuid) returns void
language sql as $$ select tests.set_claims('config_api', jsonb_build_object(
  'role', 'authenticated', 'api_key_id', api_key_id, 'organization_id', organization_id)) $$;
create or replace function tests.act_as_anon() returns void
language sql as $$ select tests.set_claims('anon', '{"role":"anon"}') $$;
create or replace function tests.clear_act_as() returns void
language sql as $$ select set_config('request.jwt.claims', '', true), set_config('role', 'none', true) $$;
create or replace function tests.can_become(role text) returns boolean
language sql stable as $$ select pg_has_role(session_user, role, 'member') $$;
create or replace function tests.is_superuser() returns boolean
language sql stable as $$ select rolsuper from pg_roles where rolname = session_user $$;
-- Every organization already in the database held, as a suspension holds one (its deliveries stay due
-- and no claim or housekeeping takes them), and their leases out of the way, for the rest of the calling
-- test's transaction: a test of the dispatcher's claim or housekeeping then sees only the organizations
-- it makes afterwards, whatever other work a project's database has in flight. Nothing else sees this
-- (the test rolls back; a dispatcher recording a result for one of those leases meanwhile waits for it).
-- The number of organizations held.
create or replace function tests.hold_existing_organizations() returns integer
language sql as $$
  delete from private.webhook_leases;
  with held as (
    insert into private.organization_suspensions (organization_id, reason)
    select o.id, 'held by a pgTAP test' from public.organizations o
    on conflict (organization_id) do nothing
    returning 1)
  select count(*)::int from held $$;
-- Stand-ins for pg_net (net.http_post records each request in net.posted) and Vault (the dispatcher's
-- URL and secret unless told), for a database that lacks them: the test checks pg_net is absent first.
create or replace function tests.stand_in_pg_net() returns void language plpgsql as $$
begin
  create schema net;
  create table net.posted (id bigserial primary key, url text, headers jsonb, body jsonb, timeout_ms integer);
  create function net.http_post(url text, body jsonb default '{}', params jsonb default '{}',
                                headers jsonb default '{}', timeout_milliseconds integer default 5000)
  returns bigint language sql as $f$
    insert into net.posted (url, headers, body, timeout_ms) values (url, headers, body, timeout_milliseconds)
    returning id $f$;
end $$;
-- Where Vault is installed (a hosted project, the hosted-like lane) it is used itself, within the test's
-- transaction: the dispatcher's two secrets are replaced (or removed) there and come back at the rollback.
create or replace function tests.stand_in_vault(with_secrets boolean default true) returns void
language plpgsql as $$
begin
  if to_regclass('vault.decrypted_secrets') is null then
    create schema vault;
    create table vault.decrypted_secrets (name text, decrypted_secret text);
  end if;
  execute $q$delete from vault.decrypted_secrets where name in ('project_url', 'webhook_dispatch_secret')$q$;
  if with_secrets then
    perform tests.set_vault_secret('project_url', 'https://ref.supabase.example/');
    perform tests.set_vault_secret('webhook_dispatch_secret', 'dispatch-secret');
  end if;
end $$;
-- Sets the Vault secret `secret_name`: through Vault's own function where Vault is installed (its
-- supabase_vault 0.3 signature), else in the stand-in's table.
create or replace function tests.set_vault_secret(secret_name text, secret text) returns void
language plpgsql as $$
begin
  execute $q$delete from vault.decrypted_secrets where name = $1$q$ using secret_name;
  if to_regprocedure('vault.create_secret(text, text, text, uuid)') is not null then
    execute $q$select vault.create_secret($1, $2)$q$ using secret, secret_name;
  else
    execute $q$insert into vault.decrypted_secrets (name, decrypted_secret) values ($1, $2)$q$ using secret_name, secret;
  end if;
end $$;
-- EXPLAIN (costs off) of `query`; with `settings_of`, under that function's SET clauses (its planner
-- settings), which are put back afterwards.
create or replace function tests.plan(query text, settings_of regprocedure default null) returns text
language plpgsql as $$
declare
  setting text;
  saved text[] := '{}';
  line text;
  out text := '';
begin
  for setting in select unnest(proconfig) from pg_proc where oid = settings_of loop
    saved := saved || (split_part(setting, '=', 1) || '=' || current_setting(split_part(setting, '=', 1)));
    perform set_config(split_part(setting, '=', 1), substr(setting, strpos(setting, '=') + 1), true);
  end loop;
  for line in execute 'explain (costs off) ' || query loop
    out := out || line || E'\n';
  end loop;
  foreach setting in array saved loop
    perform set_config(split_part(setting, '=', 1), substr(setting, strpos(setting, '=') + 1), true);
  end loop;
  return out;
end $$;
-- The plan of one statement of a PL/pgSQL function as the function runs it: its text cut from the
-- function's source (`statement`: a regular expression whose first group is the statement), the
-- function's parameters as $1, $2, … (PL/pgSQL's cached plans are generic), explained with `args`
-- under the function's planner settings.
create or replace function tests.statement_plan(fn regprocedure, statement text, args text) returns text
language plpgsql as $$
declare
  p pg_proc;
  q text;
  out text;
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
  out := tests.plan(format('execute tests_statement_plan(%s)', args), fn);
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
