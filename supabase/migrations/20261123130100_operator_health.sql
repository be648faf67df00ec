-- Operator health: one call that says whether outbound delivery is keeping up and whether the
-- scheduled dispatcher works, with the reasons when it does not: public.webhook_operator_health().
-- Its answer and every alert, with the usual cause: See docs/monitoring.md#health-check and
-- docs/monitoring.md#alerts-to-set
--
-- A wrong Vault secret shows up here as failures with status 401 while cron keeps saying `succeeded`
-- (pg_cron only knows that net.http_post queued the request).

-- Every pg_cron job of this database with its latest run, read from cron.job itself: a job a later
-- migration schedules (or an operator adds) is watched without being listed anywhere. `name_pattern`
-- (LIKE) narrows it to one area's jobs (mail_operator_health: 'mail-%'). A job scheduled without a
-- name is keyed `job <jobid>`.
create function private.cron_job_runs(name_pattern text default '%') returns jsonb
language sql stable security definer
set search_path = ''
as $$
  select coalesce(jsonb_object_agg(coalesce(j.jobname, 'job ' || j.jobid), jsonb_build_object(
           'schedule', j.schedule, 'active', j.active, 'last_status', r.status, 'last_start', r.start_time,
           'last_message', left(r.return_message, 300))), '{}')
  from cron.job j
  left join lateral (
    select d.status, d.start_time, d.return_message from cron.job_run_details d
    where d.jobid = j.jobid order by d.start_time desc nulls last limit 1
  ) r on true
  where j.database = current_database() and coalesce(j.jobname, '') like name_pattern
$$;

-- One `cron_job_failed` warning per job of `runs` (private.cron_job_runs) whose latest run failed, as
-- pg_cron records it (status 'failed' with the error in return_message), or that is inactive.
create function private.cron_job_alerts(runs jsonb) returns jsonb
language sql immutable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object('severity', 'warning', 'code', 'cron_job_failed',
           'message', case when (c.value ->> 'active')::boolean
                           then format('cron job %s: last run %s: %s', c.key, c.value ->> 'last_status',
                                       c.value ->> 'last_message')
                           else format('cron job %s is inactive (cron.job.active = false): it does not run',
                                       c.key) end)
           order by c.key), '[]')
  from jsonb_each(runs) c
  where c.value ->> 'last_status' = 'failed' or not (c.value ->> 'active')::boolean
$$;

revoke all on function private.cron_job_runs(text), private.cron_job_alerts(jsonb) from public, anon, authenticated;

create function public.webhook_operator_health(
  max_due_age interval default interval '5 minutes',
  max_failures_per_hour integer default 3
) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  queue jsonb;
  dispatcher jsonb;
  cron_runs jsonb;
  alerts jsonb := '[]';
  oldest_due timestamptz;
  last_success timestamptz;
  last_failure jsonb;
  failures integer;
  requests integer;
  unanswered integer;
  configured boolean;
  scheduler jsonb;
