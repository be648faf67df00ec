-- Endpoint health over time: failing_since and the 24-hour response-time sums kept by the attempts
-- trigger, and housekeeping disabling an endpoint that has failed every attempt for 5 days, with the
-- reason kept and a webhook.endpoint.disabled event for the organization's other subscribed endpoints.
-- Time travel: attempts are written with old attempted_at, endpoints with an old updated_at.
begin;
select plan(22);

select tests.create_organization('Church A', 'd0000000-0000-4000-8000-0000000000aa');
select tests.create_organization('Church B', 'd0000000-0000-4000-8000-0000000000bb');
-- A: f1 fails for 6 days, f2 failed 6 days ago but succeeded since, f3 fails for 4 days only;
-- w1 listens for webhook.endpoint.disabled, w2 listens but is disabled, m1 listens for members only.
-- B: fb fails for 6 days too; its organization has a listener, wb.
insert into public.webhook_endpoints (id, organization_id, url, events, description, secret) values
  ('d0000000-0000-4000-8000-0000000000f1', 'd0000000-0000-4000-8000-0000000000aa', 'https://f1.example.org/h',
   array['member.created'], 'CRM sync', 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0'),
  ('d0000000-0000-4000-8000-0000000000f2', 'd0000000-0000-4000-8000-0000000000aa', 'https://f2.example.org/h',
   array['member.created'], null, default),
  ('d0000000-0000-4000-8000-0000000000f3', 'd0000000-0000-4000-8000-0000000000aa', 'https://f3.example.org/h',
   array['member.created'], null, default),
  ('d0000000-0000-4000-8000-0000000000a1', 'd0000000-0000-4000-8000-0000000000aa', 'https://w1.example.org/h',
   array['webhook.endpoint.disabled'], null, default),
  ('d0000000-0000-4000-8000-0000000000a2', 'd0000000-0000-4000-8000-0000000000aa', 'https://w2.example.org/h',
   array['webhook.endpoint.disabled'], null, default),
  ('d0000000-0000-4000-8000-0000000000a3', 'd0000000-0000-4000-8000-0000000000aa', 'https://m1.example.org/h',
   array['member.created'], null, default),
  ('d0000000-0000-4000-8000-0000000000fb', 'd0000000-0000-4000-8000-0000000000bb', 'https://fb.example.org/h',
   array['member.created'], null, default),
  ('d0000000-0000-4000-8000-0000000000b1', 'd0000000-0000-4000-8000-0000000000bb', 'https://wb.example.org/h',
   array['webhook.endpoint.disabled'], null, default);
update public.webhook_endpoints set enabled = false where id = 'd0000000-0000-4000-8000-0000000000a2';
-- Created a week ago (after the disable above, which sets updated_at itself).
alter table public.webhook_endpoints disable trigger webhook_endpoints_before_write;
update public.webhook_endpoints set updated_at = now() - interval '7 days', created_at = now() - interval '7 days';
alter table public.webhook_endpoints enable trigger webhook_endpoints_before_write;

-- One event and one delivery per endpoint, then attempts `ago` in the past, one statement each (as the
-- dispatcher writes them), `ok` deciding the status.
create function pg_temp.delivery(ep text) returns uuid language plpgsql as $$
declare
  ev uuid := gen_random_uuid();
  dl uuid := gen_random_uuid();
  org uuid := (select organization_id from public.webhook_endpoints where id = ep::uuid);
begin
  insert into public.webhook_events (id, organization_id, type, payload) values (ev, org, 'member.created', '{}');
  insert into public.webhook_deliveries (id, organization_id, event_id, endpoint_id, event_type, status,
                                         next_attempt_at)
  values (dl, org, ev, ep::uuid, 'member.created', 'retrying', now() + interval '1 hour');
  return dl;
end $$;
create function pg_temp.attempts(ep text, agos interval[], oks boolean[], durations int[]) returns void
language sql as $$
  insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
                                                duration_ms, response_status, error)
  select d.organization_id, d.id, d.attempt_count + i, now() - agos[i], durations[i],
         case when oks[i] then 200 else 500 end, case when oks[i] then null else 'HTTP 500' end
  from public.webhook_deliveries d, generate_subscripts(agos, 1) i
  where d.endpoint_id = ep::uuid;
  update public.webhook_deliveries set attempt_count = attempt_count + cardinality(agos) where endpoint_id = ep::uuid;
$$;
select pg_temp.delivery(e) from unnest(array['d0000000-0000-4000-8000-0000000000f1',
  'd0000000-0000-4000-8000-0000000000f2', 'd0000000-0000-4000-8000-0000000000f3',
  'd0000000-0000-4000-8000-0000000000fb']) e;

-- f1: fails 6 days ago, then in two later batches, one of them out of order (older than the newest).
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f1', array[interval '6 days', '2 days'],
                        array[false, false], array[30, 40]);
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f1', array[interval '10 minutes'], array[false], array[100]);
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f1', array[interval '20 minutes', '1 hour'],
                        array[false, false], array[200, null]);
