-- Bulk retry: an admin (or an API key) retries every failing delivery that a Webhook Logs filter
-- matches, in bounded batches. See docs/outbound-webhooks.md#bulk-retry
--
-- public.webhook_bulk_retry() is the one entry point (what the audit log records); it writes a job row
-- and returns its id, which is also the `recovery_id` every delivery it retries carries, so
-- `GET /deliveries?recovery_id=` lists them. private.webhook_bulk_retry_step() then does one batch, as
-- the server: called by the configuration API while a request's time allows (the POST that starts it,
-- each poll of its progress) and by the `webhook-bulk-retry` cron job after that. Steps of one job never
-- run at once (its row is locked, skip locked); a cancel waits for the batch in progress and stops the
-- rest.
--
-- What a batch does to each matching delivery, by the delivery state machine
-- (20261122130200_outbound_webhook_dispatch.sql):
--   retrying            next_attempt_at moves to now; nothing else changes (no attempt counted, its
--                       24 h window and attempt history as they were).
--   permanently_failed  queued again as a recovery queues it (webhook_recover_failed): pending, due now,
--                       a fresh 24 h window; attempts and attempt_count kept.
--   delivered, pending  never matched: resending a delivered one is a redelivery, one by one and
--                       explicit (webhook_redeliver); a pending one is due already.
-- Skipped, and counted by reason: a delivery in flight (a live lease, or locked by a claim or a result
-- being recorded: sending it again now would send it twice), one whose endpoint is disabled (a filter
-- naming a disabled endpoint is refused outright), one whose person was erased.

create table public.webhook_bulk_retries (
  -- Also the recovery_id of every delivery it queued.
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  -- The Webhook Logs filter as validated by the API (webhooks/schemas.ts DeliveryFilter):
  -- {endpoint_id, event_type, status, status_class, since, until, tests, recovery_id}.
  filter jsonb not null,
  -- The client's Idempotency-Key: the same key in the same organization answers the same job.
  idempotency_key text check (length(idempotency_key) between 1 and 200),
  requested_by uuid references auth.users (id) on delete set null,
  requested_by_api_key_id uuid default private.api_key_id(),
  requested_at timestamptz not null default now(),
  status text not null default 'running' check (status in ('running', 'done', 'cancelled')),
  -- Matching deliveries when it started, counted up to private.webhook_bulk_retry_count_cap() (null
  -- beyond: "more than").
  total integer,
  processed integer not null default 0,
  retried integer not null default 0,
  -- Deliveries passed over, by reason: {"in_flight": n, "endpoint_disabled": n, "erased": n}.
  skipped jsonb not null default '{}'::jsonb,
  steps integer not null default 0,
  -- Keyset position of the walk, oldest first, through deliveries created before requested_at.
  cursor_at timestamptz,
  cursor_id uuid,
  finished_at timestamptz,
  check ((status = 'running') = (finished_at is null))
);
create unique index webhook_bulk_retries_key_idx on public.webhook_bulk_retries (organization_id, idempotency_key)
  where idempotency_key is not null;
create index webhook_bulk_retries_organization_idx on public.webhook_bulk_retries (organization_id, requested_at desc);
create index webhook_bulk_retries_running_idx on public.webhook_bulk_retries (requested_at) where status = 'running';

select private.create_tenant_triggers('webhook_bulk_retries');
revoke all on public.webhook_bulk_retries from anon, authenticated;
grant select on public.webhook_bulk_retries to config_api;
select private.create_admin_policies('webhook_bulk_retries', '{select}', 'private.webhook_admin_organization_id');

-- How many running jobs an organization may have at once (a hostile tenant cannot queue thousands).
create function private.webhook_bulk_retry_max_running() returns integer
language sql immutable
set search_path = ''
as $$ select 5 $$;

-- Counting matches stops here: a preview and a job's total say "more than" beyond it.
create function private.webhook_bulk_retry_count_cap() returns integer
language sql immutable
set search_path = ''
as $$ select 100000 $$;

-- Whether a delivery's last HTTP status is of a class ('2xx' ... '5xx', 'none': no HTTP answer, as a
-- timeout or a refused connection). A null class matches everything. Webhook Logs' listing states the
-- same rule in its query (routes/deliveries.ts).
create function private.webhook_status_class_matches(class text, status integer) returns boolean
language sql immutable parallel safe
set search_path = ''
as $$
  select case when class is null then true
              when class = 'none' then status is null
              else status / 100 = left(class, 1)::integer end
$$;

