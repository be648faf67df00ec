-- Retention: the outbound delivery history and the inbound webhook log do not grow without bound; what
-- is removed when: See docs/monitoring.md#retention
--
-- private.retention_delete_batch() removes at most one bounded batch and returns what it removed: a short
-- transaction that skips rows others have locked and gives up on a lock it would wait for more than
-- a second. private.retention_run() (a procedure, so it commits between batches) calls it until there
-- is nothing more or its time budget is spent; pg_cron runs that every 10 minutes.

-- Settings ----------------------------------------------------------------------------------------------
create table public.organization_log_retention (
  organization_id uuid primary key references public.organizations (id) on delete cascade,
  webhook_log_days integer not null default 30 check (webhook_log_days between 1 and 90),
  updated_at timestamptz not null default now()
);

revoke all on public.organization_log_retention from anon, authenticated;
-- An organization's admins read and choose its retention, in the settings area (GET and PUT
-- /webhooks/log-retention).
grant select on public.organization_log_retention to config_api;
grant insert (organization_id, webhook_log_days) on public.organization_log_retention to config_api;
grant update (webhook_log_days) on public.organization_log_retention to config_api;
select private.create_admin_policies('organization_log_retention', '{select,insert,update}');

create function private.organization_log_retention_touch() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
create trigger organization_log_retention_touch before update on public.organization_log_retention
  for each row execute function private.organization_log_retention_touch();
select private.create_tenant_triggers('organization_log_retention');

-- One batch -----------------------------------------------------------------------------------------------
-- Removes up to `batch_size` outbound events (with their deliveries and attempts) and up to `batch_size`
-- inbound log rows. Every candidate is found through an index that leads with the organization, oldest
-- first, so a batch costs the same however much history is kept.
create function private.retention_delete_batch(
  batch_size integer default 1000,
  inbound_done_after interval default interval '90 days',
  inbound_expire_after interval default interval '180 days'
) returns table (events integer, deliveries integer, attempts integer, inbound_log integer)
language plpgsql volatile security definer
set search_path = ''
-- Never queue behind a long lock (and never make others queue behind us): give up, try next run.
set lock_timeout = '1s'
as $$
declare
  victims uuid[];
begin
  -- Outbound: old events none of whose deliveries is open or was attempted within the retention period.
  select coalesce(array_agg(v.id), '{}') into victims
  from (
    select e.id
    from public.organizations o
    left join public.organization_log_retention r on r.organization_id = o.id
    cross join lateral (
      select e.id
      from public.webhook_events e
      where e.organization_id = o.id
        and e.created_at < now() - make_interval(days => coalesce(r.webhook_log_days, 30))
        and not exists (
          select 1 from public.webhook_deliveries d
          where d.event_id = e.id
            and (d.status = any (private.webhook_open_states())
                 or d.last_attempt_at >= now() - make_interval(days => coalesce(r.webhook_log_days, 30))))
      order by e.created_at
      limit batch_size
      for update of e skip locked
    ) e
    limit batch_size
  ) v;

  -- Deliveries first, each only if it is still finished now that it is locked (a redeliver that got
  -- there first wins: its delivery stays, and so does its event, below). Attempts go with them.
  with gone as (
    delete from public.webhook_deliveries d
    where d.event_id = any (victims) and d.status <> all (private.webhook_open_states())
    returning d.id
  ), gone_attempts as (
    delete from public.webhook_delivery_attempts a where a.delivery_id in (select id from gone) returning 1
  )
  select (select count(*) from gone), (select count(*) from gone_attempts) into deliveries, attempts;

  delete from public.webhook_events e
  where e.id = any (victims)
    and not exists (select 1 from public.webhook_deliveries d where d.event_id = e.id);
  get diagnostics events = row_count;

  -- Inbound webhook log, per organization on its (organization_id, received_at) index; rows without an
  -- organization (bodies that named none) on the same index's null entries.
  with candidates as (
    select l.id
    from (select o.id from public.organizations o union all select null) o
    cross join lateral (
      select l.id
      from public.inbound_webhook_log l
      where (l.organization_id = o.id or (o.id is null and l.organization_id is null))
        and l.received_at < now() - least(inbound_done_after, inbound_expire_after)
        and ((l.status in ('processed', 'rejected', 'unverified')
              and coalesce(l.processed_at, l.last_received_at) < now() - inbound_done_after)
             or (l.status in ('received', 'failed', 'unmatched')
                 and l.last_received_at < now() - inbound_expire_after))
      order by l.received_at
      limit batch_size
      for update of l skip locked
    ) l
    limit batch_size
  )
  delete from public.inbound_webhook_log l using candidates c where l.id = c.id;
  get diagnostics inbound_log = row_count;

  return next;
end;
$$;

-- The scheduled run ---------------------------------------------------------------------------------------
-- Commits after every batch, so no transaction lasts longer than one batch (vacuum is never held back
-- for long, and a crash loses at most one batch of work, which the next run redoes).
-- Between batches it pauses `pause_factor` times as long as the batch took (at most `max_pause`), so
-- deliveries going on at the same time keep most of the machine (scripts/bench/retention.ts measures
-- it). A run still removes about 150,000 deliveries a minute on a small machine.
create procedure private.retention_run(
  batch_size integer default 1000,
  time_budget interval default interval '60 seconds',
  pause_factor numeric default 3,
  max_pause interval default interval '3 seconds'
)
-- Not security definer and no SET clause: either would forbid the COMMITs. It runs as the owner of the
-- cron job (postgres), and nobody else may call it.
language plpgsql
as $$
declare
  started timestamptz := clock_timestamp();
  batch_started timestamptz;
  b record;
  total_events bigint := 0;
  total_inbound bigint := 0;
begin
  loop
    batch_started := clock_timestamp();
    select * into b from private.retention_delete_batch(batch_size);
    commit;
    total_events := total_events + b.events;
    total_inbound := total_inbound + b.inbound_log;
    exit when (b.events < batch_size and b.inbound_log < batch_size)
           or clock_timestamp() - started > time_budget;
    perform pg_sleep(extract(epoch from least((clock_timestamp() - batch_started) * pause_factor, max_pause)));
  end loop;
  delete from cron.job_run_details where end_time < now() - interval '7 days';
  commit;
  raise log 'retention: removed % outbound events and % inbound log rows', total_events, total_inbound;
end;
$$;

revoke all on function private.retention_delete_batch(integer, interval, interval) from public, anon, authenticated;
revoke all on procedure private.retention_run(integer, interval, numeric, interval) from public, anon, authenticated;
revoke all on function private.organization_log_retention_touch() from public;

select cron.schedule('log-retention', '*/10 * * * *', 'call private.retention_run()');
