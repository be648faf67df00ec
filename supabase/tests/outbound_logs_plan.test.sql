-- Webhook Logs stays fast however many deliveries other organizations hold: every listing the
-- configuration API offers (GET /webhooks/deliveries: the default listing, by status, by event type, by
-- endpoint, by time range, filters together, and deep cursor pages of each) is, for an admin under
-- row-level security, a range scan of one index in page order, starting at the cursor: no sequential
-- scan, no bitmap scan, no sort.
--
-- The query texts are those listDeliveriesQuery() builds (supabase/functions/webhooks/routes/
-- deliveries.ts), with the parameters written in. The planner is left alone (no enable_* settings):
-- 60,000 deliveries in 40 organizations, with statistics, are enough for it to choose these plans on
-- its own; scripts/bench/webhook_logs.ts times them with 1M rows, scripts/bench/logs_scale.ts with 10M.
begin;
select plan(26);

-- 40 organizations, 3 endpoints each; 500 events per organization over 60 days, each delivered to all
-- three endpoints. Mostly delivered, 1 in 10 permanently failed, the newest few still pending. The same
-- rows every run, and every filtered listing below matching more rows than a page holds: with 1 in 50
-- failed at random (fewer than a page, their number varying) the planner's choice for the by-status
-- listing varied from run to run and with the dead rows earlier tests leave in the table (a bitmap scan
-- and a sort of those few rows instead).
insert into public.organizations (id, name)
select ('d0000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid, 'Logs ' || g from generate_series(1, 40) g;
insert into public.webhook_endpoints (id, organization_id, url, events)
select ('d1000000-0000-4000-8000-' || lpad((o * 10 + e)::text, 12, '0'))::uuid,
       ('d0000000-0000-4000-8000-' || lpad(o::text, 12, '0'))::uuid,
       'https://e' || e || '.example.org/', array['member.created', 'donation.recorded', 'attendance.marked']
from generate_series(1, 40) o, generate_series(1, 3) e;
insert into public.webhook_events (id, organization_id, type, payload, created_at)
select gen_random_uuid(), ('d0000000-0000-4000-8000-' || lpad(o::text, 12, '0'))::uuid,
       (array['member.created', 'donation.recorded', 'attendance.marked'])[1 + n % 3], '{}'::jsonb,
       now() - (n * interval '3 hours')
from generate_series(1, 40) o, generate_series(1, 500) n;
insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, status, next_attempt_at,
                                       attempt_count, created_at)
select ev.organization_id, ev.id, ep.id, ev.type,
       case when ev.created_at > now() - interval '4 hours' then 'pending'
            when round(extract(epoch from now() - ev.created_at) / 10800)::int % 10 = 7 then 'permanently_failed'
            else 'delivered' end,
       case when ev.created_at > now() - interval '4 hours' then now() end, 1, ev.created_at
from public.webhook_events ev join public.webhook_endpoints ep on ep.organization_id = ev.organization_id
where ev.organization_id::text like 'd0000000-%';
analyze public.webhook_deliveries;

select is((select count(*)::int from public.webhook_deliveries where organization_id::text like 'd0000000-%'), 60000,
          '60,000 deliveries in 40 organizations');
-- A delivery inserted without its event type (scripts, tests) gets the event's.
insert into public.webhook_events (id, organization_id, type, payload, created_at)
values ('d3000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001', 'attendance.marked', '{}',
        now() - interval '90 days');
insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at)
values ('d0000000-0000-4000-8000-000000000001', 'd3000000-0000-4000-8000-000000000001',
        'd1000000-0000-4000-8000-000000000011', 'delivered', null);
select is((select event_type from public.webhook_deliveries where event_id = 'd3000000-0000-4000-8000-000000000001'),
          'attendance.marked', 'a delivery inserted without event_type gets its event''s');

-- An admin of organization 7.
select tests.add_member(tests.create_user('logs-admin@example.org', 'd2000000-0000-4000-8000-000000000001'), 'd0000000-0000-4000-8000-000000000007', 'admin');

select tests.act_as_config_api('d2000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000007');

create temp table probe as
select 'select d.id, d.event_id, d.endpoint_id, d.event_type, d.status, d.attempt_count, d.next_attempt_at,
         d.first_attempt_at, d.last_attempt_at, d.last_response_status, d.last_error, d.delivered_at,
         d.created_at, d.created_at::text as cursor_at
  from public.webhook_deliveries d ' as head,
  ' order by d.created_at desc, d.id desc limit 51' as tail;

-- A cursor 1,000 rows deep into organization 7's history (as the API's next_cursor would carry it), and
-- the keyset condition of the page after it.
create temp table deep as
select created_at::text as at, id,
       format($$(d.created_at, d.id) < (%L::text::timestamptz, %L::uuid)$$, created_at::text, id) as after
from public.webhook_deliveries order by created_at desc, id desc offset 1000 limit 1;

select is((select count(*)::int from public.webhook_deliveries), 1500, 'the admin sees only its organization');

-- The plan of a listing as the admin, under RLS.
create function pg_temp.listing(filter text) returns text language sql as $$
  select tests.plan(head || coalesce('where ' || filter, '') || tail) from probe