-- The deliveries a filter matches, stated once for the preview, the job's total and its batches: the
-- organization's failing deliveries (retrying or permanently failed) created in [since, until) and
-- before `upto`, after the keyset position (after_at, after_id), oldest first. Along the Webhook Logs
-- index (organization_id, created_at, id, status, event_type, test), which checks status, event type
-- and tests inside it. The organization is a parameter, never part of the filter: nothing another
-- organization holds can match, whatever ids the filter names.
create function private.webhook_bulk_retry_matches(org uuid, filter jsonb, upto timestamptz,
                                                   after_at timestamptz, after_id uuid, lim integer)
returns table (id uuid, created_at timestamptz)
language sql stable
set search_path = ''
as $$
  select d.id, d.created_at from public.webhook_deliveries d
   where d.organization_id = org
     and d.status in ('retrying', 'permanently_failed')
     and (filter ->> 'status' is null or d.status = filter ->> 'status')
     and (filter ->> 'endpoint_id' is null or d.endpoint_id = (filter ->> 'endpoint_id')::uuid)
     and (filter ->> 'event_type' is null or d.event_type = filter ->> 'event_type')
     and (filter ->> 'recovery_id' is null or d.recovery_id = (filter ->> 'recovery_id')::uuid)
     and (filter ->> 'since' is null or d.created_at >= (filter ->> 'since')::timestamptz)
     and (filter ->> 'until' is null or d.created_at < (filter ->> 'until')::timestamptz)
     and d.created_at < upto
     and (coalesce(filter ->> 'tests', 'include') = 'include'
          or (filter ->> 'tests' = 'only') = d.test)
     and private.webhook_status_class_matches(filter ->> 'status_class', d.last_response_status)
     and (after_at is null or (d.created_at, d.id) > (after_at, after_id))
   order by d.created_at, d.id
   limit lim
$$;

-- How many deliveries a bulk retry with this filter would take up now, up to `cap`.
create function public.webhook_bulk_retry_preview(filter jsonb, cap integer default 100000) returns integer
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  n integer;
begin
  if org is null then
    raise exception 'a bulk retry is made for one organization' using errcode = '22023';
  end if;
  perform private.webhook_bulk_retry_check_endpoint(org, filter);
  select count(*) into n
    from private.webhook_bulk_retry_matches(org, filter, now(), null, null, least(cap, private.webhook_bulk_retry_count_cap()) + 1);
  return n;
end;
$$;

-- A filter naming an endpoint: it must be the organization's (otherwise the same answer as one that
-- does not exist) and enabled (its failed deliveries come back once it is enabled again).
create function private.webhook_bulk_retry_check_endpoint(org uuid, filter jsonb) returns void
language plpgsql stable
set search_path = ''
as $$
declare
  ep_enabled boolean;
begin
  if filter ->> 'endpoint_id' is null then
    return;
  end if;
  select e.enabled into ep_enabled from public.webhook_endpoints e
   where e.id = (filter ->> 'endpoint_id')::uuid and e.organization_id = org;
  if not found then
    perform private.webhook_not_found(org, 'endpoint');
  end if;
  if not ep_enabled then
    raise exception 'the endpoint is disabled; enable it first' using errcode = '55000';
  end if;
end;
$$;

-- Starts a bulk retry of what `filter` matches (see the top of this file) and returns its id. The one
-- entry point: a second call with the same idempotency_key in the organization returns the first
-- call's id and queues nothing more (a different filter with it: 22023). Admins and API keys of the
-- active organization only (private.webhook_operator_organization).
create function public.webhook_bulk_retry(filter jsonb, idempotency_key text default null) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  existing public.webhook_bulk_retries;
  job_id uuid;
begin
  if org is null then
    raise exception 'a bulk retry is made for one organization' using errcode = '22023';
  end if;
  if jsonb_typeof(filter) is distinct from 'object' then
    raise exception 'filter must be a JSON object' using errcode = '22023';
  end if;
  if webhook_bulk_retry.idempotency_key is not null then
    -- Two requests with one key at once: the second waits for the first's row, then finds it.
    perform pg_advisory_xact_lock(hashtextextended(org::text || webhook_bulk_retry.idempotency_key, 4242));
    select * into existing from public.webhook_bulk_retries r
     where r.organization_id = org and r.idempotency_key = webhook_bulk_retry.idempotency_key;
    if found then
      if existing.filter <> filter then
        raise exception 'this Idempotency-Key was used for another filter' using errcode = '22023',
          hint = 'idempotency_key_reused';
      end if;
      return existing.id;
    end if;
  end if;
  perform private.webhook_bulk_retry_check_endpoint(org, filter);
  perform pg_advisory_xact_lock(hashtextextended(org::text, 4243));
  if (select count(*) from public.webhook_bulk_retries r
       where r.organization_id = org and r.status = 'running') >= private.webhook_bulk_retry_max_running() then
    raise exception 'too many bulk retries are running; start another once one finishes'
      using errcode = '54000';
  end if;
  insert into public.webhook_bulk_retries (organization_id, filter, idempotency_key, requested_by, total)
  values (org, filter, webhook_bulk_retry.idempotency_key, auth.uid(),
          nullif(least((select count(*) from private.webhook_bulk_retry_matches(org, filter, now(), null, null,
                                             private.webhook_bulk_retry_count_cap() + 1)),
                       private.webhook_bulk_retry_count_cap() + 1), private.webhook_bulk_retry_count_cap() + 1))
  returning id into job_id;
  -- In the audit log once per job: a repeated key returned above, before this.
  perform private.audit_record(org, 'deliveries.retried', 'bulk_retry', job_id::text, null,
    jsonb_build_object('filter', filter, 'total', (select r.total from public.webhook_bulk_retries r where r.id = job_id)));
  return job_id;
