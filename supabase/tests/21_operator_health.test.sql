-- public.webhook_operator_health(): the queue, the dispatcher's pg_net invocations and the cron jobs,
-- with alerts. Without pg_net (the test cluster): the answer of the local dev setup, and the critical
-- alert where pg_net was expected. Then the dispatcher's invocations as pg_net records them in
-- net._http_response (the real table where pg_net is installed, else a stand-in with its columns), one
-- kind of outcome at a time: success, HTTP 401, connection refused, DNS failure, TLS failure, timeout.
begin;
select plan(31);

-- Nothing else in the queue, whatever else the database holds (other test files roll back; a project's
-- database has other organizations' work, in flight too): this transaction, rolled back, starts clean.
delete from public.webhook_deliveries;
delete from private.webhook_leases;
-- Nor any cron history: in the throwaway test cluster pg_cron's own runs fail to connect (password
-- auth), and a run that happened to fall in this test run would add a cron_job_failed alert.
delete from cron.job_run_details;

select tests.create_endpoint(tests.create_organization('Health', 'f0000000-0000-4000-8000-000000000001'),
                             'f1000000-0000-4000-8000-000000000001');
insert into public.webhook_events (id, organization_id, type, payload)
select ('f2000000-0000-4000-8000-00000000000' || g)::uuid, 'f0000000-0000-4000-8000-000000000001', 'member.created', '{}'
from generate_series(1, 4) g;
insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, status, next_attempt_at,
                                       delivered_at)
values
  -- due for 10 minutes, due for 1 minute, due but being sent (leased below), delivered
  ('f0000000-0000-4000-8000-000000000001', 'f2000000-0000-4000-8000-000000000001',
   'f1000000-0000-4000-8000-000000000001', 'member.created', 'retrying', now() - interval '10 minutes', null),
  ('f0000000-0000-4000-8000-000000000001', 'f2000000-0000-4000-8000-000000000002',
   'f1000000-0000-4000-8000-000000000001', 'member.created', 'pending', now() - interval '1 minute', null),
  ('f0000000-0000-4000-8000-000000000001', 'f2000000-0000-4000-8000-000000000003',
   'f1000000-0000-4000-8000-000000000001', 'member.created', 'pending', now() - interval '1 hour', null),
  ('f0000000-0000-4000-8000-000000000001', 'f2000000-0000-4000-8000-000000000004',
   'f1000000-0000-4000-8000-000000000001', 'member.created', 'delivered', null, now());
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select id, endpoint_id, organization_id, gen_random_uuid(), now() + interval '30 seconds'
from public.webhook_deliveries where event_id = 'f2000000-0000-4000-8000-000000000003';

create temp table h as select public.webhook_operator_health() as v;
select is((select (v -> 'queue') - 'oldest_due_at' - 'oldest_due_age_seconds' from h),
          '{"open": 3, "due": 2, "in_flight": 1, "held_suspended": 0}'::jsonb, 'queue: open, due now and being sent');
select ok((select (v #>> '{queue,oldest_due_age_seconds}')::int between 600 and 660 from h),
          'queue: the oldest due delivery''s age');
-- The queue's alerts only: the others tell how this database dispatches (no pg_net here, pg_net never
-- invoked on a fresh hosted project...), checked below and in hosted_extensions.test.sql.
create function pg_temp.queue_alerts(health jsonb) returns jsonb language sql as $$
  select jsonb_path_query_array(health -> 'alerts', '$[*] ? (@.code starts with "queue").code') $$;
select is((select pg_temp.queue_alerts(v) from h), '["queue_behind"]'::jsonb,
          'a delivery due for 10 minutes: the queue is behind');
select is((select v ->> 'status' from h), 'critical', 'which is critical');
-- (and on the local setup, with neither pg_net nor Vault, nothing else raises any alert either)
select is((select case when to_regclass('net._http_response') is null and to_regclass('vault.decrypted_secrets') is null
                       then jsonb_path_query_array(v -> 'alerts', '$[*].code') else pg_temp.queue_alerts(v) end
             from (select public.webhook_operator_health(max_due_age => interval '1 hour') as v) x), '[]'::jsonb,
          'with a 1-hour threshold the same queue raises nothing');
select ok((select v -> 'cron' ? 'webhook-dispatch' and v -> 'cron' ? 'log-retention' from h),
          'the cron jobs are listed');

-- Without pg_net ----------------------------------------------------------------------------------------
select to_regclass('net._http_response') is null and to_regclass('vault.decrypted_secrets') is null as local_db \gset
\if :local_db
select is((select v -> 'dispatcher' from h), '{"pg_net": false, "pg_net_available": false}'::jsonb,
          'a database that offers no pg_net (the dev setup, dispatching on NOTIFY): said so, no alert');
-- The platform offers pg_net but it is not installed (what every Supabase project was before the
-- migration enabled it): hosted dispatch cannot run. (Offered and loadable: whether it is preloaded is
-- played as unknown, as where the setting cannot be read; not preloaded is hosted_extensions' case.)
create or replace function private.pg_net_available() returns boolean language sql as $$ select true $$;
create or replace function private.preloaded(library text) returns boolean language sql as $$ select null::boolean $$;
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') @>
            '{"status": "critical", "alerts": [{"code": "pg_net_missing"}]}',
          'pg_net offered but not installed: critical, hosted dispatch cannot run');
create or replace function private.pg_net_available() returns boolean language sql as $$ select false $$;
-- The operator set the dispatcher's Vault secrets: hosted dispatch was meant to run.
select tests.stand_in_vault();
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') @> '{"alerts": [{"code": "pg_net_missing"}]}',
          'Vault secrets set but no pg_net: critical too');
