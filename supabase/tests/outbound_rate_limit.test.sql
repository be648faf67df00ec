-- An endpoint's rate limit (deliveries a second) is kept by the claim across dispatchers: each claim
-- gives a paced endpoint only the sends that start within the next second, one gap apart, and moves
-- the endpoint's pace on; and a receiver's 429 with Retry-After pauses its whole endpoint.
begin;
select plan(23);

select tests.create_organization('Paced', 'c4000000-0000-4000-8000-0000000000aa');
insert into public.webhook_endpoints (id, organization_id, url, events, rate_limit_per_second) values
  ('c4000000-0000-4000-8000-0000000000e1', 'c4000000-0000-4000-8000-0000000000aa', 'https://slow.example.org/',
   array['member.created'], 5),
  ('c4000000-0000-4000-8000-0000000000e2', 'c4000000-0000-4000-8000-0000000000aa', 'https://fast.example.org/',
   array['member.created'], null);
select tests.create_members('c4000000-0000-4000-8000-0000000000aa', 20);

-- How many of an endpoint's deliveries the next claim (by any dispatcher) takes.
create function pg_temp.claimed(endpoint uuid) returns integer language sql as $$
  select count(*)::int from private.webhook_claim(100, 1048576, 16, 64, 40) where endpoint_id = endpoint
$$;

select is(private.webhook_send_gap(5), interval '0.22 seconds', 'at 5 a second, sends 220 ms apart (a 10% margin)');

create temp table first_claim as select * from private.webhook_claim(100, 1048576, 16, 64, 40);
select is((select count(*)::int from first_claim where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1'), 5,
          'a paced endpoint gets the sends that start within the next second: 5 at 5 a second');
select is((select count(*)::int from first_claim where endpoint_id = 'c4000000-0000-4000-8000-0000000000e2'), 16,
          'an endpoint without a limit gets its cap, as before');
select ok((select bool_and(send_at is null) from first_claim
            where endpoint_id = 'c4000000-0000-4000-8000-0000000000e2'), 'and is sent at once');
-- The starts, in order: the claim's time, then 220, 440, 660, 880 ms after.
select is((select array_agg(gap order by gap) from (
             select send_at - lag(send_at) over (order by send_at) as gap
             from first_claim where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1') g
           where gap is not null), array_fill(interval '0.22 seconds', array[4]), 'its sends start 220 ms apart');
select ok((select min(send_at) between now() and clock_timestamp() and max(send_at) < clock_timestamp() + interval '1 second'
             from first_claim where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1'),
          'from the claim on, within the second');
select ok((select bool_and(endpoint_full) from first_claim
            where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1'), 'the claim says the pace filled it');
select ok((select next_send_at between now() + interval '1.1 seconds' and clock_timestamp() + interval '1.1 seconds'
             from private.webhook_endpoint_pace
            where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1'), 'its pace moved on past them');
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e1'), 0,
          'another claim (another dispatcher) now gets nothing for it: its next send is more than a second away');
-- A second later (the pace as it would stand then), while the block's sends are still in flight: no
-- other claim sends beside them, however late they started.
update private.webhook_endpoint_pace set next_send_at = clock_timestamp()
 where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1';
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e1'), 0,
          'no new block while the last one is still going out');
-- The block's results come back; the last one started late (a busy dispatcher): 2 seconds from now.
select private.webhook_record_results(jsonb_agg(tests.result(c.delivery_id, c.endpoint_id, c.lease_token, 200,
  case when c.send_at = (select max(send_at) from first_claim f where f.endpoint_id = c.endpoint_id)
       then clock_timestamp() + interval '2 seconds' else c.send_at end)))
from first_claim c where c.endpoint_id = 'c4000000-0000-4000-8000-0000000000e1';
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e1'), 0,
          'nor one closer than a gap to the send that actually started last');
update public.webhook_endpoint_health set last_attempt_at = clock_timestamp() - interval '1 second'
 where endpoint_id = 'c4000000-0000-4000-8000-0000000000e1';
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e1'), 5, 'then the next five');

-- 429 Too Many Requests with Retry-After pauses the endpoint ------------------------------------------------
create temp table updated_before as
  select updated_at from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e2';
select private.webhook_record_results(jsonb_agg(tests.result(c.delivery_id, c.endpoint_id, c.lease_token, 429,
  retry_after_seconds => case when c.delivery_id = (select min(delivery_id::text)::uuid from first_claim
                                                    where endpoint_id = 'c4000000-0000-4000-8000-0000000000e2')
                              then 30 else 5 end)))
from first_claim c where c.endpoint_id = 'c4000000-0000-4000-8000-0000000000e2';
select is((select paused_until from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e2'),
          now() + interval '30 seconds', 'a 429 with Retry-After pauses the endpoint until then (the longest one)');
select is((select updated_at from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e2'),
          (select updated_at from updated_before), 'a pause is not a change of its settings (updated_at)');
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'c4000000-0000-4000-8000-0000000000e2' and status = 'pending'
              and next_attempt_at <= now()), 4, 'it still has deliveries due');
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e2'), 0, 'but the claim passes the paused endpoint by');
update public.webhook_endpoints set paused_until = now() - interval '1 second'
 where id = 'c4000000-0000-4000-8000-0000000000e2';
select is(pg_temp.claimed('c4000000-0000-4000-8000-0000000000e2'), 4, 'once the pause is over, they go');

-- The pause is capped like every Retry-After; a 429 without one, or another status with one, pauses nothing.
create function pg_temp.result(http_status integer, retry_after integer) returns void language sql as $$
  select private.webhook_record_results(jsonb_build_array(
    tests.result(d.id, d.endpoint_id, gen_random_uuid(), http_status, retry_after_seconds => retry_after)))
  from public.webhook_deliveries d where d.endpoint_id = 'c4000000-0000-4000-8000-0000000000e1' limit 1
$$;
select pg_temp.result(503, 600);
select pg_temp.result(429, null);
select is((select paused_until from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e1'),
          null, 'a 503 with Retry-After, or a 429 without it, pauses no endpoint');
select pg_temp.result(429, 7200);
select is((select paused_until from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e1'),
          now() + interval '1 hour', 'Retry-After: 7200 pauses it for the cap, 1 hour');
select pg_temp.result(429, 10);
select is((select paused_until from public.webhook_endpoints where id = 'c4000000-0000-4000-8000-0000000000e1'),
          now() + interval '1 hour', 'a shorter Retry-After later does not shorten it');

-- Who may set what ---------------------------------------------------------------------------------------------
select tests.add_member(tests.create_user('admin@paced.example.org', 'c4000000-0000-4000-8000-0000000000d1'),
                        'c4000000-0000-4000-8000-0000000000aa', 'admin');
select tests.act_as_config_api('c4000000-0000-4000-8000-0000000000d1', 'c4000000-0000-4000-8000-0000000000aa');
select lives_ok($$update public.webhook_endpoints set rate_limit_per_second = 20
                  where id = 'c4000000-0000-4000-8000-0000000000e2'$$, 'an admin sets a rate limit');
select throws_ok($$update public.webhook_endpoints set rate_limit_per_second = 0
                   where id = 'c4000000-0000-4000-8000-0000000000e2'$$, '23514', null, 'at least 1 a second');
select throws_ok($$update public.webhook_endpoints set paused_until = null
                   where id = 'c4000000-0000-4000-8000-0000000000e1'$$, '42501', null,
                 'only the server pauses an endpoint');
select tests.clear_act_as();

select * from finish();
rollback;
