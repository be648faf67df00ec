-- Failure alerts an admin chooses. Besides the mail to its admins (20261125100000_mail_outbox.sql), an
-- organization hears about its endpoints' trouble on any endpoint of its own that it subscribes to:
--   webhook.endpoint.failing    an enabled endpoint has failed every attempt for an hour
--   webhook.endpoint.recovered  an endpoint that event was about delivered again
--   webhook.endpoint.disabled   the system disabled an endpoint (20261122130200_outbound_webhook_dispatch.sql)
-- Choosing where alerts go is subscribing an endpoint to these event types (Settings > Integrations >
-- Webhooks, or the API); the thresholds are private.webhook_failing_alert_after() and
-- private.webhook_failing_disable_after() (20261123100000_webhook_endpoint_health.sql), shown on every
-- endpoint's card (GET /webhooks/alerts).
--
-- No loop and no leak: an alert is raised once per run of failures (and once when it ends), never per
-- failed attempt; it goes through the outbox to the organization's own endpoints only, never to the
-- endpoint it is about. An alert endpoint that fails therefore tells the other alert endpoints once,
-- and its own failed alert deliveries raise nothing more.
-- See docs/outbound-webhooks.md#failure-alerts

-- The run of failures each endpoint was last reported failing for; recovered_at once it was reported
-- recovered. One row per endpoint that ever failed for an hour.
create table private.webhook_endpoint_alerts (
  endpoint_id uuid primary key references public.webhook_endpoints (id) on delete cascade,
  organization_id uuid not null,
  failing_since timestamptz not null,
  failing_alerted_at timestamptz not null default now(),
  recovered_at timestamptz
);
-- What the recovery check reads every minute: the endpoints reported failing and not yet recovered.
create index webhook_endpoint_alerts_open_idx on private.webhook_endpoint_alerts (endpoint_id)
  where recovered_at is null;
revoke all on private.webhook_endpoint_alerts from public, anon, authenticated;

-- Called every minute by private.webhook_housekeeping(): reports endpoints that recovered, then those
-- that started failing (an endpoint that recovered and failed again for an hour is a new run). Reads the
-- failing endpoints through the health table's partial index, and the open alerts through their own.
-- Returns how many alert events were raised.
create function private.webhook_endpoint_alerts() returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  recovered jsonb;
  failing jsonb;
begin
  with done as (
    update private.webhook_endpoint_alerts a
       set recovered_at = now()
      from public.webhook_endpoint_health h, public.webhook_endpoints e
     where a.recovered_at is null and h.endpoint_id = a.endpoint_id and e.id = a.endpoint_id
       and h.last_outcome = 'delivered'
    returning e.id, e.organization_id, e.url, e.description, e.enabled, a.failing_since, a.recovered_at,
              h.last_response_status
  )
  select jsonb_agg(jsonb_build_object(
           'organization_id', d.organization_id,
           'except_endpoint_id', d.id,
           -- Never the secret: the event goes to other receivers.
           'row', jsonb_build_object('id', d.id, 'url', d.url, 'description', d.description,
                                     'enabled', d.enabled, 'failing_since', d.failing_since,
                                     'recovered_at', d.recovered_at,
                                     'last_response_status', d.last_response_status),
           'delta', jsonb_build_object('recovered_at', d.recovered_at)))
    into recovered
    from done d;

  with started as (
    select h.endpoint_id, h.organization_id, h.failing_since, h.consecutive_failures, h.last_response_status,
           e.url, e.description, e.enabled,
           greatest(h.failing_since, e.updated_at) + private.webhook_failing_disable_after() as disable_at
      from public.webhook_endpoint_health h
      join public.webhook_endpoints e on e.id = h.endpoint_id
     where h.failing_since <= now() - private.webhook_failing_alert_after() and h.last_outcome = 'failed'
       and e.enabled
       -- Nothing is attempted while the organization is suspended.
       and not exists (select from private.organization_suspensions s where s.organization_id = h.organization_id)
  ), reported as (
    insert into private.webhook_endpoint_alerts as a (endpoint_id, organization_id, failing_since)
    select s.endpoint_id, s.organization_id, s.failing_since from started s
    order by s.endpoint_id
    on conflict (endpoint_id) do update
      set failing_since = excluded.failing_since, failing_alerted_at = now(), recovered_at = null
      -- A run already reported is not reported again.
      where a.failing_since is distinct from excluded.failing_since
    returning a.endpoint_id
  )
  select jsonb_agg(jsonb_build_object(
           'organization_id', s.organization_id,
           'except_endpoint_id', s.endpoint_id,
           'row', jsonb_build_object('id', s.endpoint_id, 'url', s.url, 'description', s.description,
                                     'enabled', s.enabled, 'failing_since', s.failing_since,
                                     'consecutive_failures', s.consecutive_failures,
                                     'last_response_status', s.last_response_status,
                                     'disable_at', s.disable_at),
           'delta', jsonb_build_object('failing_since', s.failing_since,
                                       'consecutive_failures', s.consecutive_failures)))
    into failing
    from started s join reported r on r.endpoint_id = s.endpoint_id;

  perform private.webhook_enqueue('webhook.endpoint.recovered', recovered);
  perform private.webhook_enqueue('webhook.endpoint.failing', failing);
  return coalesce(jsonb_array_length(recovered), 0) + coalesce(jsonb_array_length(failing), 0);
end;
$$;
revoke all on function private.webhook_endpoint_alerts() from public;
