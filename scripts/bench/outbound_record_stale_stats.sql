\set QUIET on
-- private.webhook_record_results over 20,000 deliveries (4 endpoints, 5000 members), claimed 256 at a
-- time and recorded before the next claim, in a new session, with the lease table's statistics either
-- as a running system often leaves them (:stale: ANALYZE ran between batches, when no lease was live:
-- reltuples 0 on pages that stay) or taken while it held no pages at all. Prints the total and median
-- time per batch of the recording and of the claims.
insert into public.organizations (id, name) values ('c0000000-0000-4000-8000-0000000000aa', 'bench');
insert into public.webhook_endpoints (organization_id, url, events)
select 'c0000000-0000-4000-8000-0000000000aa', 'https://e' || g || '.example.org/hook', array['member.created']
from generate_series(1, 4) g;
insert into public.members (organization_id, first_name)
select 'c0000000-0000-4000-8000-0000000000aa', 'w' || g from generate_series(1, 64) g;
-- One batch claimed and recorded: the lease table has pages and no live row.
select private.webhook_record_results(
  (select jsonb_agg(jsonb_build_object('delivery_id', c.delivery_id, 'endpoint_id', c.endpoint_id,
             'lease_token', c.lease_token, 'outcome', 'delivered', 'attempted_at', now(), 'duration_ms', 2,
             'response_status', 200))
   from private.webhook_claim(256, 33554432, 64, 256, 60) c)) is not null as warmed \gset
insert into public.members (organization_id, first_name)
select 'c0000000-0000-4000-8000-0000000000aa', 'm' || g from generate_series(1, 5000) g;
analyze public.webhook_deliveries, public.webhook_delivery_attempts;
\if :stale
analyze private.webhook_leases;
\else
vacuum analyze private.webhook_leases;
\endif
\c
create temp table timing (record_ms float8, claim_ms float8);
do $$
declare
  t0 timestamptz;
  t1 timestamptz;
  res jsonb;
begin
  loop
    t0 := clock_timestamp();
    select jsonb_agg(jsonb_build_object('delivery_id', c.delivery_id, 'endpoint_id', c.endpoint_id,
             'lease_token', c.lease_token, 'outcome', 'delivered', 'attempted_at', now(), 'duration_ms', 2,
             'response_status', 200, 'response_excerpt', 'ok'))
      into res
      from private.webhook_claim(256, 33554432, 64, 256, 60) c;
    exit when res is null;
    t1 := clock_timestamp();
    perform private.webhook_record_results(res);
    insert into timing
    values (extract(epoch from clock_timestamp() - t1) * 1000, extract(epoch from t1 - t0) * 1000);
  end loop;
end $$;
\unset QUIET
select (select case when reltuples = 0 and relpages > 0 then 'stale (empty on pages)' else 'fresh' end
          from pg_class where oid = 'private.webhook_leases'::regclass) as lease_statistics,
       count(*) as batches, round(sum(record_ms)::numeric) as record_ms,
       round((percentile_cont(0.5) within group (order by record_ms))::numeric, 1) as record_ms_median,
       round(sum(claim_ms)::numeric) as claim_ms
from timing;
