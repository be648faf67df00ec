-- private.webhook_claim's limits besides the per-endpoint cap: the bytes of bodies a claim returns, the
-- deliveries one organization may have in flight across every dispatcher, and organizations taking
-- turns within a claim (an organization's backlog never pushes another's lone delivery out of it).
begin;
select plan(14);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

-- Bodies of known sizes: 1,000 bytes of padding each, more or less the envelope.
-- The heavy organization: 4 endpoints with 30 due each, the oldest an hour old.
select tests.create_organization('Heavy', 'c1000000-0000-4000-8000-0000000000aa');
select tests.create_due_deliveries('c1000000-0000-4000-8000-0000000000aa',
  tests.create_endpoint('c1000000-0000-4000-8000-0000000000aa'), 30, '1 hour', jsonb_build_object('pad', repeat('x', 1000)))
from generate_series(1, 4);
-- The light one: one endpoint, one delivery, due just now.
select tests.create_organization('Light', 'c1000000-0000-4000-8000-0000000000bb');
select tests.create_due_deliveries('c1000000-0000-4000-8000-0000000000bb',
  tests.create_endpoint('c1000000-0000-4000-8000-0000000000bb'), 1, '1 second', jsonb_build_object('pad', repeat('x', 1000)));

select is((select count(*)::int from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
            where d.body_bytes <> octet_length(e.payload::text) or e.body_bytes <> d.body_bytes), 0,
          'each delivery carries its body''s size in bytes, as the event counted it');

-- Bytes ---------------------------------------------------------------------------------------------------
create temp table sized as
  select * from private.webhook_claim(100, 5500, 16, 1000, 40);
select is((select count(*)::int from sized), 5, 'a claim stops at its byte budget (5 bodies of about 1 KB in 5,500)');
select ok((select sum(body_bytes) <= 5500 from sized), 'the bodies it returns fit in it');
select is((select count(*)::int from sized where body_bytes <> octet_length(body)), 0,
          'body_bytes is the size of the body returned');
delete from private.webhook_leases;
select is((select count(*)::int from private.webhook_claim(100, 100, 16, 1000, 40)), 0,
          'nothing when even the first body does not fit');
select is((select count(*)::int from private.webhook_claim(100, (select max(body_bytes) from public.webhook_deliveries), 16, 1000, 40)), 1,
          'one row when exactly one fits');
delete from private.webhook_leases;

-- Organizations take turns ------------------------------------------------------------------------------
-- The light organization's delivery is the newest of 121, yet it is in a claim of 2.
select is((select array_agg(distinct organization_id order by organization_id) from private.webhook_claim(2, 1048576, 16, 1000, 40) c
           join public.webhook_deliveries d on d.id = c.delivery_id),
          array['c1000000-0000-4000-8000-0000000000aa', 'c1000000-0000-4000-8000-0000000000bb']::uuid[],
          'each organization''s oldest comes before any organization''s second');
delete from private.webhook_leases;

-- The per-organization cap ------------------------------------------------------------------------------
create temp table capped as select * from private.webhook_claim(100, 1048576, 16, 10, 40);
select is((select count(*)::int from capped c join public.webhook_deliveries d on d.id = c.delivery_id
            where d.organization_id = 'c1000000-0000-4000-8000-0000000000aa'), 10,
          'an organization gets no more than its cap, across its 4 endpoints');
select is((select count(*)::int from capped c join public.webhook_deliveries d on d.id = c.delivery_id
            where d.organization_id = 'c1000000-0000-4000-8000-0000000000bb'), 1,
          'and another organization still gets its delivery');
select ok((select bool_and(endpoint_full) from capped c join public.webhook_deliveries d on d.id = c.delivery_id
            where d.organization_id = 'c1000000-0000-4000-8000-0000000000aa'),
          'every endpoint of the organization it filled is marked full');
select is((select count(*)::int from private.webhook_leases
            where organization_id = 'c1000000-0000-4000-8000-0000000000aa'), 10,
          'the leases say whose they are');
select is((select count(*)::int from private.webhook_claim(100, 1048576, 16, 10, 40)), 0,
          'while its 10 are in flight (whichever dispatcher holds them), it gets nothing more');
-- Three of its attempts end (their results recorded: the leases go).
delete from private.webhook_leases
 where delivery_id in (select delivery_id from private.webhook_leases
                        where organization_id = 'c1000000-0000-4000-8000-0000000000aa' limit 3);
select is((select count(*)::int from private.webhook_claim(100, 1048576, 16, 10, 40)), 3,
          'three ended, three more');
-- A lease run out is no longer in flight, and is counted by nobody.
update private.webhook_leases set leased_until = now() - interval '1 second'
 where organization_id = 'c1000000-0000-4000-8000-0000000000aa';
select is((select count(*)::int from private.webhook_claim(100, 1048576, 16, 10, 40)), 10,
          'leases run out: the organization has its whole room again');

select * from finish();
rollback;
