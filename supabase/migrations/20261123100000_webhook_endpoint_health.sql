-- Endpoint health for Settings > Integrations > Webhooks: the last attempt's result, failures in a row
-- and the success rate over 24 hours, per endpoint.
--
-- Attempts carry no endpoint id and are indexed per delivery only, so computing health on read would
-- scan every delivery of the endpoint. Instead one statement-level trigger on
-- webhook_delivery_attempts folds each batch of attempts (the dispatcher writes a batch in one insert)
-- into two small tables: one row per endpoint, and one row per endpoint and 10-minute bucket. Reading
-- an endpoint's health is then one primary-key lookup plus at most 145 bucket rows.
--
-- An attempt counts as delivered when it got a 2xx and no error (a late 2xx is recorded with a
-- timeout error and counts as failed, exactly as the delivery's state machine decides).

-- Tables -----------------------------------------------------------------------------------------------
create table public.webhook_endpoint_health (
  endpoint_id uuid primary key,
  organization_id uuid not null,
  last_attempt_at timestamptz not null,
  last_response_status integer,
  last_outcome text not null check (last_outcome in ('delivered', 'failed')),
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
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
  primary key (endpoint_id, bucket_start),
  foreign key (organization_id, endpoint_id)
    references public.webhook_endpoints (organization_id, id) on delete cascade
);
-- The composite foreign keys above are served by webhook_endpoints' unique (organization_id, id); the
-- cascade from an endpoint delete finds rows through these primary keys (endpoint_id leads).

-- Bookkeeping ------------------------------------------------------------------------------------------
create function private.webhook_bucket_start(at timestamptz) returns timestamptz
language sql immutable
set search_path = ''
as $$
  select date_trunc('hour', at) + floor(extract(minute from at) / 10) * interval '10 minutes'
$$;

create function private.webhook_attempts_fold_health() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  with a as (
    select d.endpoint_id, d.organization_id, n.attempted_at, n.response_status,
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
             as failures_after_last_ok
    from ordered o
    group by o.endpoint_id, o.organization_id
  )
  insert into public.webhook_endpoint_health as h
    (endpoint_id, organization_id, last_attempt_at, last_response_status, last_outcome, consecutive_failures)
  select e.endpoint_id, e.organization_id, e.last_at, e.last_status,
         case when e.last_ok then 'delivered' else 'failed' end, e.failures_after_last_ok
  from per_endpoint e
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
      else h.consecutive_failures + excluded.consecutive_failures end;

  -- Buckets; an endpoint that opened a new bucket also drops the ones older than the window (about
  -- once per endpoint per 10 minutes, not on every batch).
  with counted as (
    insert into public.webhook_endpoint_health_buckets as b
      (endpoint_id, bucket_start, organization_id, attempts, delivered)
    select d.endpoint_id, private.webhook_bucket_start(n.attempted_at), d.organization_id, count(*),
           count(*) filter (where n.response_status between 200 and 299 and n.error is null)
    from new_attempts n join public.webhook_deliveries d on d.id = n.delivery_id
    group by 1, 2, 3
    on conflict (endpoint_id, bucket_start) do update set
      attempts = b.attempts + excluded.attempts,
      delivered = b.delivered + excluded.delivered
    returning b.endpoint_id, xmax = 0 as opened
  )
  delete from public.webhook_endpoint_health_buckets stale
  using (select distinct endpoint_id from counted where opened) fresh
  where stale.endpoint_id = fresh.endpoint_id and stale.bucket_start < now() - interval '25 hours';
  return null;
end;
$$;
revoke all on function private.webhook_attempts_fold_health() from public;

create trigger webhook_delivery_attempts_fold_health after insert on public.webhook_delivery_attempts
  referencing new table as new_attempts
  for each statement execute function private.webhook_attempts_fold_health();

-- Access: read-only, for whoever may configure the organization's webhooks (its admins and API keys),
-- like the delivery history it summarizes. Only the trigger writes.
alter table public.webhook_endpoint_health enable row level security;
alter table public.webhook_endpoint_health_buckets enable row level security;
revoke all on public.webhook_endpoint_health, public.webhook_endpoint_health_buckets from anon, authenticated;
grant select on public.webhook_endpoint_health, public.webhook_endpoint_health_buckets to authenticated;
create policy webhook_endpoint_health_admin_select on public.webhook_endpoint_health
  for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_endpoint_health_buckets_admin_select on public.webhook_endpoint_health_buckets
  for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
