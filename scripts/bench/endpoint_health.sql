\set QUIET on
-- Cost of the endpoint-health trigger on attempt inserts: batches of 100 attempts over 20 endpoints,
-- alternately with the trigger enabled and disabled, 50 measured batches each (20 warm-up).
insert into auth.users (id, email) values ('a0000000-0000-4000-8000-000000000001', 'b@x.org');
insert into public.organizations (id, name) values ('a1000000-0000-4000-8000-000000000000', 'Bench');
insert into public.webhook_endpoints (id, organization_id, url, events)
select ('e0000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'a1000000-0000-4000-8000-000000000000', 'https://x.example.org/' || g, '{member.created}'
from generate_series(1, 20) g;
insert into public.webhook_events (id, organization_id, type, payload)
select ('f0000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'a1000000-0000-4000-8000-000000000000', 'member.created', '{}'
from generate_series(1, 2000) g;
insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at)
select 'a1000000-0000-4000-8000-000000000000', ('f0000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid,
       ('e0000000-0000-4000-8000-' || lpad((1 + g % 20)::text, 12, '0'))::uuid, 'pending', now()
from generate_series(1, 2000) g;
create temp table timing (mode text, ms float8);
do $$
declare t0 timestamptz; i int; m text;
begin
  for i in 1..120 loop
    m := case when i % 2 = 0 then 'with trigger' else 'without' end;
    if m = 'without' then execute 'alter table public.webhook_delivery_attempts disable trigger webhook_delivery_attempts_fold_health'; 
    else execute 'alter table public.webhook_delivery_attempts enable trigger webhook_delivery_attempts_fold_health'; end if;
    t0 := clock_timestamp();
    -- one dispatcher batch: 100 attempts over 20 endpoints, one in five failed
    insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at, duration_ms, response_status, error)
    select d.organization_id, d.id, 1, now(), 5, case when random() < 0.2 then 500 else 200 end, null
    from (select * from public.webhook_deliveries order by random() limit 100) d;
    if i > 20 then insert into timing values (m, extract(epoch from clock_timestamp() - t0) * 1000); end if;
  end loop;
end $$;
select mode, count(*), round(percentile_cont(0.5) within group (order by ms)::numeric, 3) as p50_ms,
       round(percentile_cont(0.9) within group (order by ms)::numeric, 3) as p90_ms
from timing group by mode order by mode;