$$;
grant execute on function pg_temp.listing(text) to authenticated;
grant select on probe, deep to authenticated;

-- Each listing: what its plan must use, and what it must not (where the check is not already made).
select t from (values
  (null, 'Index Scan Backward using webhook_deliveries_log_idx',
   'default listing: newest first straight from the organization''s log index',
   'Seq Scan|Bitmap|Sort', 'default listing: no scan of the table, no sort'),
  ($$d.status = 'permanently_failed'$$,
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(status = ',
   'by status: the log index, status checked inside it', 'Seq Scan|Bitmap|Sort', 'by status: no scan of the table, no sort'),
  ($$d.event_type = 'donation.recorded'$$,
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(event_type = ',
   'by event type: the log index, event type checked inside it',
   'Seq Scan|Bitmap|Sort|Join', 'by event type: no join to the events, no sort'),
  ($$d.endpoint_id = 'd1000000-0000-4000-8000-000000000072'$$, 'Index Scan Backward using webhook_deliveries_endpoint_idx',
   'by endpoint: the endpoint index', 'Seq Scan|Bitmap|Sort', 'by endpoint: no sort'),
  ($$d.created_at >= now() - interval '20 days' and d.created_at < now() - interval '10 days'$$,
   'Index Scan Backward using webhook_deliveries_log_idx', 'by time range: a range of the log index',
   'Seq Scan|Bitmap|Sort', 'by time range: no sort'),
  -- A deep page: the keyset condition is an index condition (the scan starts at the cursor), not a
  -- filter over the 1,000 rows before it.
  ((select after from deep), 'Index Cond: \(\(organization_id = \$0\) AND \(ROW\(created_at, id\) < ROW',
   'deep cursor page: the scan starts at the cursor', 'Seq Scan|Bitmap|Sort', 'deep cursor page: no sort'),
  ($$d.status = 'delivered' and $$ || (select after from deep),
   'Index Cond: \(\(organization_id = \$0\) AND \(ROW\(created_at, id\) < ROW.*AND \(status = ''delivered''::text\)',
   'deep cursor page by status: the scan starts at the cursor too', null, null),
  -- Deep pages of the other listings: the scan starts at the cursor there too (the keyset condition is
  -- in the index condition), whichever of the two indexes the planner takes for an endpoint.
  ($$d.event_type = 'donation.recorded' and $$ || (select after from deep),
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(ROW\(created_at, id\) < ROW.*AND \(event_type = ',
   'deep cursor page by event type: the log index, from the cursor',
   'Seq Scan|Bitmap|Sort|Join', 'deep cursor page by event type: no sort, no join'),
  ($$d.endpoint_id = 'd1000000-0000-4000-8000-000000000072' and $$ || (select after from deep),
   'Index Scan Backward using webhook_deliveries_(endpoint|log)_idx on webhook_deliveries d\s+Index Cond: \(.*ROW\(created_at, id\) < ROW',
   'deep cursor page by endpoint: an index, from the cursor', 'Seq Scan|Bitmap|Sort', 'deep cursor page by endpoint: no sort'),
  ($$d.created_at >= now() - interval '200 days' and d.created_at < now() - interval '10 days' and $$ || (select after from deep),
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(created_at >= .*ROW\(created_at, id\) < ROW',
   'deep cursor page by time range: the log index, between the range''s start and the cursor',
   'Seq Scan|Bitmap|Sort', 'deep cursor page by time range: no sort'),
  -- Filters together (the API takes any combination): still one range of the log index. (Rows that more
  -- than fill a page, as everywhere here: for fewer, the planner may as well read them all and sort.)
  ($$d.event_type = 'donation.recorded' and d.status = 'delivered'$$,
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(status = .*AND \(event_type = ',
   'status and event type together: both checked inside the log index',
   'Seq Scan|Bitmap|Sort', 'status and event type together: no sort'),
  ($$d.status = 'delivered' and d.created_at >= now() - interval '20 days'$$,
   'Index Scan Backward using webhook_deliveries_log_idx on webhook_deliveries d\s+Index Cond: \(\(organization_id = \$0\) AND \(created_at >= .*AND \(status = ',
   'status since a time: the log index from that time on', null, null)
) l (filter, uses, uses_says, never, never_says)
-- (one row at a time, in this order: the check of what the plan uses, then of what it must not)
cross join lateral (values (matches(pg_temp.listing(l.filter), l.uses, l.uses_says)),
                           (case when l.never is not null
                                 then doesnt_match(pg_temp.listing(l.filter), l.never, l.never_says) end)) c (t)
where t is not null;

-- And the pages are right: the rows after the cursor, in order, only this organization's.
select is((select array_agg(id) from (
             select id from public.webhook_deliveries d
             where (d.created_at, d.id) < ((select at from deep)::timestamptz, (select id from deep))
             order by d.created_at desc, d.id desc limit 50) p),
          (select array_agg(id) from (
             select id from public.webhook_deliveries order by created_at desc, id desc offset 1001 limit 50) p),
          'the deep page holds the 50 rows after the cursor');

select * from finish();
rollback;
