-- The claim locks the rows it takes by primary key even when the planner knows nothing about the table:
-- never analyzed (a new deployment until autovacuum first comes by) or grown far past its last
-- statistics (a burst of thousands of deliveries), and the tables beside it sampled while empty. In that
-- state a plain join of the chosen rows with webhook_deliveries was planned the other way round: every
-- due row walked from the due index and compared with each chosen one (1.3 million comparisons, 80 ms a
-- claim instead of 3, in the dispatch benchmark about one run in three); and each due row was compared
-- with every lease (a full fresh run of the suite, once autovacuum had sampled the lease table empty).
begin;
select plan(8);
-- Only this file's organizations are claimed (a project's database has others' work in flight).
select tests.hold_existing_organizations();

select tests.create_organization('Stale statistics', 'c0000000-0000-4000-8000-0000000000cd');
select tests.create_endpoint('c0000000-0000-4000-8000-0000000000cd') from generate_series(1, 4);
-- 20,000 due deliveries over 4 endpoints.
select tests.create_members('c0000000-0000-4000-8000-0000000000cd', 5000);
-- As never analyzed (rolled back with the test). Writing the catalogue takes a superuser: on a hosted
-- project the plan checks are skipped (the claim itself still runs).
select tests.is_superuser() as superuser \gset
\if :superuser
update pg_class set reltuples = -1, relpages = 0 where oid = 'public.webhook_deliveries'::regclass;
delete from pg_statistic where starelid = 'public.webhook_deliveries'::regclass;
-- And the tables it reads beside it as autovacuum leaves them after sampling them empty (the lease table
-- usually is, between a claim and its results): the planner then believes them empty however full they
-- get, and a scan of a whole index costs it no more than a lookup.
update pg_class set reltuples = 0, relpages = 0
where oid in ('private.webhook_leases'::regclass, 'public.webhook_endpoints'::regclass,
              'private.organization_suspensions'::regclass, 'private.webhook_endpoint_pace'::regclass,
              'public.webhook_endpoint_health'::regclass);
\endif

-- The plan of the claim's statement exactly as private.webhook_claim runs it: its text taken from the
-- function, its arguments as parameters, its planner settings (tests.statement_plan).
create function pg_temp.claim_plan() returns text language sql as $$
  select tests.statement_plan('private.webhook_claim(integer, bigint, integer, integer, integer)',
                              'return query(.*);\s*end;\s*$', '256, 33554432, 16, 64, 40')
$$;

\if :superuser
select matches(pg_temp.claim_plan(), 'LockRows\n\s+->  Index Scan using webhook_deliveries_pkey',
               'each chosen row is locked through its primary key');
select doesnt_match(pg_temp.claim_plan(), 'Join Filter',
                    'no row is found by comparing it with every row of a table (no join filter)');
select doesnt_match(pg_temp.claim_plan(), 'Seq Scan|Bitmap', 'every table is read through an index');
select matches(pg_temp.claim_plan(),
               'Index Scan using webhook_endpoints_pkey on webhook_endpoints \w+\n\s+Index Cond: \(id = a_?\d*\.endpoint_id\)',
               'each endpoint''s organization is looked up by primary key');
select matches(pg_temp.claim_plan(),
               'Index Only Scan using webhook_leases_organization_idx on webhook_leases',
               'an organization''s live leases are counted on the lease table''s organization index');
select matches(pg_temp.claim_plan(),
               'Index (Only )?Scan using webhook_leases_(endpoint|organization)_idx on webhook_leases \w+\n\s+Index Cond: \(\((endpoint_id = o\.endpoint_id|organization_id = o\.organization_id)\) AND',
               'an endpoint''s are counted by a lookup on either lease index, not by scanning one');
\else
select skip('needs a superuser to make the statistics stale (pg_class, pg_statistic): runs on the local test cluster', 6);
\endif

select is((select count(*)::int from private.webhook_claim(256, 33554432, 16, 64, 40)), 64,
          'the claim takes 16 for each of the 4 endpoints');
select is((select count(*)::int from public.webhook_deliveries d
           join private.webhook_leases l on l.delivery_id = d.id
           where d.organization_id = 'c0000000-0000-4000-8000-0000000000cd'), 64,
          'and leases exactly those');

select * from finish();
rollback;
