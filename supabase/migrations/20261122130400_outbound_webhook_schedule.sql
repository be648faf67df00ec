-- Outbound webhooks, part 5: what starts the dispatcher.
--
-- On hosted Supabase every start is a pg_net request to the webhook-dispatcher Edge Function, with the
-- URL and the bearer secret read from Vault, as in Supabase's "Scheduling Edge Functions" guide. pg_net
-- sends a batch of queued requests and starts nothing new until every request of the batch has finished,
-- inside one transaction; so the dispatcher answers 202 at once and delivers in the background
-- (EdgeRuntime.waitUntil), and each request is over in milliseconds. Three things start it:
--
--   webhook-dispatch (pg_cron, every minute)  private.webhook_invoke_dispatcher(): one run of up to 70 s
--                         that keeps polling once idle (retries coming due, expired leases), or with a
--                         backlog one per 3,000 due, up to 8, which share the work without colliding
--                         (claims skip each other's rows). Successive minutes' runs overlap by a few
--                         seconds.
--   new deliveries (statement trigger)       private.webhook_wake_dispatcher(): a run that drains what
--                         is due and stops, at most one every 2 s, so a delivery made while no run is
--                         going goes out within a second or two, not at the next minute.
--   a run about to spend its budget          private.webhook_dispatch_continue(): its successor, while
--                         anything is still due, so that run is up when this one stops (pg_net takes a
--                         request up within about a second); the successor waits up to 10 s for work
--                         its predecessor still holds the caps of. Asked at the end of the run instead
--                         if nothing was due then.
--
-- No post caps a run's rows: each run stops by its own CPU and wall budgets and holds at most its
-- bytes (webhook-dispatcher/budget.ts, slots.ts), whatever the size of the backlog.
--
--   webhook-dispatch-recover (pg_cron, every 5 s where pg_cron schedules in seconds: 1.5+, hosted)
--                         private.webhook_dispatch_recover(): after an outage of the dispatcher (its last
--                         invocation failed) a run at once while anything is due, instead of at the next
--                         minute; nothing while invocations succeed.
--
--   webhook-housekeeping (pg_cron, every minute)  private.webhook_housekeeping(): set aside deliveries
--                         claimed too often without a result, close 24-hour windows, clear leases,
--                         whether or not a dispatcher runs.
--
-- Where pg_net or the Vault secrets are missing (a local database) none of them posts anything; the dev
-- server dispatches locally on NOTIFY instead. pg_net and Vault are created below wherever the platform
-- offers them (every Supabase project); where it offers pg_net and it is still missing, the operator
-- health check says so as a critical alert (private.pg_net_available()).
--
-- On a hosted project `db push` writes the two Vault secrets from [db.vault] in supabase/config.toml
-- (secrets never live in migrations), but only while it has a migration to apply: a new value later goes
-- through private.set_dispatch_secret() below (`npm run dispatch:secret`, docs/operations.md).

-- As Supabase's Cron module installs it (a no-op where it is already enabled).
create extension if not exists pg_cron with schema pg_catalog;
grant usage on schema cron to postgres;
grant all privileges on all tables in schema cron to postgres;

-- Whether the platform offers pg_net at all. Supabase does; Debian's PostgreSQL (the local dev database
-- and the test clusters) does not, and there the dev server dispatches on NOTIFY instead.
create function private.pg_net_available() returns boolean
language sql stable
set search_path = ''
as $$ select exists (select from pg_catalog.pg_available_extensions where name = 'pg_net') $$;

