-- private.webhook_record_and_claim: a busy dispatcher records its results and claims again in one call.
-- The claim must see the leases the results ended (an endpoint at its cap has room again), and
-- max_rows 0 only records.
begin;
select plan(9);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

select tests.create_organization('Church C', 'c0000000-0000-4000-8000-0000000000aa');
select tests.create_due_deliveries('c0000000-0000-4000-8000-0000000000aa',
  tests.create_endpoint('c0000000-0000-4000-8000-0000000000aa', 'c0000000-0000-4000-8000-0000000000e1'), 3);

create temp table before_claim as select id, ctid as place from public.webhook_deliveries;
create temp table first_claim as select * from private.webhook_claim(10, 1048576, 2, 64, 60);
select is((select count(*)::int from first_claim), 2, 'a cap of 2: the first claim takes 2 of the 3');
select is((select count(*)::int from public.webhook_deliveries d join before_claim b on b.id = d.id
            where b.place = d.ctid and d.id in (select delivery_id from first_claim)), 2,
  'a claim leaves the delivery rows where they are (its lease is a row of its own, no new row version)');
select is((select count(*)::int from private.webhook_claim(10, 1048576, 2, 64, 60)), 0, 'the endpoint is full while they fly');

create temp table second_claim as
select * from private.webhook_record_and_claim(
  (select jsonb_agg(tests.result(delivery_id, endpoint_id, lease_token)) from first_claim), 10, 1048576, 2, 64, 60);
select is((select count(*)::int from public.webhook_deliveries
            where status = 'delivered' and id in (select delivery_id from first_claim)), 2,
  'the results are recorded');
select is((select count(*)::int from second_claim), 1,
  'the claim along sees the room the results made, and takes the third');
select ok((select delivery_id not in (select delivery_id from first_claim) from second_claim),
  'and it is the one not yet sent');

select is((select count(*)::int from private.webhook_record_and_claim(
  (select jsonb_agg(tests.result(delivery_id, endpoint_id, lease_token)) from second_claim), 0, 1048576, 2, 64, 60)), 0,
  'max_rows 0 claims nothing');
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'c0000000-0000-4000-8000-0000000000e1' and status = 'delivered'), 3,
  'but still records');
select is((select count(*)::int from private.webhook_leases
            where endpoint_id = 'c0000000-0000-4000-8000-0000000000e1'), 0,
  'and each recorded result ends its lease');

select * from finish();
rollback;
