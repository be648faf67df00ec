-- Bulk retry (20261207170200_webhook_bulk_retry.sql): who may call what, and one job's batches in SQL:
-- retrying deliveries moved to now without an attempt counted, failed ones queued again, delivered and
-- in-flight ones left alone, another organization's never reached.
begin;
select plan(25);

select tests.create_tenants('e8000000-0000-4000-8000-0000000000aa', 'e8000000-0000-4000-8000-0000000000bb',
                            'e8000000-0000-4000-8000-0000000000a1', 'e8000000-0000-4000-8000-0000000000a2',
                            'e8000000-0000-4000-8000-0000000000b1');
select tests.create_endpoint('e8000000-0000-4000-8000-0000000000aa', 'e8000000-0000-4000-8000-0000000000e1');
select tests.create_endpoint('e8000000-0000-4000-8000-0000000000bb', 'e8000000-0000-4000-8000-0000000000e2');
select tests.create_due_deliveries('e8000000-0000-4000-8000-0000000000aa', 'e8000000-0000-4000-8000-0000000000e1', 5);
select tests.create_due_deliveries('e8000000-0000-4000-8000-0000000000bb', 'e8000000-0000-4000-8000-0000000000e2', 2);
-- A's five, oldest first: retrying (3 attempts, due in an hour), retrying and in flight, permanently
-- failed, delivered, permanently failed with a 503. B's two: retrying.
with numbered as (
  select d.id, row_number() over (order by d.id) as n from public.webhook_deliveries d
   where d.endpoint_id = 'e8000000-0000-4000-8000-0000000000e1'
)
update public.webhook_deliveries d
   set created_at = now() - make_interval(mins => 10 - n.n::int),
       status = (array['retrying', 'retrying', 'permanently_failed', 'delivered', 'permanently_failed'])[n.n],
       next_attempt_at = case when n.n <= 2 then now() + interval '1 hour' end,
       attempt_count = 3, first_attempt_at = now() - interval '2 hours',
       last_response_status = case when n.n = 5 then 503 else 500 end,
       delivered_at = case when n.n = 4 then now() end
  from numbered n where n.id = d.id;
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select d.id, d.endpoint_id, d.organization_id, gen_random_uuid(), now() + interval '1 minute'
  from public.webhook_deliveries d where d.endpoint_id = 'e8000000-0000-4000-8000-0000000000e1'
 order by d.created_at offset 1 limit 1;
update public.webhook_deliveries set status = 'retrying', next_attempt_at = now() + interval '1 hour', attempt_count = 2
 where endpoint_id = 'e8000000-0000-4000-8000-0000000000e2';

-- Grants ---------------------------------------------------------------------------------------------
select ok(not has_function_privilege(r, 'public.webhook_bulk_retry(jsonb, text)', 'execute')
          and not has_function_privilege(r, 'public.webhook_bulk_retry_preview(jsonb, integer)', 'execute')
          and not has_function_privilege(r, 'public.webhook_bulk_retry_cancel(uuid)', 'execute'),
          r || ' cannot call the bulk retry operations (the Data API has no way to them)')
  from unnest(array['anon', 'authenticated']) r;
select ok(has_function_privilege('config_api', 'public.webhook_bulk_retry(jsonb, text)', 'execute'),
          'the configuration API can');
select ok(not has_function_privilege(r, 'private.webhook_bulk_retry_step(uuid, integer)', 'execute')
          and not has_function_privilege(r, 'private.webhook_bulk_retry_matches(uuid, jsonb, timestamptz, timestamptz, uuid, integer)', 'execute'),
          r || ' cannot run a batch or read the matching set')
  from unnest(array['anon', 'authenticated', 'config_api']) r;
select ok(not has_table_privilege(r, 'public.webhook_bulk_retries', 'select'), r || ' reads no job row')
  from unnest(array['anon', 'authenticated']) r;
select ok(not has_table_privilege('config_api', 'public.webhook_bulk_retries', 'insert')
          and not has_table_privilege('config_api', 'public.webhook_bulk_retries', 'update'),
          'jobs are written by the functions only');

-- Who may ---------------------------------------------------------------------------------------------
select tests.act_as_config_api('e8000000-0000-4000-8000-0000000000a2', 'e8000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select public.webhook_bulk_retry('{}'::jsonb) $$, '42501', null, 'staff may not');
select tests.act_as_config_api('e8000000-0000-4000-8000-0000000000a1', 'e8000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select public.webhook_bulk_retry('{"endpoint_id": "e8000000-0000-4000-8000-0000000000e2"}'::jsonb) $$,
                 '42501', 'no such endpoint in your organization, or not an admin of it',
                 'another organization''s endpoint in the filter: as if it did not exist');

-- Preview and the job ----------------------------------------------------------------------------------
select is(public.webhook_bulk_retry_preview('{}'::jsonb), 4, 'preview: the failing ones, not the delivered one');
select is(public.webhook_bulk_retry_preview('{"status_class": "5xx", "status": "permanently_failed"}'::jsonb), 2,
          'preview: state and status class');
select is(public.webhook_bulk_retry_preview('{"status_class": "4xx"}'::jsonb), 0, 'preview: no 4xx');
create temp table job as select public.webhook_bulk_retry('{}'::jsonb, 'key-1') as id;
select is(public.webhook_bulk_retry('{}'::jsonb, 'key-1'), (select id from job), 'the same key: the same job');
select throws_ok($$ select public.webhook_bulk_retry('{"status": "retrying"}'::jsonb, 'key-1') $$, '22023',
                 'this Idempotency-Key was used for another filter', 'the same key, another filter: refused');
select tests.clear_act_as();

select is((select total from public.webhook_bulk_retries where id = (select id from job)), 4, 'its total');
select is(private.webhook_bulk_retry_step((select id from job), 2) ->> 'processed', '2', 'a batch of two');
select is(private.webhook_bulk_retry_step((select id from job), 2) ->> 'processed', '4', 'then the other two');
select is(private.webhook_bulk_retry_step((select id from job), 2) ->> 'status', 'done', 'nothing after them: done');
select is((select retried from public.webhook_bulk_retries where id = (select id from job)), 3, 'three retried');
select is((select skipped from public.webhook_bulk_retries where id = (select id from job)), '{"in_flight": 1}'::jsonb,
          'the one in flight skipped');
select is((select array_agg(format('%s:%s:%s:%s:%s', status, attempt_count, first_attempt_at is null,
                                   next_attempt_at <= now(), recovery_id is not null) order by created_at)
             from public.webhook_deliveries where endpoint_id = 'e8000000-0000-4000-8000-0000000000e1'),
          array['retrying:3:f:t:t', 'retrying:3:f:f:f', 'pending:3:t:t:t', 'delivered:3:f::f', 'pending:3:t:t:t'],
          'retrying: due now, same count and window; failed: queued again; in flight and delivered untouched');
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'e8000000-0000-4000-8000-0000000000e2' and next_attempt_at <= now()), 0,
          'B''s deliveries never reached');
select ok(private.webhook_bulk_retry_step((select id from job), 2) ->> 'status' = 'done'
          and (select steps from public.webhook_bulk_retries where id = (select id from job)) = 3,
          'a finished job does nothing more');

select * from finish();
rollback;