end;
$$;

-- Stops a running bulk retry after the batch in progress; what it already queued stays queued. Returns
-- false when it had finished already.
create function public.webhook_bulk_retry_cancel(retry_id uuid) returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  job public.webhook_bulk_retries;
begin
  select * into job from public.webhook_bulk_retries r
   where r.id = retry_id and (org is null or r.organization_id = org)
     for update;
  if not found then
    perform private.webhook_not_found(org, 'bulk retry');
  end if;
  if job.status <> 'running' then
    return false;
  end if;
  update public.webhook_bulk_retries r set status = 'cancelled', finished_at = now() where r.id = retry_id;
  return true;
end;
$$;

-- Adds `n` to one reason of the skipped counts.
create function private.webhook_bulk_retry_skip(skipped jsonb, reason text, n bigint) returns jsonb
language sql immutable
set search_path = ''
as $$
  select case when n = 0 then skipped
              else skipped || jsonb_build_object(reason, coalesce((skipped ->> reason)::bigint, 0) + n) end
$$;

-- One batch of a job, as the server: up to `batch_size` matching deliveries after its position. Returns
-- the job as the API shows it (null when another caller holds the job right now, or it does not exist).
create function private.webhook_bulk_retry_step(retry_id uuid, batch_size integer default 1000) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  job public.webhook_bulk_retries;
  ids uuid[];
  last_at timestamptz;
  last_id uuid;
  locked uuid[];
  retried_ids uuid[];
  disabled_n integer;
  erased_n integer;
begin
  select * into job from public.webhook_bulk_retries r where r.id = retry_id for update skip locked;
  if not found then
    return null;
  end if;
  if job.status <> 'running' then
    return private.webhook_bulk_retry_json(job.id);
  end if;
  select array_agg(m.id order by m.created_at, m.id), max(m.created_at)
    into ids, last_at
    from private.webhook_bulk_retry_matches(job.organization_id, job.filter, job.requested_at, job.cursor_at,
                                            job.cursor_id, batch_size) m;
  ids := coalesce(ids, '{}');
  last_id := ids[cardinality(ids)];
  -- Rows a claim or a result being recorded holds right now are passed over (in flight). Those locked
  -- here stay locked until this batch commits, so no claim takes one between the check and the update.
  select coalesce(array_agg(x.id), '{}') into locked
    from (select d.id from public.webhook_deliveries d where d.id = any (ids) for no key update skip locked) x;
  -- A statement of its own, so it sees every lease committed before the rows were locked.
  with target as (
    select d.id, d.status, d.endpoint_id,
           exists (select from private.webhook_live_leases l where l.delivery_id = d.id) as leased,
           not e.enabled as disabled,
           ev.redacted_at is not null as erased
    from public.webhook_deliveries d
    join public.webhook_endpoints e on e.id = d.endpoint_id
    join public.webhook_events ev on ev.id = d.event_id
    where d.id = any (locked) and d.status in ('retrying', 'permanently_failed')
  ), moved as (
    update public.webhook_deliveries d
       set status = 'pending', next_attempt_at = now(), first_attempt_at = null, recovery_id = job.id
      from target t
     where d.id = t.id and t.status = 'permanently_failed' and not (t.leased or t.disabled or t.erased)
    returning d.id
  ), hurried as (
    update public.webhook_deliveries d
       set next_attempt_at = least(d.next_attempt_at, now()), recovery_id = job.id
      from target t
     where d.id = t.id and t.status = 'retrying' and not (t.leased or t.disabled or t.erased)
    returning d.id
  ), fenced as (
    -- A delivery set aside after claims without a result (a lease run out) starts its count again, as
    -- a recovery's does; live leases are never touched (those deliveries were skipped).
    update private.webhook_leases l set token = gen_random_uuid(), claims = 0
      from moved m where l.delivery_id = m.id
  )
  select (select coalesce(array_agg(id), '{}') from (select id from moved union all select id from hurried) x),
         (select count(*) from target t where not t.leased and t.disabled),
         (select count(*) from target t where not t.leased and not t.disabled and t.erased)
    into retried_ids, disabled_n, erased_n;

  job.skipped := private.webhook_bulk_retry_skip(job.skipped, 'in_flight',
                   cardinality(ids) - cardinality(retried_ids) - disabled_n - erased_n);
  job.skipped := private.webhook_bulk_retry_skip(job.skipped, 'endpoint_disabled', disabled_n);
  job.skipped := private.webhook_bulk_retry_skip(job.skipped, 'erased', erased_n);
  update public.webhook_bulk_retries r
     set processed = r.processed + cardinality(ids), retried = r.retried + cardinality(retried_ids),
         skipped = job.skipped, steps = r.steps + 1,
         cursor_at = coalesce(last_at, r.cursor_at), cursor_id = coalesce(last_id, r.cursor_id),
         status = case when cardinality(ids) < batch_size then 'done' else r.status end,
         finished_at = case when cardinality(ids) < batch_size then now() end
   where r.id = job.id;
  if cardinality(retried_ids) > 0 then
    perform pg_notify('webhook_deliveries', 'retry');
  end if;
  return private.webhook_bulk_retry_json(job.id);