select is((select failing_since from public.webhook_endpoint_health
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f1'),
          (select min(attempted_at) from public.webhook_delivery_attempts a join public.webhook_deliveries d
              on d.id = a.delivery_id where d.endpoint_id = 'd0000000-0000-4000-8000-0000000000f1'),
          'failing_since is the first failure of the run, whatever order the batches came in');
select is((select consecutive_failures from public.webhook_endpoint_health
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f1'), 5, 'five failures in a row');
select is((select (sum(duration_ms_sum), sum(timed), sum(attempts))::text from public.webhook_endpoint_health_buckets
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f1' and bucket_start > now() - interval '24 hours'),
          '(300,2,3)', 'the last 24 hours: 3 attempts, 2 timed, 300 ms in all (an untimed attempt is not counted)');

-- f2: failed 6 days ago, succeeded yesterday, failed an hour ago: its run began an hour ago.
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f2', array[interval '6 days', '1 day', '1 hour'],
                        array[false, true, false], array[10, 10, 10]);
select is((select failing_since > now() - interval '2 hours' from public.webhook_endpoint_health
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f2'), true, 'a success restarts the run');
-- f3: failing for 4 days only.
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f3', array[interval '4 days', '1 hour'],
                        array[false, false], array[10, 10]);
-- fb: B's endpoint, failing for 6 days.
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000fb', array[interval '6 days', '1 hour'],
                        array[false, false], array[10, 10]);

-- Housekeeping ----------------------------------------------------------------------------------------
select is((private.webhook_housekeeping() ->> 'disabled_endpoints')::int, 2,
  'housekeeping disables the two endpoints that failed every attempt for 5 days');
select is((select array_agg(id::text order by id) from public.webhook_endpoints where not enabled),
  array['d0000000-0000-4000-8000-0000000000a2', 'd0000000-0000-4000-8000-0000000000f1',
        'd0000000-0000-4000-8000-0000000000fb'],
  'f1 and fb are disabled; f2 (succeeded since) and f3 (4 days) are not');
select matches((select disabled_reason from public.webhook_endpoints where id = 'd0000000-0000-4000-8000-0000000000f1'),
  '^every attempt failed for 5 days: 5 failed attempts in a row since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$',
  'the reason is kept');
select is((select status || ': ' || last_error from public.webhook_deliveries
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f1'),
  'permanently_failed: endpoint disabled: ' ||
    (select disabled_reason from public.webhook_endpoints where id = 'd0000000-0000-4000-8000-0000000000f1'),
  'its open delivery ends, saying why');

select is((select count(*)::int from public.webhook_events where type = 'webhook.endpoint.disabled'), 2,
  'one webhook.endpoint.disabled event per disabled endpoint');
select is((select array_agg(d.endpoint_id::text order by d.endpoint_id) from public.webhook_deliveries d
            where d.event_type = 'webhook.endpoint.disabled'),
  array['d0000000-0000-4000-8000-0000000000a1', 'd0000000-0000-4000-8000-0000000000b1'],
  'delivered only to each organization''s other enabled endpoints that subscribed to it');
create temp table ev as
  select payload from public.webhook_events
   where type = 'webhook.endpoint.disabled' and organization_id = 'd0000000-0000-4000-8000-0000000000aa';
select is((select array_agg(k order by k) from ev, jsonb_object_keys(payload) k),
  array['created_at', 'data', 'id', 'organization_id', 'type'], 'the envelope of every event');
select is((select payload -> 'data' -> 'row' ->> 'id' from ev), 'd0000000-0000-4000-8000-0000000000f1', 'row: id');
select is((select payload -> 'data' -> 'row' ->> 'url' from ev), 'https://f1.example.org/h', 'row: url');
select is((select payload -> 'data' -> 'row' ->> 'description' from ev), 'CRM sync', 'row: description');
select is((select payload -> 'data' -> 'row' ->> 'disabled_reason' from ev),
  (select disabled_reason from public.webhook_endpoints where id = 'd0000000-0000-4000-8000-0000000000f1'),
  'row: the reason');
select is((select payload -> 'data' -> 'delta' ->> 'enabled' from ev), 'false', 'delta: enabled false');
select ok((select payload::text not like '%whsec_%' and not (payload -> 'data' -> 'row' ? 'secret') from ev),
  'never the secret');

select is((private.webhook_housekeeping() ->> 'disabled_endpoints')::int, 0, 'the next run finds nothing more');

-- Re-enabled by an administrator: 5 more days, not an immediate second disable, and no new event.
update public.webhook_endpoints set enabled = true where id = 'd0000000-0000-4000-8000-0000000000f1';
select is((private.webhook_housekeeping() ->> 'disabled_endpoints')::int, 0,
  'a re-enabled endpoint is not disabled again at once');
select is((select disabled_reason from public.webhook_endpoints where id = 'd0000000-0000-4000-8000-0000000000f1'),
  null, 're-enabling clears the reason');
-- ...but once 5 days have passed since, with no success, it is.
alter table public.webhook_endpoints disable trigger webhook_endpoints_before_write;
update public.webhook_endpoints set updated_at = now() - interval '5 days 1 minute'
 where id = 'd0000000-0000-4000-8000-0000000000f1';
alter table public.webhook_endpoints enable trigger webhook_endpoints_before_write;
select is((private.webhook_housekeeping() ->> 'disabled_endpoints')::int, 1, '5 days after re-enabling, again');

-- A success clears the run.
select pg_temp.attempts('d0000000-0000-4000-8000-0000000000f3', array[interval '1 minute'], array[true], array[5]);
select is((select (failing_since, consecutive_failures)::text from public.webhook_endpoint_health
            where endpoint_id = 'd0000000-0000-4000-8000-0000000000f3'), '(,0)', 'a success clears failing_since');

select * from finish();
rollback;
