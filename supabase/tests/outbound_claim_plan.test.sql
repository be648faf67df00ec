-- Claiming due work stays an index scan on the small partial index of open deliveries, however many
-- finished deliveries the table holds.
begin;
select plan(3);

insert into public.organizations (id, name) values ('c0000000-0000-4000-8000-0000000000cc', 'Plan');
insert into public.webhook_endpoints (organization_id, url, events)
select 'c0000000-0000-4000-8000-0000000000cc', 'https://p' || g || '.example.org/', array['member.created']
from generate_series(1, 20) g;
insert into public.members (organization_id, first_name)
select 'c0000000-0000-4000-8000-0000000000cc', 'm' || g from generate_series(1, 1000) g;
-- 20,000 deliveries, all but 20 finished.
update public.webhook_deliveries set status = 'delivered', next_attempt_at = null
where organization_id = 'c0000000-0000-4000-8000-0000000000cc'
  and id not in (select id from public.webhook_deliveries
                 where organization_id = 'c0000000-0000-4000-8000-0000000000cc' limit 20);
analyze public.webhook_deliveries;

create function pg_temp.plan(q text) returns text language plpgsql as $$
declare line text; out text := '';
begin
  for line in execute 'explain (costs off) ' || q loop out := out || line || E'\n'; end loop;
  return out;
end $$;

-- The candidate scan of private.webhook_claim, as written there.
select matches(pg_temp.plan($q$
    select d.id, d.endpoint_id, d.next_attempt_at
    from public.webhook_deliveries d
    where d.status = any (private.webhook_open_states()) and d.next_attempt_at <= now()
      and coalesce(('{}'::jsonb ->> d.endpoint_id::text)::integer, 0) < 16
    order by d.next_attempt_at
    limit 1000
    for no key update skip locked$q$),
  'Index Scan using webhook_deliveries_due_idx', 'the claim scans the due index');
select is((select count(*)::int from private.webhook_claim(500, 16, '{}', 40)), 20, 'and claims exactly the open ones');
select matches(pg_temp.plan($q$
    select id from public.webhook_deliveries
    where status = any (private.webhook_open_states()) and next_attempt_at <= now()
      and lease_token is not null$q$),
  'webhook_deliveries_due_idx', 'housekeeping uses it too');

select * from finish();
rollback;
