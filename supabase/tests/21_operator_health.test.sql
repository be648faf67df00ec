-- public.webhook_operator_health(): the queue, the dispatcher's pg_net invocations and the cron jobs,
-- with alerts. pg_net is not installed in the test cluster: the first half checks the graceful answer
-- without it; the second stands in net._http_response with pg_net's own columns to check how the
-- dispatcher's invocations are read from it.
begin;
select plan(17);

-- Nothing else in the queue: other test files roll back, this one starts clean.
delete from public.webhook_deliveries;
-- Nor any cron history: in the throwaway test cluster pg_cron's own runs fail to connect (password
-- auth), and a run that happened to fall in this test run would add a cron_job_failed alert.
delete from cron.job_run_details;

select tests.create_organization('Health', 'f0000000-0000-4000-8000-000000000001');
insert into public.webhook_endpoints (id, organization_id, url, events)
values ('f1000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'https://h.example.org/',
        array['member.created']);
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
insert into private.webhook_leases (delivery_id, endpoint_id, token, leased_until)
select id, endpoint_id, gen_random_uuid(), now() + interval '30 seconds'
from public.webhook_deliveries where event_id = 'f2000000-0000-4000-8000-000000000003';

create temp table h as select public.webhook_operator_health() as v;
select is((select (v -> 'queue') - 'oldest_due_at' - 'oldest_due_age_seconds' from h),
          '{"open": 3, "due": 2, "in_flight": 1}'::jsonb, 'queue: open, due now and being sent');
select ok((select (v #>> '{queue,oldest_due_age_seconds}')::int between 600 and 660 from h),
          'queue: the oldest due delivery''s age');
select is((select v -> 'dispatcher' from h), '{"pg_net": false}'::jsonb, 'without pg_net: said so, nothing more');
select is((select v ->> 'status' from h), 'critical', 'a delivery due for 10 minutes is critical');
select is((select jsonb_path_query_array(v -> 'alerts', '$[*].code') from h), '["queue_behind"]'::jsonb,
          'and the alert says the queue is behind');
select is((select public.webhook_operator_health(max_due_age => interval '1 hour') ->> 'status'), 'ok',
          'with a 1-hour threshold the same queue is ok');
select ok((select v -> 'cron' ? 'webhook-dispatch' and v -> 'cron' ? 'log-retention' from h),
          'the cron jobs are listed');

-- pg_net's response table (columns as pg_net 0.20 defines them), and three dispatcher invocations:
-- one succeeded 20 minutes ago, then three 401s (a wrong Vault secret). Response 99 is someone else's.
create schema net;
create table net._http_response (
  id bigint, status_code integer, content_type text, headers jsonb, content text, timed_out boolean,
  error_msg text, created timestamptz not null default now()
);
insert into private.webhook_dispatch_requests (request_id, invoked_at) values
  (1, now() - interval '20 minutes'), (2, now() - interval '3 minutes'), (3, now() - interval '2 minutes'),
  (4, now() - interval '1 minute'), (5, now() - interval '30 minutes');
insert into net._http_response (id, status_code, content, timed_out, error_msg, created) values
  (1, 200, '{"claimed":10}', false, null, now() - interval '20 minutes'),
  (2, 401, '{"error":{"code":"unauthorized"}}', false, null, now() - interval '3 minutes'),
  (3, 401, '{"error":{"code":"unauthorized"}}', false, null, now() - interval '2 minutes'),
  (4, 401, '{"error":{"code":"unauthorized"}}', false, null, now() - interval '1 minute'),
  (99, 500, 'not ours', false, null, now());

create temp table h2 as select public.webhook_operator_health(max_due_age => interval '1 hour') as v;
select is((select (v #>> '{dispatcher,failures_1h}')::int from h2), 3, 'three failed invocations in the hour (not the foreign 500)');
select is((select (v #>> '{dispatcher,last_success_at}')::timestamptz from h2), now() - interval '20 minutes',
          'the last successful invocation');
select is((select (v #> '{dispatcher,last_failure}') - 'at' from h2),
          '{"status_code": 401, "timed_out": false, "error": null, "body": "{\"error\":{\"code\":\"unauthorized\"}}"}'::jsonb,
          'the last failure: status and body');
select is((select (v #>> '{dispatcher,unanswered_1h}')::int from h2), 1, 'an invocation never answered is counted');
select is((select v ->> 'status' from h2), 'critical', 'failing since the last success is critical');
select ok((select v -> 'alerts' @> '[{"code": "dispatcher_failing"}]' from h2)
          and (select v #>> '{alerts,0,message}' like '%HTTP 401%unauthorized%' from h2),
          'and the alert gives the reason');

-- One failure after a success: a warning only.
delete from net._http_response where id in (2, 3);
insert into net._http_response (id, status_code, content, timed_out, error_msg, created)
values (3, null, null, true, 'Timeout of 120000 ms reached', now() - interval '2 minutes');
update net._http_response set id = 6, created = now() where id = 1;
insert into private.webhook_dispatch_requests (request_id) values (6);
select is((select public.webhook_operator_health(max_due_age => interval '1 hour') ->> 'status'), 'warning',
          'failures followed by a success are a warning');

-- A cron job whose last run failed (e.g. the function raised) is a warning with pg_cron's message.
insert into cron.job_run_details (jobid, runid, database, username, command, status, return_message, start_time, end_time)
select jobid, -1, 'postgres', 'postgres', command, 'failed', 'ERROR:  could not obtain lock', now(), now()
from cron.job where jobname = 'log-retention';
select ok(public.webhook_operator_health(max_due_age => interval '1 hour') -> 'alerts'
            @> '[{"code": "cron_job_failed", "message": "cron job log-retention: last run failed: ERROR:  could not obtain lock"}]',
          'a failed cron run is reported with its message');

-- Operators only.
set local role authenticated;
select throws_ok($$select public.webhook_operator_health()$$, '42501', null, 'users cannot read it');
reset role;
set local role service_role;
select ok((select public.webhook_operator_health() ? 'queue'), 'the service role can (monitoring through PostgREST)');
reset role;

select * from finish();
rollback;
