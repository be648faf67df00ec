-- Claiming due work stays an index scan on the small partial index of open deliveries, however many
-- finished deliveries the table holds.
begin;
select plan(9);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

select tests.create_organization('Plan', 'c0000000-0000-4000-8000-0000000000cc');
select tests.create_endpoint('c0000000-0000-4000-8000-0000000000cc') from generate_series(1, 20);
select tests.create_members('c0000000-0000-4000-8000-0000000000cc', 1000);
-- 20,000 deliveries, all but 20 finished.
update public.webhook_deliveries set status = 'delivered', next_attempt_at = null
where organization_id = 'c0000000-0000-4000-8000-0000000000cc'
  and id not in (select id from public.webhook_deliveries
                 where organization_id = 'c0000000-0000-4000-8000-0000000000cc' limit 20);
analyze public.webhook_deliveries;

select is((select count(*)::int from private.webhook_claim(500, 1048576, 16, 64, 40)), 20, 'and claims exactly the open ones');
select matches(tests.plan($q$
    select id from public.webhook_deliveries
    where status = any (private.webhook_open_states()) and next_attempt_at <= now()
      and coalesce(first_attempt_at, next_attempt_at) + private.webhook_retry_window() <= now()$q$),
  'webhook_deliveries_due_idx', 'housekeeping finds closed retry windows on it too');

-- A backlog of 2,000 due rows behind an endpoint already at its cap: the claim passes it by and takes
-- the other endpoint's rows.
select tests.create_endpoint('c0000000-0000-4000-8000-0000000000cc', 'c0000000-0000-4000-8000-0000000000e1',
                             array['donation.recorded']);
select tests.create_endpoint('c0000000-0000-4000-8000-0000000000cc', 'c0000000-0000-4000-8000-0000000000e2',
                             array['attendance.marked']);
insert into public.donations (organization_id, amount_minor, currency)
select 'c0000000-0000-4000-8000-0000000000cc', 100, 'USD' from generate_series(1, 2000);
select public.webhook_send_test_event('c0000000-0000-4000-8000-0000000000e2') from generate_series(1, 3);
analyze public.webhook_deliveries;
-- The per-endpoint probe of private.webhook_claim, as written there, on the endpoint with the backlog:
-- its oldest due rows straight from the due index, not its whole backlog sorted (with the function's
-- planner settings).
select matches(tests.plan($q$
    select d.id, d.next_attempt_at
    from public.webhook_deliveries d
    where d.endpoint_id = 'c0000000-0000-4000-8000-0000000000e1'
      and d.status = any (private.webhook_open_states())
      and d.next_attempt_at <= now()
    order by d.next_attempt_at
    limit 16
    for no key update skip locked$q$, 'private.webhook_claim(integer, bigint, integer, integer, integer)'),
  'Index Scan using webhook_deliveries_due_idx', 'the claim scans the due index');
-- Another dispatcher holds 16 live leases on e1: that is its cap, whoever holds them.
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select id, endpoint_id, organization_id, gen_random_uuid(), now() + interval '40 seconds'
from public.webhook_deliveries
where endpoint_id = 'c0000000-0000-4000-8000-0000000000e1' order by created_at limit 16;
select matches(tests.plan($q$
    select count(*) from private.webhook_live_leases l
    where l.endpoint_id = 'c0000000-0000-4000-8000-0000000000e1'
      and l.organization_id = 'c0000000-0000-4000-8000-0000000000cc'$q$,
    'private.webhook_claim(integer, bigint, integer, integer, integer)'),
  'Index (Only )?Scan using webhook_leases_(endpoint|organization)_idx on webhook_leases l\n\s+Index Cond: \(\((endpoint|organization)_id = ',
  'an endpoint''s live leases are counted by a lookup on a lease index (as the claim names both)');
select matches(tests.plan($q$
    select count(*) from private.webhook_live_leases l
    where l.organization_id = 'c0000000-0000-4000-8000-0000000000cc'$q$,
    'private.webhook_claim(integer, bigint, integer, integer, integer)'),
  'webhook_leases_organization_idx', 'an organization''s live leases are counted on the lease table''s organization index');
select is((select count(*)::int from private.webhook_claim(500, 1048576, 16, 16, 40)), 0,
          'an organization whose cap is 16 gets nothing more, however many endpoints and rows it has');
select is((select array_agg(distinct endpoint_id) from private.webhook_claim(500, 1048576, 16, 64, 40)),
          array['c0000000-0000-4000-8000-0000000000e2'::uuid],
          'an endpoint at its cap is passed by, however long its backlog');
select is((select count(*)::int from private.webhook_leases
           where endpoint_id = 'c0000000-0000-4000-8000-0000000000e1'), 16,
          'and none of its rows was claimed');
-- One of those attempts is recorded: exactly one slot opens, and the claim says it filled it. The row
-- claimed is not one of the 15 still leased.
with done as (
  delete from private.webhook_leases
   where delivery_id = (select delivery_id from private.webhook_leases
                        where endpoint_id = 'c0000000-0000-4000-8000-0000000000e1' limit 1)
  returning delivery_id
)
update public.webhook_deliveries set status = 'delivered', next_attempt_at = null
where id = (select delivery_id from done);
-- (The outer query sees the leases as they were before the claim.)
select results_eq($$select c.endpoint_id, c.endpoint_full,
                           not exists (select from private.webhook_leases l where l.delivery_id = c.delivery_id)
                    from private.webhook_claim(500, 1048576, 16, 64, 40) c$$,
                  $$values ('c0000000-0000-4000-8000-0000000000e1'::uuid, true, true)$$,
                  'a freed slot gives exactly one more row, not one still in flight, and the endpoint is full again');

select * from finish();
rollback;