-- Whether `library` is in shared_preload_libraries (pg_net's worker starts only from there); null when
-- this role may not read that setting (it is superuser-only unless granted pg_read_all_settings).
create function private.preloaded(library text) returns boolean
language plpgsql stable
set search_path = ''
as $$
begin
  -- Entries may be quoted or carry a path ($libdir/pg_net): compare the bare names.
  return library = any (
    select regexp_replace(trim(both ' "' from entry), '^.*/', '')
    from unnest(string_to_array(current_setting('shared_preload_libraries'), ',')) entry);
exception when insufficient_privilege then
  return null;
end;
$$;

-- Creates an optional extension in schema `extensions` (where Supabase keeps them; the Security Advisor
-- flags extensions in public) only where it can load: offered by this server, and, for one that runs a
-- background worker, preloaded. A failure is a warning, never the migration's end: a server with pg_net
-- installed but not preloaded still bootstraps, and the operator health check says what is missing.
-- Answers what happened: created (or already there), not_offered, not_preloaded, or failed: <reason>.
create function private.create_extension_where_it_loads(extension text, needs_preload boolean) returns text
language plpgsql volatile
set search_path = ''
as $$
begin
  if exists (select from pg_catalog.pg_extension where extname = extension) then
    return 'created';
  end if;
  if not exists (select from pg_catalog.pg_available_extensions where name = extension) then
    return 'not_offered';
  end if;
  if needs_preload and private.preloaded(extension) is false then
    raise warning '% is installed but not in shared_preload_libraries, so it is not created: add it there, restart, then run: create extension % with schema extensions',
      extension, extension;
    return 'not_preloaded';
  end if;
  begin
    execute format('create extension %I with schema extensions', extension);
  exception when others then
    raise warning '% could not be created (%): it stays off; see webhook_operator_health()', extension, sqlerrm;
    return 'failed: ' || sqlerrm;
  end;
  return 'created';
end;
$$;

-- pg_net (the dispatcher's starter) and Vault (its URL and secret), where the platform has them. Vault
-- keeps its own schema (vault), as Supabase installs it. supabase_vault 0.3 encrypts with a server key it
-- loads only when preloaded (vault.getkey_script): installed but not preloaded, every secret written would
-- fail ("pgsodium_derive: no server secret key defined"), so it is left off, as pg_net is then.
do $$
begin
  perform private.create_extension_where_it_loads('pg_net', needs_preload => true);
  if exists (select from pg_available_extensions where name = 'supabase_vault')
     and not exists (select from pg_extension where extname = 'supabase_vault') then
    if private.preloaded('supabase_vault') is false and private.preloaded('pgsodium') is false then
      raise warning 'supabase_vault is installed but not in shared_preload_libraries (it needs its server key from vault.getkey_script), so it is not created';
    else
      create extension supabase_vault cascade;
    end if;
  end if;
end
$$;

-- Writes a secret into Vault by name: a new one, or the new value of the one by that name. Through
-- Vault's own functions, with the arguments every supabase_vault version takes (0.3.1:
-- vault.create_secret(new_secret, new_name, new_description, new_key_id) and
-- vault.update_secret(secret_id, new_secret, ...), the last ones defaulted); Vault encrypts it. False
-- where Vault is missing (a local database) or cannot encrypt (no server key: a warning says why).
-- Dynamic SQL: the vault schema may not exist.
create function private.vault_put_secret(secret_name text, secret text, description text default '')
returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  secret_id uuid;
begin
  if to_regclass('vault.secrets') is null or not exists (
    select from pg_catalog.pg_proc where proname = 'create_secret' and pronamespace = to_regnamespace('vault')) then
    return false;
  end if;
  execute $q$select id from vault.secrets where name = $1$q$ into secret_id using secret_name;
  begin
    if secret_id is null then
      execute $q$select vault.create_secret($1, $2, $3)$q$ using secret, secret_name, description;
    else
      execute $q$select vault.update_secret($1, $2)$q$ using secret_id, secret;
    end if;
  exception when others then
    raise warning 'Vault could not store %: %', secret_name, sqlerrm;
    return false;
  end;
  return true;
end;
$$;

-- A new bearer secret for the dispatcher (and the mail sender), and where given a new project URL, in
-- Vault: the next request pg_net sends carries it. What `db push` writes on its first run; run this to
-- change them later (`db push` with nothing to apply writes nothing). The same value must reach the
-- functions' WEBHOOK_DISPATCH_SECRET (`supabase secrets set`): until both agree, calls answer 401 and
-- the recovery job starts a run once they do. Called by scripts/dispatch-secret.ts.
create function private.set_dispatch_secret(new_secret text, new_project_url text default null) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if coalesce(length(new_secret), 0) < 32 then
    raise exception 'the dispatch secret must have at least 32 characters (openssl rand -hex 32)';
  end if;
  if new_project_url is not null and new_project_url !~ '^https?://[^/]+' then
    raise exception 'the project URL must be an http(s) URL, like https://<project-ref>.supabase.co';
  end if;
  if not private.vault_put_secret('webhook_dispatch_secret', new_secret) then
    raise exception 'Vault (supabase_vault) is not installed or cannot encrypt here (see the warning): the local setup dispatches without it';
  end if;
  if new_project_url is not null then
    perform private.vault_put_secret('project_url', new_project_url);
  end if;
end;
$$;

-- The pg_net request of each dispatcher invocation, so the operator health check
-- (private.webhook_operator_health) can find their outcomes in net._http_response, which does not say
-- which URL a response came from. Kept for a day.
create table private.webhook_dispatch_requests (
  request_id bigint primary key,
  invoked_at timestamptz not null default now()
);
create index webhook_dispatch_requests_invoked_idx on private.webhook_dispatch_requests (invoked_at);

-- Whether pg_net's http_post is there to call. Looked up by name, not by extension, so tests can stand
-- in for pg_net; every starter asks this first, so a local database does nothing more.
create function private.pg_net_present() returns boolean
language sql volatile
set search_path = ''
as $$ select to_regprocedure('net.http_post(text, jsonb, jsonb, jsonb, integer)') is not null $$;

-- Due deliveries per parallel run the cron job starts: roughly what one run gets through before its
-- 2 s of CPU run out. Only the number of runs; a run's own budget decides when it stops.
create function private.webhook_due_per_run() returns integer
language sql immutable
set search_path = ''
as $$ select 3000 $$;

-- One POST to an Edge Function of this project through pg_net (queued now, sent by pg_net's worker after
-- this transaction commits), with the project URL and the bearer secret from Vault. Null where pg_net,
-- Vault or the secrets are missing. Looked up by name, not by extension, so tests can stand in for
-- pg_net. The mail-sender is started the same way (20261125100000_mail_outbox.sql).
create function private.post_function(function_name text, body jsonb) returns bigint
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  project_url text;
  bearer text;
  request_id bigint;
begin
  if not private.pg_net_present() or to_regclass('vault.decrypted_secrets') is null then
    return null;
  end if;
  -- Dynamic SQL: the vault and net schemas do not exist where these extensions are missing.
  execute $q$select decrypted_secret from vault.decrypted_secrets where name = 'project_url'$q$ into project_url;
  execute $q$select decrypted_secret from vault.decrypted_secrets where name = 'webhook_dispatch_secret'$q$
    into bearer;
  if project_url is null or bearer is null then
    raise warning '%: vault secrets project_url / webhook_dispatch_secret are not set', function_name;
    return null;
  end if;
  -- The functions answer at once (202) and work in the background, so a short timeout is plenty; it
  -- only has to cover a cold start.
  execute $q$select net.http_post(
      url := $1,
      headers := jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || $2),
      body := $3,
      timeout_milliseconds := 10000)$q$
    into request_id
    using rtrim(project_url, '/') || '/functions/v1/' || function_name, bearer, body;
  return request_id;
