-- What starts the dispatcher on a hosted project (20261122130400_outbound_webhook_schedule.sql): the
-- cron job, the debounced wake-up on new deliveries, and the continuation after a capped run. pg_net is
-- not installed here: first what happens without it (nothing is posted, inserts work), then with a
-- stand-in that has pg_net's net.http_post signature, recording what would be sent, and the Vault
-- secrets (Vault's own where it is installed, else a stand-in of its view).
begin;
select plan(28);

select tests.create_endpoint(tests.create_organization('Wake Church', 'd0000000-0000-4000-8000-0000000000aa'),
                             'd0000000-0000-4000-8000-0000000000e1');
-- Whatever other tests left open is not due in this transaction.
update public.webhook_deliveries set next_attempt_at = now() + interval '1 hour'
where status = any (private.webhook_open_states());

select has_trigger('public', 'webhook_deliveries', 'webhook_deliveries_wake_dispatcher',
  'new deliveries wake the dispatcher');
-- Where pg_net is installed (a hosted project) the stand-in cannot take its place; the real one is
-- exercised by tests/hosted_dispatch_pgnet_test.ts. Where Vault is (the hosted-like lane), it is used.
select to_regnamespace('net') is null as stand_ins \gset
\if :stand_ins
select is(private.webhook_wake_dispatcher(), null, 'without pg_net the wake-up posts nothing');
select is(private.webhook_dispatch_continue(), null, 'without pg_net the continuation posts nothing');
select is(private.webhook_invoke_dispatcher(), null, 'without pg_net the cron job posts nothing');
insert into public.members (organization_id, first_name) values ('d0000000-0000-4000-8000-0000000000aa', 'Local');
select is((select count(*)::int from public.webhook_deliveries
           where endpoint_id = 'd0000000-0000-4000-8000-0000000000e1'), 1,
  'without pg_net a delivery is still made (the dev server sends it on NOTIFY)');

select tests.stand_in_pg_net();
select tests.stand_in_vault(with_secrets => false);

update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher';
select is(private.webhook_wake_dispatcher(), false, 'without the Vault secrets nothing is posted');
select is((select count(*)::int from net.posted), 0, '(nothing posted)');

select tests.stand_in_vault();
update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher';

-- The debounce ------------------------------------------------------------------------------------
select is(private.webhook_wake_dispatcher(), true, 'a wake-up posts');
select is((select jsonb_build_object('url', url, 'auth', headers ->> 'Authorization', 'body', body,
                                     'timeout', timeout_ms) from net.posted),
  jsonb_build_object('url', 'https://ref.supabase.example/functions/v1/webhook-dispatcher',
                     'auth', 'Bearer dispatch-secret',
                     'body', '{"stop_when_idle": true, "idle_grace_ms": 3000}'::jsonb,
                     'timeout', 10000),
  'to the dispatcher, with the secret, for a run that drains and stays 3 s once idle (past the debounce)');
select ok(exists (select 1 from private.webhook_dispatch_requests
                  where request_id = (select max(id) from net.posted)),
  'its request id is kept for the health check');
select is(private.webhook_wake_dispatcher(), false, 'a second wake-up within 2 s is debounced');
select is((select count(*)::int from net.posted), 1, '(still one post)');
update private.function_wakes set woken_at = clock_timestamp() - interval '2.5 seconds' where function_name = 'webhook-dispatcher';
select is(private.webhook_wake_dispatcher(), true, 'after 2 s the next wake-up posts');
select is(private.webhook_wake_dispatcher(interval '0 seconds'), true, 'the interval is a parameter');

-- The trigger: once per statement, debounced -----------------------------------------------------------
truncate net.posted;
update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher';
insert into public.members (organization_id, first_name)
select 'd0000000-0000-4000-8000-0000000000aa', 'M' || g from generate_series(1, 50) g;
select is((select count(*)::int from public.webhook_deliveries
           where endpoint_id = 'd0000000-0000-4000-8000-0000000000e1'), 51, 'fifty new deliveries');
select is((select count(*)::int from net.posted), 1, 'one statement with fifty deliveries: one wake-up');
insert into public.members (organization_id, first_name) values ('d0000000-0000-4000-8000-0000000000aa', 'Soon');
select is((select count(*)::int from net.posted), 1, 'the next statement within 2 s: none');

-- A wake-up that fails never fails the insert (the stand-in's post raises while net.posted refuses rows).
alter table net.posted add constraint pg_net_is_broken check (false) not valid;
update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher';
select lives_ok($$insert into public.members (organization_id, first_name)
                  values ('d0000000-0000-4000-8000-0000000000aa', 'Still')$$,
  'an insert succeeds when the wake-up fails');
alter table net.posted drop constraint pg_net_is_broken;

-- The continuation after a capped run, and the cron job ---------------------------------------------------
truncate net.posted;
select is(private.webhook_dispatch_continue(), true, 'deliveries are due: the next run is requested at once');
update public.webhook_deliveries set next_attempt_at = now() + interval '1 hour'
where status = any (private.webhook_open_states());
select is(private.webhook_dispatch_continue(), false, 'nothing due: no next run');
select is(private.webhook_invoke_dispatcher(), 1, 'the cron job posts one run');
select is((select body from net.posted order by id desc limit 1), '{}'::jsonb,
  'a run that keeps polling for its budget, with no row cap (its CPU and wall budgets end it)');

-- Pick-up after an outage: the recovery job posts a run only while the latest invocation failed -------
create table net._http_response (id bigint, status_code integer, timed_out boolean, error_msg text,
                                 created timestamptz not null default now());
truncate net.posted;
delete from private.webhook_dispatch_requests;
update public.webhook_deliveries set next_attempt_at = now() - interval '1 minute'
where endpoint_id = 'd0000000-0000-4000-8000-0000000000e1' and status = any (private.webhook_open_states());
insert into private.webhook_dispatch_requests (request_id, invoked_at) values (900, now() - interval '10 seconds');
insert into net._http_response (id, status_code, timed_out, error_msg) values (900, 202, false, null);
select is(private.webhook_dispatch_recover(), false, 'the latest invocation succeeded: nothing to recover');
insert into private.webhook_dispatch_requests (request_id, invoked_at) values (901, now() - interval '5 seconds');
select is(private.webhook_dispatch_recover(), false, 'the latest invocation not answered yet: left alone');
insert into net._http_response (id, status_code, timed_out, error_msg) values (901, null, false, 'Couldn''t connect to server');
select is(private.webhook_dispatch_recover(), true, 'the latest invocation failed and deliveries are due: a run at once');
select is((select body from net.posted order by id desc limit 1),
          '{"stop_when_idle": true, "idle_grace_ms": 10000}'::jsonb,
          'one that drains what is due and stops (after 10 s idle), with no row cap');
update public.webhook_deliveries set next_attempt_at = now() + interval '1 hour'
where status = any (private.webhook_open_states());
insert into private.webhook_dispatch_requests (request_id, invoked_at) values (902, now());
insert into net._http_response (id, status_code, timed_out, error_msg) values (902, 503, false, null);
select is(private.webhook_dispatch_recover(), false, 'failed, but nothing due: no run');
select is(exists (select from cron.job where jobname = 'webhook-dispatch-recover'),
          (select (regexp_match(extversion, '^(\d+)\.(\d+)'))::int[] >= '{1,5}' from pg_extension where extname = 'pg_cron'),
          'scheduled every 5 s exactly where pg_cron schedules in seconds (1.5+)');
\else
select skip('pg_net is installed here; the stand-in needs a database without it', 27);
\endif

select * from finish();
rollback;
