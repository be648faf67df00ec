-- Every delivery ends. A dispatcher that dies during an attempt records nothing: the delivery stays
-- open with no attempt, and its window (which ran from the first recorded attempt) never started, so it
-- stayed pending forever; and being the oldest, it was claimed first again by every dispatcher, which it
-- could kill too. Now the window also runs for deliveries never attempted (from when they became due),
-- and a delivery claimed private.webhook_max_unrecorded_claims() times without a result is claimed no
-- more and set aside by housekeeping, with the reason in last_error (Webhook Logs).
begin;
select plan(16);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

select tests.create_endpoint(tests.create_organization('Ends', 'c3000000-0000-4000-8000-0000000000aa'),
                             'c3000000-0000-4000-8000-0000000000e1');
create function pg_temp.delivery(n integer, due_since interval) returns uuid language sql as $$
  with e as (
    insert into public.webhook_events (id, organization_id, type, payload)
    values (('c3000000-0000-4000-8000-00000000010' || n)::uuid, 'c3000000-0000-4000-8000-0000000000aa',
            'member.created', jsonb_build_object('n', n))
    returning id
  )
  insert into public.webhook_deliveries (id, organization_id, event_id, endpoint_id, next_attempt_at, created_at)
  select ('c3000000-0000-4000-8000-00000000020' || n)::uuid, 'c3000000-0000-4000-8000-0000000000aa', e.id,
         'c3000000-0000-4000-8000-0000000000e1', now() - due_since, now() - due_since
  from e
  returning id
$$;
-- The lease of every delivery in flight runs out (its dispatcher died, and the clock moved on).
create function pg_temp.dispatchers_died() returns void language sql as $$
  update private.webhook_leases set leased_until = now() - interval '1 second'
$$;
create function pg_temp.claimed() returns setof uuid language sql as $$
  select delivery_id from private.webhook_claim(10, 1048576, 16, 64, 40)
$$;

-- The 24-hour window also ends deliveries never attempted ----------------------------------------------
select pg_temp.delivery(1, interval '48 hours');   -- claimed by a dispatcher that died, two days ago
select pg_temp.delivery(2, interval '25 hours');   -- never claimed at all (a backlog)
select pg_temp.delivery(3, interval '2 hours');    -- due for two hours: still in its window
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
values ('c3000000-0000-4000-8000-000000000201', 'c3000000-0000-4000-8000-0000000000e1',
        'c3000000-0000-4000-8000-0000000000aa', gen_random_uuid(), now() - interval '47 hours');
select is(private.webhook_housekeeping() - 'disabled_endpoints' - 'endpoint_alerts',
          '{"set_aside": 0, "permanently_failed": 2, "expired_leases": 1}'::jsonb,
          'housekeeping ends the two due for more than 24 hours without any attempt, and clears the dead lease');
select results_eq($$select status, attempt_count, last_error from public.webhook_deliveries
                    where endpoint_id = 'c3000000-0000-4000-8000-0000000000e1' order by id$$,
                  $$values ('permanently_failed', 0, 'not attempted within the 24 h retry window'),
                           ('permanently_failed', 0, 'not attempted within the 24 h retry window'),
                           ('pending', 0, null::text)$$,
                  'saying so; the one due for two hours stays pending');
-- Sent again by an admin: a fresh window from then, although it was created two days ago.
select public.webhook_redeliver('c3000000-0000-4000-8000-000000000201');
select is((private.webhook_housekeeping() ->> 'permanently_failed')::int, 0, 'a redelivered one gets a fresh window');
delete from public.webhook_deliveries where endpoint_id = 'c3000000-0000-4000-8000-0000000000e1';

-- Claimed again and again without a result: set aside ---------------------------------------------------
select pg_temp.delivery(4, interval '10 minutes');  -- the oldest: it kills every dispatcher that sends it
select pg_temp.delivery(5, interval '1 minute');
select is((select count(*)::int from pg_temp.claimed()), 2, 'first claim: both');
-- The second one's result is recorded; the dispatcher dies while sending the first.
select private.webhook_record_results(jsonb_build_array(tests.result(l.delivery_id, l.endpoint_id, l.token, 500)))
from private.webhook_leases l where l.delivery_id = 'c3000000-0000-4000-8000-000000000205';
select pg_temp.dispatchers_died();
select is((select claims from private.webhook_leases where delivery_id = 'c3000000-0000-4000-8000-000000000204'), 1,
          'the lease that ran out stays, counting one claim without a result');
select is((select array_agg(c) from pg_temp.claimed() c), array['c3000000-0000-4000-8000-000000000204'::uuid],
          'second claim takes it over');
select is((select claims from private.webhook_leases where delivery_id = 'c3000000-0000-4000-8000-000000000204'), 2,
          'two claims without a result');
select pg_temp.dispatchers_died();
select is((select array_agg(c) from pg_temp.claimed() c), array['c3000000-0000-4000-8000-000000000204'::uuid],
          'third claim');
select pg_temp.dispatchers_died();
select is((select count(*)::int from pg_temp.claimed()), 0, 'after three, it is claimed no more');
update public.webhook_deliveries set next_attempt_at = now() - interval '1 second'
 where id = 'c3000000-0000-4000-8000-000000000205';
select is((select array_agg(c) from pg_temp.claimed() c), array['c3000000-0000-4000-8000-000000000205'::uuid],
          'while the delivery behind it is claimed again as soon as it is due');
select is((private.webhook_housekeeping() ->> 'set_aside')::int, 1, 'housekeeping sets it aside');
select results_eq($$select status, attempt_count, next_attempt_at, last_error from public.webhook_deliveries
                    where id = 'c3000000-0000-4000-8000-000000000204'$$,
                  $$values ('permanently_failed', 0, null::timestamptz,
                            'set aside: claimed 3 times without a recorded result (the dispatcher stopped during each attempt)')$$,
                  'permanently_failed, with the reason Webhook Logs shows');
select is((select count(*)::int from private.webhook_leases where delivery_id = 'c3000000-0000-4000-8000-000000000204'),
          0, 'its lease is gone');

-- A result resets the count; so does an operation that sends it again ---------------------------------------
select public.webhook_redeliver('c3000000-0000-4000-8000-000000000204');
select is((select array_agg(c) from pg_temp.claimed() c), array['c3000000-0000-4000-8000-000000000204'::uuid],
          'redelivered by an admin, it is claimed again');
select pg_temp.dispatchers_died();
select pg_temp.claimed();
select private.webhook_record_results(jsonb_build_array(tests.result(l.delivery_id, l.endpoint_id, l.token, 503)))
from private.webhook_leases l where l.delivery_id = 'c3000000-0000-4000-8000-000000000204';
select is((select count(*)::int from private.webhook_leases where delivery_id = 'c3000000-0000-4000-8000-000000000204'),
          0, 'a recorded result ends the lease, and with it the count');
update public.webhook_deliveries set next_attempt_at = now() - interval '1 second'
 where id = 'c3000000-0000-4000-8000-000000000204';
select pg_temp.claimed();
select is((select claims from private.webhook_leases where delivery_id = 'c3000000-0000-4000-8000-000000000204'), 1,
          'the next claim counts from one again');

select * from finish();
rollback;