end;
$$;

-- One POST to the dispatcher; its request id is kept for the health check.
create function private.webhook_post_dispatcher(body jsonb) returns bigint
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  request_id bigint := private.post_function('webhook-dispatcher', body);
begin
  if request_id is not null then
    insert into private.webhook_dispatch_requests (request_id) values (request_id);
  end if;
  return request_id;
end;
$$;

create function private.webhook_invoke_dispatcher() returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  due integer;
  invocations integer;
begin
  if not private.pg_net_present() then
    return null;
  end if;
  -- The backlog, counted on the due index and capped so counting stays cheap.
  select count(*) into due
  from (
    select 1 from public.webhook_deliveries d
    where d.status = any (private.webhook_open_states()) and d.next_attempt_at <= now() + interval '1 minute'
      and not exists (select from private.webhook_live_leases l where l.delivery_id = d.id)
    limit 24000
  ) d;
  invocations := least(8, greatest(1, ceil(due / private.webhook_due_per_run()::numeric)::integer));
  delete from private.webhook_dispatch_requests where invoked_at < now() - interval '1 day';
  for i in 1..invocations loop
    if private.webhook_post_dispatcher('{}') is null then
      return null;
    end if;
  end loop;
  return invocations;
end;
$$;

-- When each function was last woken by a trigger: one row per function, so "at most one wake-up every
-- 2 s" holds across all sessions (the dispatcher here, the mail sender in the mail migration).
create table private.function_wakes (
  function_name text primary key,
  woken_at timestamptz not null default '-infinity'
);
insert into private.function_wakes (function_name) values ('webhook-dispatcher');