\else
select skip('pg_net or Vault is installed here: the answer without them is checked on the local test cluster', 3);
\endif

-- With pg_net ----------------------------------------------------------------------------------------------
select to_regclass('net._http_response') is null as stand_in \gset
\if :stand_in
create schema net;
create table net._http_response (
  id bigint, status_code integer, content_type text, headers jsonb, content text, timed_out boolean,
  error_msg text, created timestamptz not null default now()
);
delete from vault.decrypted_secrets where name = 'webhook_dispatch_secret';
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') @>
            '{"status": "critical", "alerts": [{"code": "dispatch_not_configured"}]}',
          'pg_net without the dispatcher''s Vault secrets: critical');
-- (Vault's own function where Vault is installed, as on a hosted project; else the stand-in's table)
select tests.set_vault_secret('webhook_dispatch_secret', 's');
\else
select skip('pg_net is installed here: its absence is played on the local test cluster', 1);
\endif
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') -> 'alerts'
            @> '[{"severity": "critical", "code": "dispatch_not_configured"}]'
          = not exists (select from vault.decrypted_secrets where name = 'webhook_dispatch_secret'),
          'the dispatcher''s Vault secrets decide whether dispatch is configured');

-- One invocation that succeeded 30 minutes ago and one a minute ago with the given outcome, as pg_net's
-- worker writes them (src/core.c insert_response: a response has a status, content and headers and
-- timed_out false; a failed transfer has no status, timed_out true for a timeout, and curl's message).
-- Ids far above any real request's, so real rows on a hosted project are not confused with them.
delete from private.webhook_dispatch_requests;
create function pg_temp.outcome(status integer, content text, timed_out boolean, error text) returns jsonb
language plpgsql as $$
begin
  delete from net._http_response where id in (7000000000000001, 7000000000000002);
  delete from private.webhook_dispatch_requests where request_id in (7000000000000001, 7000000000000002);
  insert into private.webhook_dispatch_requests (request_id, invoked_at)
  values (7000000000000001, now() - interval '30 minutes'), (7000000000000002, now() - interval '1 minute');
  insert into net._http_response (id, status_code, content_type, headers, content, timed_out, error_msg, created)
  values (7000000000000001, 202, 'application/json', '{}', '{"accepted":true}', false, null, now() - interval '30 minutes'),
         (7000000000000002, status, case when status is not null then 'application/json' end,
          case when status is not null then '{}'::jsonb end, content, timed_out, error, now() - interval '1 minute');
  return public.webhook_operator_health(max_due_age => interval '1 hour');
end $$;

select ok(pg_temp.outcome(202, '{"accepted":true}', false, null) @> '{"dispatcher": {"failures_1h": 0, "last_failure": null}}'
          and pg_temp.outcome(202, '{"accepted":true}', false, null) #>> '{dispatcher,last_success_at}' is not null,
          'success: no failure, the last success');
select ok(pg_temp.outcome(401, '{"error":{"code":"unauthorized"}}', false, null)
            @> '{"dispatcher": {"failures_1h": 1, "last_failure": {"status_code": 401}}, "alerts": [{"code": "dispatcher_errors"}]}',
          'HTTP 401: a failure');
select ok(pg_temp.outcome(null, null, false, 'Couldn''t connect to server')
            @> '{"dispatcher": {"failures_1h": 1, "last_failure": {"status_code": null, "error": "Couldn''t connect to server"}}, "alerts": [{"code": "dispatcher_errors"}]}',
          'connection refused (no HTTP status): a failure');
select ok(pg_temp.outcome(null, null, false, 'Couldn''t resolve host name')
            @> '{"dispatcher": {"failures_1h": 1, "last_failure": {"error": "Couldn''t resolve host name"}}, "alerts": [{"code": "dispatcher_errors"}]}',
          'DNS failure: a failure');
select ok(pg_temp.outcome(null, null, false, 'SSL peer certificate or SSH remote key was not OK')
            @> '{"dispatcher": {"failures_1h": 1, "last_failure": {"error": "SSL peer certificate or SSH remote key was not OK"}}}',
          'TLS failure: a failure');
select ok(pg_temp.outcome(null, null, true, 'Timeout of 10000 ms reached. Total time: 10000.9 ms (DNS time: 0.1 ms, TCP/SSL handshake time: 10000.8 ms, HTTP Request/Response time: 0.0 ms)')
            @> '{"dispatcher": {"failures_1h": 1, "last_failure": {"timed_out": true}}}',
          'timeout: a failure');

-- Three refused connections since the last success: critical, with curl's reason in the message.
delete from net._http_response where id = 7000000000000002;
insert into private.webhook_dispatch_requests (request_id, invoked_at) values
  (7000000000000003, now() - interval '3 minutes'), (7000000000000004, now() - interval '2 minutes'),
  (7000000000000005, now() - interval '50 minutes');
insert into net._http_response (id, status_code, timed_out, error_msg, created)
select id, null, false, 'Couldn''t connect to server', now() - (n || ' minutes')::interval
from (values (7000000000000003, 3), (7000000000000004, 2), (7000000000000002, 1)) r (id, n)
union all select 7000000000099999, 500, false, 'not ours', now();
create temp table h2 as select public.webhook_operator_health(max_due_age => interval '1 hour') as v;
select is((select (v #>> '{dispatcher,failures_1h}')::int from h2), 3,
          'three failed invocations in the hour (not the foreign 500)');
select is((select (v #>> '{dispatcher,last_success_at}')::timestamptz from h2), now() - interval '30 minutes',
          'the last successful invocation');
select is((select (v #>> '{dispatcher,unanswered_1h}')::int from h2), 1, 'an invocation never answered is counted');
select ok((select v -> 'alerts' @> '[{"severity": "critical", "code": "dispatcher_failing"}]' from h2),
          'failing since the last success is critical');
select ok((select bool_or(a ->> 'message' like '%3 dispatcher invocations failed%Couldn''t connect to server%')
           from h2, jsonb_array_elements(v -> 'alerts') a),
          'and the alert gives the reason');

-- A cron job whose last run failed (e.g. the function raised) is a warning with pg_cron's message.
insert into cron.job_run_details (jobid, runid, database, username, command, status, return_message, start_time, end_time)
select jobid, -1, 'postgres', 'postgres', command, 'failed', 'ERROR:  could not obtain lock', now(), now()
from cron.job where jobname = 'log-retention';
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') -> 'alerts'
            @> '[{"code": "cron_job_failed", "message": "cron job log-retention: last run failed: ERROR:  could not obtain lock"}]',
          'a failed cron run is reported with its message');

-- Every job pg_cron runs here is watched, read from cron.job: those the migrations schedule, and one
-- scheduled now (as a later migration would), each made to fail as pg_cron records a failed run. Dated
-- an hour ahead: on a database whose pg_cron runs (the hosted-like lane) a real run may be recorded
-- while this transaction is open, and must not be the latest.
select cron.schedule('health-probe-job', '0 0 1 1 *', 'select 1');
select cron.schedule('mail-health-probe', '0 0 1 1 *', 'select 1');
insert into cron.job_run_details (jobid, runid, database, username, command, status, return_message, start_time, end_time)
select jobid, -1000 - jobid, current_database(), username, command, 'failed', 'ERROR:  probe ' || jobname,
       now() + interval '1 hour', now() + interval '1 hour'
from cron.job where database = current_database();
create temp table failed_jobs as
select (select array_agg(jobname::text order by jobname) from cron.job where database = current_database()) as jobs,
       public.webhook_operator_health(max_due_age => interval '1 hour') as webhook,
       public.mail_operator_health() as mail;
create function pg_temp.failed_names(health jsonb) returns text[] language sql as $$
  select coalesce(array_agg(substring(a ->> 'message' from '^cron job (\S+): last run failed: ERROR:  probe \1$')
                            order by a ->> 'message'), '{}')
  from jsonb_array_elements(health -> 'alerts') a where a ->> 'code' = 'cron_job_failed' $$;
select ok((select jobs @> '{webhook-dispatch,webhook-housekeeping,log-retention,mail-housekeeping,person-erasure,whatsapp-orphan-receipts,health-probe-job}'
           from failed_jobs), 'the migrations'' jobs and the new one are scheduled here');
select is((select pg_temp.failed_names(webhook) from failed_jobs), (select jobs from failed_jobs),
          'webhook_operator_health: a failed run of every job is a cron_job_failed alert naming it');
select is((select array(select jsonb_object_keys(webhook -> 'cron') order by 1) from failed_jobs),
          (select jobs from failed_jobs), 'and every job is listed under cron');
select is((select pg_temp.failed_names(mail) from failed_jobs), '{mail-health-probe,mail-housekeeping}',
          'mail_operator_health: the failed mail jobs, new ones included, and no other');
select is((select mail #>> '{cron,mail-housekeeping,last_status}' from failed_jobs), 'failed',
          'and it lists the mail jobs under cron');
select cron.alter_job((select jobid from cron.job where jobname = 'health-probe-job'), active := false);
delete from cron.job_run_details where runid < -1000;
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') -> 'alerts'
            @> '[{"code": "cron_job_failed", "message": "cron job health-probe-job is inactive (cron.job.active = false): it does not run"}]',
          'an inactive job is an alert too');

-- Operators only.
set local role authenticated;
select throws_ok($$select public.webhook_operator_health()$$, '42501', null, 'users cannot read it');
reset role;
set local role service_role;
select ok((select public.webhook_operator_health() ? 'queue'), 'the service role can (monitoring through PostgREST)');
reset role;

select * from finish();
rollback;
