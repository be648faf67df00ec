-- Endpoint health for Settings > Integrations > Webhooks: the last attempt's result, failures in a row
-- (and since when), the success rate and mean response time over 24 hours, per endpoint; its activity
-- chart (attempts per hour over 24 hours or 7 days, delivered and failed, response time percentiles);
-- and the automatic disabling of an endpoint that has failed every attempt for 5 days.
--
-- Attempts carry no endpoint id and are indexed per delivery only, so computing health on read would
-- scan every delivery of the endpoint. Instead one statement-level trigger on
-- webhook_delivery_attempts folds each batch of attempts (the dispatcher writes a batch in one insert)
-- into two small tables: one row per endpoint, and one row per endpoint and 10-minute bucket (kept 7
-- days). Reading an endpoint's health is then one primary-key lookup plus at most 145 bucket rows; its
-- 7-day chart at most 1,009.
--
-- An attempt counts as delivered when it got a 2xx and no error (a late 2xx is recorded with a
-- timeout error and counts as failed, exactly as the delivery's state machine decides).
-- See docs/outbound-webhooks.md#failing-endpoints-are-disabled

-- Response times are counted per bucket in a histogram: bin 0 below the first bound, bin i from bound i
-- up to the next one, the last bin from 10 s (the timeout) up. Histograms add up, so percentiles of any
-- hour or week can be estimated from the buckets (within a bin: the bins are 1.3 to 2 times apart).
create function private.webhook_duration_bounds() returns integer[]
language sql immutable parallel safe
set search_path = ''
as $$ select '{5,10,20,35,50,75,100,150,200,300,500,750,1000,1500,2000,3000,5000,7500,10000}'::integer[] $$;

create function private.webhook_duration_histogram(durations integer[]) returns integer[]
language sql immutable parallel safe
set search_path = ''
as $$
  select array_agg(coalesce(c.n, 0) order by b.i)
  from generate_series(0, cardinality(private.webhook_duration_bounds())) b(i)
  left join (select width_bucket(greatest(d, 0), private.webhook_duration_bounds()) as i, count(*)::int as n
             from unnest(durations) d where d is not null group by 1) c on c.i = b.i
$$;

create function private.webhook_histogram_sum(a integer[], b integer[]) returns integer[]
language sql immutable parallel safe
set search_path = ''
as $$
  select array_agg(coalesce(x, 0) + coalesce(y, 0) order by i) from unnest(a, b) with ordinality t(x, y, i)
$$;

-- Tables -----------------------------------------------------------------------------------------------
create table public.webhook_endpoint_health (
  endpoint_id uuid primary key,
  organization_id uuid not null,
  last_attempt_at timestamptz not null,
  last_response_status integer,
  last_outcome text not null check (last_outcome in ('delivered', 'failed')),
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  -- The first failed attempt of the current run of failures; null while the last attempt succeeded.
  failing_since timestamptz,
  foreign key (organization_id, endpoint_id)
    references public.webhook_endpoints (organization_id, id) on delete cascade
);

create table public.webhook_endpoint_health_buckets (
  endpoint_id uuid not null,
  -- Start of a 10-minute bucket.
  bucket_start timestamptz not null,
  organization_id uuid not null,
  attempts integer not null check (attempts >= 0),
  delivered integer not null check (delivered between 0 and attempts),
  -- Response times of the attempts that recorded one (a network error before the request went out
  -- may not): their sum and count give the mean. A mean, not a median, because buckets only add up.
  timed integer not null default 0 check (timed between 0 and attempts),
  duration_ms_sum bigint not null default 0 check (duration_ms_sum >= 0),
  -- The same attempts' response times by bin of private.webhook_duration_bounds(): percentiles.
  duration_histogram integer[] not null default '{}',
  primary key (endpoint_id, bucket_start),
  foreign key (organization_id, endpoint_id)
    references public.webhook_endpoints (organization_id, id) on delete cascade
);
-- The composite foreign keys above are served by webhook_endpoints' unique (organization_id, id); the
-- cascade from an endpoint delete finds rows through these primary keys (endpoint_id leads).

-- Bookkeeping ------------------------------------------------------------------------------------------
create function private.webhook_attempts_fold_health() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  -- One statement: each attempt's delivery is looked up once for both tables.
  with a as materialized (
    select d.endpoint_id, d.organization_id, n.attempted_at, n.response_status, n.duration_ms,
           (n.response_status between 200 and 299 and n.error is null) as ok
    from new_attempts n join public.webhook_deliveries d on d.id = n.delivery_id
  ), ordered as (
    select a.*,
           max(a.attempted_at) filter (where a.ok) over (partition by a.endpoint_id) as last_ok_at,
           row_number() over (partition by a.endpoint_id order by a.attempted_at desc) as recency
    from a
  ), per_endpoint as (
    select o.endpoint_id, o.organization_id,
           max(o.attempted_at) as last_at,
           max(o.response_status) filter (where o.recency = 1) as last_status,
           bool_or(o.ok) filter (where o.recency = 1) as last_ok,
           bool_or(o.ok) as any_ok,
           count(*) filter (where not o.ok and (o.last_ok_at is null or o.attempted_at > o.last_ok_at))::int
             as failures_after_last_ok,
           min(o.attempted_at) filter (where not o.ok and (o.last_ok_at is null or o.attempted_at > o.last_ok_at))
             as first_failure_after_last_ok
    from ordered o
    group by o.endpoint_id, o.organization_id
  ), health as (
    insert into public.webhook_endpoint_health as h
      (endpoint_id, organization_id, last_attempt_at, last_response_status, last_outcome, consecutive_failures,
       failing_since)
    select e.endpoint_id, e.organization_id, e.last_at, e.last_status,
           case when e.last_ok then 'delivered' else 'failed' end, e.failures_after_last_ok,
           e.first_failure_after_last_ok
    from per_endpoint e
    -- Rows are locked in one order by every writer: batches written at once (by one dispatcher or
    -- several) wait for each other here instead of deadlocking.
    order by e.endpoint_id
    on conflict (endpoint_id) do update set
      -- Batches from racing dispatchers can arrive out of order: the newest attempt decides the last
      -- result; failures in a row restart at a success and otherwise add up.
      last_attempt_at = greatest(h.last_attempt_at, excluded.last_attempt_at),
      last_response_status = case when excluded.last_attempt_at >= h.last_attempt_at
        then excluded.last_response_status else h.last_response_status end,
      last_outcome = case when excluded.last_attempt_at >= h.last_attempt_at
        then excluded.last_outcome else h.last_outcome end,
      consecutive_failures = case
        when (select e.any_ok from per_endpoint e where e.endpoint_id = excluded.endpoint_id)
          then excluded.consecutive_failures
        else h.consecutive_failures + excluded.consecutive_failures end,
      failing_since = case
        when (select e.any_ok from per_endpoint e where e.endpoint_id = excluded.endpoint_id)
          then excluded.failing_since
        else least(h.failing_since, excluded.failing_since) end
  ), counted as (
    -- 10-minute buckets of absolute time (date_bin, unlike date_trunc, does not depend on the
    -- session's time zone).
    insert into public.webhook_endpoint_health_buckets as b
      (endpoint_id, bucket_start, organization_id, attempts, delivered, timed, duration_ms_sum,
       duration_histogram)
    select a.endpoint_id, date_bin('10 minutes', a.attempted_at, timestamptz '2000-01-01 00:00:00+00'),
           a.organization_id, count(*), count(*) filter (where a.ok), count(a.duration_ms),
           coalesce(sum(greatest(a.duration_ms, 0)), 0), private.webhook_duration_histogram(array_agg(a.duration_ms))
    from a
    group by 1, 2, 3
    order by 1, 2
    on conflict (endpoint_id, bucket_start) do update set
      attempts = b.attempts + excluded.attempts,
      delivered = b.delivered + excluded.delivered,
      timed = b.timed + excluded.timed,
      duration_ms_sum = b.duration_ms_sum + excluded.duration_ms_sum,
      duration_histogram = private.webhook_histogram_sum(b.duration_histogram, excluded.duration_histogram)
    returning b.endpoint_id, xmax = 0 as opened
  )
  -- An endpoint that opened a new bucket also drops the ones older than the chart's 7 days (about once
  -- per endpoint per 10 minutes, not on every batch).
  delete from public.webhook_endpoint_health_buckets stale
  using (select distinct endpoint_id from counted where opened) fresh
  where stale.endpoint_id = fresh.endpoint_id and stale.bucket_start < now() - interval '169 hours';
  return null;
end;
$$;
revoke all on function private.webhook_attempts_fold_health() from public;
revoke all on function private.webhook_duration_histogram(integer[]), private.webhook_histogram_sum(integer[], integer[])
  from public;
grant execute on function private.webhook_duration_bounds() to config_api, service_role;

create trigger webhook_delivery_attempts_fold_health after insert on public.webhook_delivery_attempts
  referencing new table as new_attempts
  for each statement execute function private.webhook_attempts_fold_health();

-- Automatic disabling -----------------------------------------------------------------------------------
-- An endpoint that has failed every attempt for 5 days is disabled, so a receiver gone for good stops
-- filling the logs while nobody is told (See docs/outbound-webhooks.md#failing-endpoints-are-disabled).
-- Called every minute by private.webhook_housekeeping(); the partial index keeps that to the endpoints
-- currently failing.
create function private.webhook_failing_disable_after() returns interval
language sql immutable
set search_path = ''
as $$ select interval '5 days' $$;

-- How long an endpoint fails every attempt before its admins get a mail (20261125100000_mail_outbox.sql)
-- and its organization's alert endpoints a webhook.endpoint.failing event
-- (20261129110000_endpoint_alerts.sql).
create function private.webhook_failing_alert_after() returns interval
language sql immutable
set search_path = ''
as $$ select interval '1 hour' $$;

create index webhook_endpoint_health_failing_idx on public.webhook_endpoint_health (failing_since)
  where failing_since is not null;

create function private.webhook_disable_failing_endpoints() returns integer
language sql volatile security definer
set search_path = ''
as $$
  select private.webhook_disable_endpoints(coalesce(jsonb_agg(jsonb_build_object(
           'endpoint_id', h.endpoint_id,
           'reason', format('every attempt failed for 5 days: %s failed attempts in a row since %s',
                            h.consecutive_failures,
                            to_char(h.failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))),
         '[]'))
  from public.webhook_endpoint_health h
  join public.webhook_endpoints e on e.id = h.endpoint_id
  where h.failing_since <= now() - private.webhook_failing_disable_after()
    and h.last_outcome = 'failed'
    and e.enabled and e.updated_at <= now() - private.webhook_failing_disable_after()
    -- Nothing is attempted while the organization is suspended; resuming moves failing_since on.
    and not exists (select from private.organization_suspensions s where s.organization_id = h.organization_id)
$$;
revoke all on function private.webhook_disable_failing_endpoints(), private.webhook_failing_disable_after(),
  private.webhook_failing_alert_after() from public;
-- The thresholds, shown on every endpoint's card (GET /webhooks/alerts).
grant execute on function private.webhook_failing_disable_after(), private.webhook_failing_alert_after()
  to config_api, service_role;

-- Access: read-only, for whoever may configure the organization's webhooks (its admins and API keys),
-- like the delivery history it summarizes. Only the trigger writes.
revoke all on public.webhook_endpoint_health, public.webhook_endpoint_health_buckets from anon, authenticated;
grant select on public.webhook_endpoint_health, public.webhook_endpoint_health_buckets to config_api;
select private.create_admin_policies(t, '{select}', 'private.webhook_admin_organization_id')
  from unnest(array['webhook_endpoint_health', 'webhook_endpoint_health_buckets']) t;