-- Whether to wake `function_name` now: true unless it was woken less than `min_interval` ago. The row
-- stays locked until the caller's transaction ends; callers meanwhile skip it rather than wait (that
-- transaction's request goes out at its commit, and its run sees what was committed by then).
create function private.take_wake(function_name text, min_interval interval) returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  perform 1 from private.function_wakes w
   where w.function_name = take_wake.function_name and w.woken_at <= clock_timestamp() - min_interval
     for update skip locked;
  if not found then
    return false;
  end if;
  -- With its WHERE, as every statement here: hosted Supabase's pg-safeupdate refuses an UPDATE without
  -- one on API connections, and this runs inside their inserts.
  update private.function_wakes w set woken_at = clock_timestamp()
   where w.function_name = take_wake.function_name;
  return true;
end;
$$;

-- Starts a run that drains what is due and stops, unless one was started less than `min_interval` ago.
-- True: requested; false: debounced; null: no pg_net (or no secrets).
create function private.webhook_wake_dispatcher(min_interval interval default interval '2 seconds')
returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not private.pg_net_present() then
    return null;
  end if;
  if not private.take_wake('webhook-dispatcher', min_interval) then
    return false;
  end if;
  -- The run stays (polling) for a second longer than the interval after it goes idle, so a delivery
  -- whose wake-up this debounces is picked up by the run already started.
  return private.webhook_post_dispatcher(jsonb_build_object(
      'stop_when_idle', true,
      'idle_grace_ms', (extract(epoch from min_interval) * 1000)::integer + 1000)) is not null;
end;
$$;

-- Asked by a run about to spend its budget (or at its end): its successor at once while anything is due
-- (not debounced: a run spending its CPU on a backlog must not wait out a wake-up made two seconds ago).
-- The successor stops once idle, after 10 s of grace: the time its predecessor may still spend claiming,
-- holding the endpoints' and organizations' caps, before it stops and the successor takes over.
create function private.webhook_dispatch_continue() returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not private.pg_net_present() then
    return null;
  end if;
  if not exists (select 1 from public.webhook_deliveries d
                 where d.status = any (private.webhook_open_states()) and d.next_attempt_at <= now()
                   and not exists (select from private.webhook_live_leases l where l.delivery_id = d.id)) then
    return false;
  end if;
  return private.webhook_post_dispatcher('{"stop_when_idle": true, "idle_grace_ms": 10000}') is not null;
end;
$$;

-- Asked every 5 s (where pg_cron can): while the latest invocation of the dispatcher has failed (no
-- 2xx in time, with or without an HTTP status) and something is due, one run that drains and stops. So
-- the first tick after the dispatcher is back picks up what waited during the outage. An invocation not
-- answered yet is left alone (it may still succeed); a successful one means a run is, or was, going.
create function private.webhook_dispatch_recover() returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  latest bigint;
  failed boolean;