end;
$$;

-- A job as the API shows it.
create function private.webhook_bulk_retry_json(retry_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object('id', r.id, 'recovery_id', r.id, 'status', r.status, 'filter', r.filter,
           'total', r.total, 'total_more', r.total is null, 'processed', r.processed, 'retried', r.retried,
           'skipped', r.skipped, 'requested_by', r.requested_by,
           'requested_by_api_key_id', r.requested_by_api_key_id, 'requested_at', r.requested_at,
           'finished_at', r.finished_at)
  from public.webhook_bulk_retries r where r.id = retry_id
$$;

-- The scheduled run: every running job, a batch per transaction, in turn, for at most `time_budget`;
-- finished jobs are kept 90 days. A procedure (no SET clause, not security definer) so it can commit
-- between batches; pg_cron runs it every minute.
create procedure private.webhook_bulk_retry_run(
  batch_size integer default 1000,
  time_budget interval default interval '50 seconds'
)
language plpgsql
as $$
declare
  started timestamptz := clock_timestamp();
  next_id uuid;
  this_round uuid[] := '{}';
  progress jsonb;
begin
  delete from public.webhook_bulk_retries r
   where r.status <> 'running' and r.finished_at < now() - interval '90 days';
  commit;
  loop
    select r.id into next_id from public.webhook_bulk_retries r
     where r.status = 'running' and r.id <> all (this_round)
     order by r.requested_at limit 1 for update skip locked;
    if next_id is null and cardinality(this_round) > 0 then
      this_round := '{}';
      continue;
    end if;
    exit when next_id is null;
    this_round := this_round || next_id;
    progress := private.webhook_bulk_retry_step(next_id, batch_size);
    commit;
    exit when clock_timestamp() - started > time_budget;
  end loop;
  commit;
end;
$$;

revoke all on function private.webhook_bulk_retry_max_running(), private.webhook_bulk_retry_count_cap(),
  private.webhook_bulk_retry_matches(uuid, jsonb, timestamptz, timestamptz, uuid, integer),
  private.webhook_status_class_matches(text, integer), private.webhook_bulk_retry_check_endpoint(uuid, jsonb),
  private.webhook_bulk_retry_skip(jsonb, text, bigint), private.webhook_bulk_retry_step(uuid, integer),
  private.webhook_bulk_retry_json(uuid) from public, anon, authenticated;
revoke all on procedure private.webhook_bulk_retry_run(integer, interval) from public, anon, authenticated;
revoke all on function public.webhook_bulk_retry(jsonb, text), public.webhook_bulk_retry_preview(jsonb, integer),
  public.webhook_bulk_retry_cancel(uuid) from public, anon, authenticated;
grant execute on function public.webhook_bulk_retry(jsonb, text), public.webhook_bulk_retry_preview(jsonb, integer),
  public.webhook_bulk_retry_cancel(uuid) to config_api, service_role;

select cron.schedule('webhook-bulk-retry', '* * * * *', 'call private.webhook_bulk_retry_run()');
-- Not security definer: as the configuration API's role, row-level security shows only its own jobs.
grant execute on function private.webhook_bulk_retry_json(uuid) to config_api;
