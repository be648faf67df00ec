-- Optional extensions are created only where they can load, in schema `extensions` (as Supabase keeps
-- them), and a failure never ends the migration: a server with pg_net installed but not preloaded still
-- bootstraps (before: `create extension pg_net` failed and with it every bootstrap). The operator health
-- check says when pg_net cannot load, and which pg_cron runs the 5-second recovery job. pg_net itself is
-- not installed here: the creation path is exercised with extensions Debian's PostgreSQL ships
-- (tsm_system_rows loads; earthdistance fails without cube; pg_cron needs preloading).
begin;
select plan(16);

-- Created where it loads, in schema extensions --------------------------------------------------------------
-- (Creating these takes a superuser here; a hosted project's postgres creates only the extensions
-- supautils lets it, and reading shared_preload_libraries takes pg_read_all_settings.)
select tests.is_superuser() as superuser \gset
\if :superuser
select is(private.create_extension_where_it_loads('tsm_system_rows', needs_preload => false), 'created',
          'an extension the server offers is created');
select is((select extnamespace::regnamespace::text from pg_extension where extname = 'tsm_system_rows'), 'extensions',
          'in schema extensions, not public');
select is(private.create_extension_where_it_loads('tsm_system_rows', needs_preload => false), 'created',
          'asked again: already there');
select is(private.create_extension_where_it_loads('no_such_extension', needs_preload => false), 'not_offered',
          'one the server does not offer: nothing tried');
-- A creation that fails is a warning and an answer; the transaction goes on.
select matches(private.create_extension_where_it_loads('earthdistance', needs_preload => false),
               '^failed: required extension "cube" is not installed',
               'a failing creation answers why instead of raising');
select ok(not exists (select from pg_extension where extname = 'earthdistance'),
          'nothing of it is left, and the transaction still runs');
-- One that needs preloading is not created where it is not preloaded (pg_net on a machine that has it
-- installed but not in shared_preload_libraries).
select is(private.preloaded('pg_cron'), true, 'pg_cron is preloaded in this cluster');
select is(private.preloaded('tsm_system_time'), false, 'tsm_system_time is not');
select is(private.create_extension_where_it_loads('tsm_system_time', needs_preload => true), 'not_preloaded',
          'an extension that needs preloading is left out where it is not preloaded');
select ok(not exists (select from pg_extension where extname = 'tsm_system_time'), 'and not created');
\else
select skip('creating extensions and reading shared_preload_libraries take a superuser here: runs on the local test cluster', 10);
\endif

-- Supabase's Security Advisor (splinter's extension_in_public): no extension lives in public.
select is((select coalesce(string_agg(extname, ', '), '') from pg_extension where extnamespace = 'public'::regnamespace),
          '', 'no extension in schema public');

-- Health: pg_net installed but not preloaded -----------------------------------------------------------------
select to_regclass('net._http_response') is null and to_regclass('vault.decrypted_secrets') is null as local_db \gset
\if :local_db
create or replace function private.pg_net_available() returns boolean language sql as $$ select true $$;
create or replace function private.preloaded(library text) returns boolean language sql as $$ select false $$;
select ok(public.webhook_operator_health(max_due_age => interval '1 day') @>
            '{"dispatcher": {"pg_net": false, "pg_net_available": true, "pg_net_preloaded": false},
              "alerts": [{"severity": "warning", "code": "pg_net_not_preloaded"}]}',
          'pg_net installed but not preloaded: said, a warning where hosted dispatch is not set up');
select tests.stand_in_vault();
select ok(public.webhook_operator_health(max_due_age => interval '1 day') @>
            '{"status": "critical", "alerts": [{"severity": "critical", "code": "pg_net_not_preloaded"}]}',
          'with the dispatcher''s Vault secrets set (hosted dispatch meant to run): critical');
\else
select skip('pg_net or Vault is installed here: their absence is played on the local test cluster', 2);
\endif

-- Health: which pg_cron, and whether the 5-second recovery job runs --------------------------------------------
select is(public.webhook_operator_health() -> 'scheduler',
          jsonb_build_object('pg_cron_version', (select extversion from pg_extension where extname = 'pg_cron'),
                             'recover_every_5s', private.pg_cron_schedules_seconds()),
          'health names the pg_cron version and whether webhook-dispatch-recover runs (pg_cron 1.5+)');
select is(private.schedule_dispatch_recover(), private.pg_cron_schedules_seconds(),
          'the recovery job is scheduled exactly where pg_cron schedules in seconds');
-- Where hosted dispatch runs (pg_net's response table present) without the job: a warning that says why.
select to_regclass('net._http_response') is null as no_pg_net \gset
\if :no_pg_net
create schema if not exists net;
create table net._http_response (id bigint, status_code integer, content text, timed_out boolean,
                                 error_msg text, created timestamptz not null default now());
\endif
select cron.unschedule(jobid) from cron.job where jobname = 'webhook-dispatch-recover';
select ok(public.webhook_operator_health(max_due_age => interval '1 day') -> 'alerts' @>
            case when private.pg_cron_schedules_seconds()
                 then '[{"code": "recover_job_missing"}]'::jsonb
                 else '[{"code": "recover_job_unavailable"}]'::jsonb end,
          'hosted dispatch without the recovery job: a warning naming the pg_cron version or the fix');

select * from finish();
rollback;