begin
  -- The queue, on the partial index of open deliveries (small however much history is kept). Due
  -- means waiting for a dispatcher: an attempt in flight (a live lease) is not waiting.
  -- A suspended organization's deliveries are held, not behind: counted apart, never alerted on.
  select jsonb_build_object(
           'open', count(*),
           'due', count(*) filter (where q.waiting),
           'held_suspended', count(*) filter (where q.held),
           'in_flight', (select count(*) from private.webhook_live_leases),
           'oldest_due_at', min(q.next_attempt_at) filter (where q.waiting),
           'oldest_due_age_seconds',
             floor(extract(epoch from now() - min(q.next_attempt_at) filter (where q.waiting)))),
         min(q.next_attempt_at) filter (where q.waiting)
    into queue, oldest_due
  from (
    select d.next_attempt_at, h.held,
           d.next_attempt_at <= now() and not h.held
             and not exists (select from private.webhook_live_leases l where l.delivery_id = d.id) as waiting
    from public.webhook_deliveries d
    cross join lateral (
      select exists (select from private.organization_suspensions s where s.organization_id = d.organization_id) as held
    ) h
    where d.status = any (private.webhook_open_states())
  ) q;
  if oldest_due < now() - max_due_age then
    alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'queue_behind',
      'message', format('the oldest due delivery has waited %s (more than %s): the dispatcher is not running or not keeping up',
                        date_trunc('second', now() - oldest_due), max_due_age));
  end if;

  -- The dispatcher's invocations through pg_net. Dynamic SQL: the net and vault schemas exist only with
  -- those extensions.
  if to_regclass('vault.decrypted_secrets') is not null then
    execute $q$select count(*) = 2 from vault.decrypted_secrets
               where name in ('project_url', 'webhook_dispatch_secret')$q$ into configured;
  end if;
  if to_regclass('net._http_response') is null then
    dispatcher := jsonb_build_object('pg_net', false, 'pg_net_available', private.pg_net_available());
    if private.pg_net_available() and private.preloaded('pg_net') is false then
      -- Installed on this server but it cannot load: the migrations left it out rather than fail. Only
      -- critical where hosted dispatch is meant to run (its Vault secrets are set).
      dispatcher := dispatcher || jsonb_build_object('pg_net_preloaded', false);
      alerts := alerts || jsonb_build_object(
        'severity', case when configured then 'critical' else 'warning' end, 'code', 'pg_net_not_preloaded',
        'message', 'pg_net is installed but not in shared_preload_libraries, so it cannot load and hosted dispatch cannot run (add it there, restart, then run: create extension pg_net with schema extensions); npm run dev dispatches without it');
    elsif private.pg_net_available() or configured then
      alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'pg_net_missing',
        'message', 'pg_net is not installed, so hosted dispatch cannot run: nothing starts the webhook-dispatcher (run: create extension pg_net with schema extensions)');
    end if;
  else
    if not coalesce(configured, false) then
      alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'dispatch_not_configured',
        'message', 'the Vault secrets project_url / webhook_dispatch_secret are not set, so pg_net never starts the webhook-dispatcher');
    end if;
    select count(*) into requests from private.webhook_dispatch_requests where invoked_at > now() - interval '24 hours';
    execute $q$
      select max(r.created) filter (where r.ok),
             count(*) filter (where r.created > now() - interval '1 hour' and not r.ok),
             (select count(*) from private.webhook_dispatch_requests q
              where q.invoked_at between now() - interval '1 hour' and now() - interval '5 minutes'
                and not exists (select 1 from net._http_response x where x.id = q.request_id))
      from private.webhook_dispatch_requests q
      join net._http_response x on x.id = q.request_id
      -- No status (refused, DNS, TLS, timeout) is a failure too: a bare comparison would be null there.
      cross join lateral (select x.created,
                                 coalesce(x.status_code between 200 and 299 and not coalesce(x.timed_out, false),
                                          false) as ok) r$q$
      into last_success, failures, unanswered;
    execute $q$
      select jsonb_build_object('at', r.created, 'status_code', r.status_code, 'timed_out', r.timed_out,
                                'error', r.error_msg, 'body', left(r.content, 300))
      from private.webhook_dispatch_requests q
      join net._http_response r on r.id = q.request_id
      where not coalesce(r.status_code between 200 and 299 and not coalesce(r.timed_out, false), false)
      order by r.created desc limit 1$q$
      into last_failure;
    dispatcher := jsonb_build_object('pg_net', true, 'invocations_24h', requests, 'last_success_at', last_success,
                                     'failures_1h', failures, 'last_failure', last_failure,
                                     'unanswered_1h', unanswered);
    if failures >= max_failures_per_hour
       and (last_success is null or last_success < (last_failure ->> 'at')::timestamptz) then
      alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'dispatcher_failing',
        'message', format('%s dispatcher invocations failed in the last hour, none succeeded since; last: %s',
                          failures, coalesce('HTTP ' || (last_failure ->> 'status_code'), '')
                                    || coalesce(' ' || (last_failure ->> 'error'), '')
                                    || coalesce(' ' || (last_failure ->> 'body'), '')));
    elsif failures > 0 then
      alerts := alerts || jsonb_build_object('severity', 'warning', 'code', 'dispatcher_errors',
        'message', format('%s dispatcher invocations failed in the last hour', failures));
    end if;
    if requests = 0 and (queue ->> 'due')::int > 0 then
      alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'dispatcher_not_invoked',
        'message', 'deliveries are due but the dispatcher was not invoked in 24 hours: check the webhook-dispatch cron job and the Vault secrets project_url / webhook_dispatch_secret');
    end if;
  end if;

  -- Every pg_cron job of this database (the dispatcher's, housekeeping, retention, mail, erasure,
  -- WhatsApp's): the latest run of each, and an alert for each that failed or is inactive.
  cron_runs := private.cron_job_runs();
  alerts := alerts || private.cron_job_alerts(cron_runs);

  -- The 5-second recovery job needs pg_cron 1.5+ (hosted projects have it); with minutes only, the
  -- minute job picks up after a dispatcher outage. Said always; an alert only where hosted dispatch runs.
  scheduler := jsonb_build_object(
    'pg_cron_version', (select extversion from pg_extension where extname = 'pg_cron'),
    'recover_every_5s', exists (select from cron.job where jobname = 'webhook-dispatch-recover'));
  if dispatcher ->> 'pg_net' = 'true' and not (scheduler ->> 'recover_every_5s')::boolean then
    alerts := alerts || case when private.pg_cron_schedules_seconds() then
      jsonb_build_object('severity', 'warning', 'code', 'recover_job_missing',
        'message', 'pg_cron schedules in seconds here but webhook-dispatch-recover is not scheduled (run: select private.schedule_dispatch_recover())')
    else
      jsonb_build_object('severity', 'warning', 'code', 'recover_job_unavailable',
        'message', format('pg_cron %s schedules in minutes only: after a dispatcher outage, what waited goes out at the next minute, not within 5 s (needs pg_cron 1.5+)',
                          scheduler ->> 'pg_cron_version'))
    end;
  end if;

  return jsonb_build_object(
    'checked_at', now(),
    'status', case when alerts @> '[{"severity": "critical"}]' then 'critical'
                   when jsonb_array_length(alerts) > 0 then 'warning' else 'ok' end,
    'alerts', alerts,
    'queue', queue,
    'dispatcher', dispatcher,
    'scheduler', scheduler,
    'cron', cron_runs);
end;
$$;

revoke all on function public.webhook_operator_health(interval, integer) from public, anon, authenticated;
grant execute on function public.webhook_operator_health(interval, integer) to service_role;