begin
  if not private.pg_net_present() or to_regclass('net._http_response') is null then
    return null;
  end if;
  select request_id into latest from private.webhook_dispatch_requests order by invoked_at desc, request_id desc limit 1;
  execute $q$select not coalesce(status_code between 200 and 299 and not coalesce(timed_out, false), false)
             from net._http_response where id = $1$q$ into failed using latest;
  if not coalesce(failed, false) then
    return false;
  end if;
  return private.webhook_dispatch_continue();
end;
$$;

-- Once per INSERT statement on a queue (webhook_deliveries: the outbox trigger, a replay; the mail
-- outbox): the wake-up function the trigger names, then its label for the warning. Where pg_net is
-- missing this is one catalog lookup. A failing wake-up must never fail the insert that caused it: the
-- cron job is the safety net.
create function private.wake_on_insert() returns trigger
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not private.pg_net_present() then
    return null;
  end if;
  begin
    execute format('select %s()', tg_argv[0]::regproc);
  exception when others then
    raise warning '%: wake-up failed: %', tg_argv[1], sqlerrm;
  end;
  return null;
end;
$$;

create trigger webhook_deliveries_wake_dispatcher
after insert on public.webhook_deliveries
for each statement execute function private.wake_on_insert('private.webhook_wake_dispatcher', 'webhook-dispatch');

revoke all on function private.preloaded(text), private.create_extension_where_it_loads(text, boolean),
  private.vault_put_secret(text, text, text), private.set_dispatch_secret(text, text)
  from public, anon, authenticated, service_role;
revoke all on function private.pg_net_present(), private.pg_net_available(), private.webhook_due_per_run(),
  private.post_function(text, jsonb), private.webhook_post_dispatcher(jsonb), private.webhook_invoke_dispatcher(),
  private.take_wake(text, interval), private.webhook_wake_dispatcher(interval), private.webhook_dispatch_continue(),
  private.webhook_dispatch_recover(), private.wake_on_insert() from public, anon, authenticated;
revoke all on private.function_wakes from public, anon, authenticated;

-- cron.schedule with an existing job name replaces that job, so re-running this is harmless.
select cron.schedule('webhook-housekeeping', '* * * * *', 'select private.webhook_housekeeping()');
select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()');

-- Interval schedules ('5 seconds') came with pg_cron 1.5 (hosted projects have 1.6); Debian's 1.4 (a
-- local database) has minutes only, and there the minute job is the recovery. The health check says
-- which (webhook_operator_health() -> 'scheduler').
create function private.pg_cron_schedules_seconds() returns boolean
language sql stable
set search_path = ''
as $$
  select coalesce((select (regexp_match(extversion, '^(\d+)\.(\d+)'))::int[] >= '{1,5}'
                   from pg_catalog.pg_extension where extname = 'pg_cron'), false)
$$;

-- Schedules webhook-dispatch-recover where pg_cron can run it; true when it is scheduled. Run again after
-- upgrading pg_cron to 1.5+ (the health check asks for it then).
create function private.schedule_dispatch_recover() returns boolean
language plpgsql volatile
set search_path = ''
as $$
begin
  if not private.pg_cron_schedules_seconds() then
    raise notice 'pg_cron % schedules in minutes only: no 5-second webhook-dispatch-recover job (needs pg_cron 1.5+); after a dispatcher outage the minute job picks up',
      (select extversion from pg_catalog.pg_extension where extname = 'pg_cron');
    return false;
  end if;
  perform cron.schedule('webhook-dispatch-recover', '5 seconds', 'select private.webhook_dispatch_recover()');
  return true;
end;
$$;
revoke all on function private.pg_cron_schedules_seconds(), private.schedule_dispatch_recover()
  from public, anon, authenticated;
select private.schedule_dispatch_recover();
