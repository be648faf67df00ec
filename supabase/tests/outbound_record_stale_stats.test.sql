-- Recording a batch ends each result's lease by primary key even when the statistics say the lease table
-- is empty. It often is when ANALYZE samples it (leases live only between a claim and its results), and
-- its pages stay: the planner then believes it empty however full it gets. With the lease joined to the
-- batch, that plan compared every lease with every result, twice (Rows Removed by Join Filter: 32,640 and
-- 65,280 for one batch of 256; 3x the time of a batch over 20,000 deliveries).
begin;
select plan(7);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

select tests.create_organization('Stale lease statistics', 'c0000000-0000-4000-8000-0000000000ce');
select tests.create_endpoint('c0000000-0000-4000-8000-0000000000ce') from generate_series(1, 4);
select tests.create_members('c0000000-0000-4000-8000-0000000000ce', 200);
create temp table claimed as
select delivery_id, endpoint_id, lease_token from private.webhook_claim(256, 33554432, 16, 64, 60);

-- As ANALYZE leaves it after sampling the table between batches (rolled back with the test). Writing
-- the catalogue takes a superuser: on a hosted project the plan checks are skipped.
select tests.is_superuser() as superuser \gset
\if :superuser
update pg_class set reltuples = 0, relpages = greatest(relpages, 1)
where oid = 'private.webhook_leases'::regclass;
-- The delivery table as never analyzed, whatever autovacuum made of other files' rolled-back rows: sampled
-- while it held only dead rows it is believed empty over its pages, and then every index of it costs the
-- same as its primary key (this file is about the lease table).
update pg_class set reltuples = -1, relpages = 0 where oid = 'public.webhook_deliveries'::regclass;
\endif

-- The plan of the recording statement exactly as private.webhook_record_results runs it (a generic
-- plan, its planner settings: tests.statement_plan), its text taken from the function.
create function pg_temp.record_plan() returns text language sql as $$
  select tests.statement_plan('private.webhook_record_results(jsonb)',
                              '(with r as materialized.*?where d\.id = decided\.delivery_id);', '''[]''')
$$;

\if :superuser
select doesnt_match(pg_temp.record_plan(), 'Join Filter',
                    'no lease is found by comparing it with every result (no join filter)');
select matches(pg_temp.record_plan(),
               'Index Scan using webhook_leases_pkey on webhook_leases \w+\n\s+Index Cond: \(delivery_id = x\.delivery_id\)',
               'each result''s lease is looked up by primary key');
select matches(pg_temp.record_plan(), 'Tid Scan on webhook_leases',
               'and deleted at the address that lookup found');
\else
select skip('needs a superuser to make the statistics stale (pg_class): runs on the local test cluster', 3);
\endif

select is((select count(*)::int from claimed), 64, 'a claim of 16 for each of the 4 endpoints');
-- One result whose lease was taken over meanwhile: it counts as an attempt and ends no lease.
update private.webhook_leases set token = gen_random_uuid()
where delivery_id = (select delivery_id from claimed order by delivery_id limit 1);
select is(private.webhook_record_results((select jsonb_agg(tests.result(delivery_id, endpoint_id, lease_token))
                                          from claimed)), 64, 'recording the batch updates each delivery');
select is((select count(*)::int from private.webhook_leases l join claimed c using (delivery_id)), 1,
          'every lease it held ended; the one taken over stayed');
select is((select count(*)::int from public.webhook_delivery_attempts a join claimed c using (delivery_id)), 64,
          'and every result is an attempt');

select * from finish();
rollback;
