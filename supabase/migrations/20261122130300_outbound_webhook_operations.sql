-- Outbound webhooks, part 4: redeliver, recover, test and rotate, for the settings area. The server may
-- call them for any organization; users and API keys only for the one whose webhooks they configure.
-- See docs/outbound-webhooks.md#operations-redeliver-recover-test-rotate

-- The organization whose webhooks the caller may operate on (private.webhook_admin_organization_id:
-- its admins and API keys); null for the server (any organization). Callers who may configure none are
-- refused here, before any row is looked at. The operations then look a row up only within that
-- organization, so another organization's row is neither locked nor told apart from one that does not
-- exist: both answer the same error (no existence oracle).
create function private.webhook_operator_organization() returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid;
begin
  -- Users and API keys arrive as `config_api` (withClaims in the configuration API; `authenticated` and
  -- `anon`, PostgREST's roles, cannot call the operations, but are told apart from the server all the
  -- same); the server does not.
  if coalesce(current_setting('role', true), 'none') not in ('authenticated', 'anon', 'config_api') then
    return null;
  end if;
  org := private.webhook_admin_organization_id();
  if org is null then
    raise exception 'not an admin of this organization' using errcode = '42501';
  end if;
  return org;
end;
$$;

-- What a user who may not see the row is told, whether it exists in another organization or not at
-- all; the server (operator organization null) gets a plain "not found".
create function private.webhook_not_found(operator_org uuid, what text) returns void
language plpgsql
set search_path = ''
as $$
begin
  if operator_org is null then
    raise exception 'no such %', what using errcode = 'P0002';
  end if;
  raise exception 'no such % in your organization, or not an admin of it', what using errcode = '42501';
end;
$$;

create function public.webhook_redeliver(delivery_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  d public.webhook_deliveries;
  endpoint_enabled boolean;
begin
  select * into d from public.webhook_deliveries x
   where x.id = delivery_id and (org is null or x.organization_id = org)
     for update;
  if not found then
    perform private.webhook_not_found(org, 'delivery');
  end if;
  if exists (select 1 from public.webhook_events ev where ev.id = d.event_id and ev.redacted_at is not null) then
    raise exception 'the person this event is about was erased; it is not sent again'
      using errcode = '55000', hint = 'event_redacted';
  end if;
  select enabled into endpoint_enabled from public.webhook_endpoints where id = d.endpoint_id;
  if not endpoint_enabled then
    raise exception 'the endpoint is disabled; enable it first' using errcode = '55000';
  end if;
  -- A delivery being sent right now is left to its dispatcher (its lease still holds).
  if d.status = any (private.webhook_open_states())
     and exists (select from private.webhook_live_leases l where l.delivery_id = d.id) then
    return;
  end if;
  update public.webhook_deliveries
     set status = 'pending', next_attempt_at = now(), first_attempt_at = null, delivered_at = null
   where id = delivery_id;
  -- Fenced: a late result of an attempt still in flight no longer moves the state. Its lease stays, so
  -- the delivery goes out again only once that attempt is over; its count of claims without a result
  -- starts again, as its window does.
  update private.webhook_leases l set token = gen_random_uuid(), claims = 0
   where l.delivery_id = webhook_redeliver.delivery_id;
  perform pg_notify('webhook_deliveries', 'redeliver');
end;
$$;

-- Recover failed deliveries: an endpoint's permanently failed deliveries created in [since, until)
-- (until null: up to now), of one event type or of any (event_type null), are queued again with a
-- fresh 24 h window. The recovered deliveries carry `recovery_id` (the caller's, or a new one), which
-- Webhook Logs lists them by. Returns how many were queued.
create function public.webhook_recover_failed(
  endpoint_id uuid,
  since timestamptz,
  until timestamptz default null,
  event_type text default null,
  recovery_id uuid default null
) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  ep public.webhook_endpoints;
  recovery uuid := coalesce(webhook_recover_failed.recovery_id, gen_random_uuid());
  recovered integer;
begin
  select * into ep from public.webhook_endpoints e
   where e.id = webhook_recover_failed.endpoint_id and (org is null or e.organization_id = org);
  if not found then
    perform private.webhook_not_found(org, 'endpoint');
  end if;
  if not ep.enabled then
    raise exception 'the endpoint is disabled; enable it first' using errcode = '55000';
  end if;
  with recovered_delivery as (
    update public.webhook_deliveries d
       set status = 'pending', next_attempt_at = now(), first_attempt_at = null, recovery_id = recovery
     where d.id in (select c.id from private.webhook_recoverable(ep.id, webhook_recover_failed.since,
                        webhook_recover_failed.until, webhook_recover_failed.event_type) c)
    returning d.id
  ), fenced as (
    -- As for a redeliver: an attempt still in flight (the endpoint was disabled meanwhile) is fenced
    -- and holds the delivery back until it is over.
    update private.webhook_leases l set token = gen_random_uuid(), claims = 0
      from recovered_delivery r where l.delivery_id = r.id
  )
  select count(*) into recovered from recovered_delivery;
  if recovered > 0 then
    perform pg_notify('webhook_deliveries', 'recover');
  end if;
  return recovered;
end;
$$;

-- The deliveries a recovery would queue again, stated once for the recovery and its preview: the
-- endpoint's permanently failed deliveries in the window, along the endpoint's history index.
-- Deliveries ended because the person their event is about was erased stay ended.
create function private.webhook_recoverable(endpoint_id uuid, since timestamptz, until timestamptz, event_type text)
returns table (id uuid)
language sql stable
set search_path = ''
as $$
  select d.id from public.webhook_deliveries d
   where d.endpoint_id = webhook_recoverable.endpoint_id and d.status = 'permanently_failed'
     and d.created_at >= webhook_recoverable.since
     and (webhook_recoverable.until is null or d.created_at < webhook_recoverable.until)
     and (webhook_recoverable.event_type is null or d.event_type = webhook_recoverable.event_type)
     and not exists (select 1 from public.webhook_events ev where ev.id = d.event_id and ev.redacted_at is not null)
$$;

-- How many deliveries webhook_recover_failed would queue again with the same arguments, counted up
-- to `cap` (the preview says "more than" beyond it rather than counting a huge history).
create function public.webhook_recover_preview(
  endpoint_id uuid,
  since timestamptz,
  until timestamptz default null,
  event_type text default null,
  cap integer default 100000
) returns integer
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  ep public.webhook_endpoints;
  n integer;
begin
  select * into ep from public.webhook_endpoints e
   where e.id = webhook_recover_preview.endpoint_id and (org is null or e.organization_id = org);
  if not found then
    perform private.webhook_not_found(org, 'endpoint');
  end if;
  select count(*) into n
    from (select 1 from private.webhook_recoverable(ep.id, webhook_recover_preview.since,
                        webhook_recover_preview.until, webhook_recover_preview.event_type)
          limit cap + 1) c;
  return n;
end;
$$;

-- Every catalogue event type's example body: written from the event catalogue
-- (supabase/functions/webhooks/catalogue.ts) by `npm run openapi`; a test fails when this body differs.
create function private.webhook_event_examples() returns jsonb
language sql immutable
set search_path = ''
as $$
  select $json${
    "member.created": {
      "id": "e1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8",
      "type": "member.created",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "first_name": "Grace",
          "last_name": "Hopper",
          "email": "grace@example.org",
          "primary_phone": "+1 (555) 010-2030",
          "primary_phone_normalized": "15550102030",
          "status": "active",
          "source": "visitor_form",
          "created_at": "2026-11-22T10:15:30.123456+00:00",
          "updated_at": "2026-11-22T10:15:30.123456+00:00"
        },
        "delta": {
          "id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "first_name": "Grace",
          "last_name": "Hopper",
          "email": "grace@example.org",
          "primary_phone": "+1 (555) 010-2030",
          "primary_phone_normalized": "15550102030",
          "status": "active",
          "source": "visitor_form",
          "created_at": "2026-11-22T10:15:30.123456+00:00",
          "updated_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    },
    "member.lost": {
      "id": "e2b3c4d5-e6f7-4081-92a3-b4c5d6e7f809",
      "type": "member.lost",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "first_name": "Grace",
          "last_name": "Hopper",
          "email": "grace@example.org",
          "primary_phone": "+1 (555) 010-2030",
          "primary_phone_normalized": "15550102030",
          "status": "lost",
          "source": "visitor_form",
          "created_at": "2026-11-22T10:15:30.123456+00:00",
          "updated_at": "2026-11-22T10:15:30.123456+00:00"
        },
        "delta": {
          "status": "lost",
          "updated_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    },
    "donation.recorded": {
      "id": "e3c4d5e6-f708-4192-a3b4-c5d6e7f8091a",
      "type": "donation.recorded",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "7c6b5a49-3827-4165-9e8d-7c6b5a493827",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "member_id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "recurring_donation_id": null,
          "amount_minor": 2500,
          "currency": "USD",
          "source": "online",
          "gateway_payment_id": "pay_Nq3xYz12AbCd",
          "donated_at": "2026-11-22T10:15:30.123456+00:00",
          "created_at": "2026-11-22T10:15:30.123456+00:00",
          "refunded_minor": 0,
          "refund_status": "none"
        },
        "delta": {
          "id": "7c6b5a49-3827-4165-9e8d-7c6b5a493827",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "member_id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "recurring_donation_id": null,
          "amount_minor": 2500,
          "currency": "USD",
          "source": "online",
          "gateway_payment_id": "pay_Nq3xYz12AbCd",
          "donated_at": "2026-11-22T10:15:30.123456+00:00",
          "created_at": "2026-11-22T10:15:30.123456+00:00",
          "refunded_minor": 0,
          "refund_status": "none"
        }
      }
    },
    "attendance.marked": {
      "id": "e4d5e6f7-0819-42a3-b4c5-d6e7f8091a2b",
      "type": "attendance.marked",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "member_id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "service_date": "2026-11-22",
          "service_name": "Sunday 10am",
          "created_at": "2026-11-22T10:15:30.123456+00:00"
        },
        "delta": {
          "id": "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "member_id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "service_date": "2026-11-22",
          "service_name": "Sunday 10am",
          "created_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    },
    "workflow.completed": {
      "id": "e5e6f708-192a-43b4-c5d6-e7f8091a2b3c",
      "type": "workflow.completed",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
          "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
          "workflow_id": "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b",
          "member_id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
          "status": "completed",
          "started_at": "2026-11-21T09:00:00+00:00",
          "finished_at": "2026-11-22T10:15:30.123456+00:00"
        },
        "delta": {
          "status": "completed",
          "finished_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    },
    "webhook.endpoint.disabled": {
      "id": "e6f70819-2a3b-44c5-d6e7-f8091a2b3c4d",
      "type": "webhook.endpoint.disabled",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
          "url": "https://crm.example.org/hooks/church",
          "description": "CRM sync",
          "enabled": false,
          "disabled_reason": "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-17T10:15:30Z",
          "disabled_at": "2026-11-22T10:15:30.123456+00:00"
        },
        "delta": {
          "enabled": false,
          "disabled_reason": "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-17T10:15:30Z",
          "disabled_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    },
    "webhook.endpoint.failing": {
      "id": "e7081920-3a4b-45c6-e7f8-091a2b3c4d5e",
      "type": "webhook.endpoint.failing",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
          "url": "https://crm.example.org/hooks/church",
          "description": "CRM sync",
          "enabled": true,
          "failing_since": "2026-11-22T09:10:00.5+00:00",
          "consecutive_failures": 14,
          "last_response_status": 503,
          "disable_at": "2026-11-27T09:10:00.5+00:00"
        },
        "delta": {
          "failing_since": "2026-11-22T09:10:00.5+00:00",
          "consecutive_failures": 14
        }
      }
    },
    "webhook.endpoint.recovered": {
      "id": "e8192a3b-4c5d-46e7-f809-1a2b3c4d5e6f",
      "type": "webhook.endpoint.recovered",
      "created_at": "2026-11-22T10:15:30.123456+00:00",
      "organization_id": "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70",
      "data": {
        "row": {
          "id": "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
          "url": "https://crm.example.org/hooks/church",
          "description": "CRM sync",
          "enabled": true,
          "failing_since": "2026-11-22T09:10:00.5+00:00",
          "recovered_at": "2026-11-22T10:15:30.123456+00:00",
          "last_response_status": 200
        },
        "delta": {
          "recovered_at": "2026-11-22T10:15:30.123456+00:00"
        }
      }
    }
  }$json$::jsonb
$$;

-- A test delivery to one endpoint, whatever it subscribed to: `webhook.test`, or any catalogue type with
-- its example body (the body's own id, time and organization are this event's). Either way the body
-- carries "test": true, which no real event has, so a receiver can tell the two apart (and skip a test
-- member rather than store it); the samples offered to automation platforms leave test events out.
-- Returns the new event's id (the webhook-id the receiver will see).
create function public.webhook_send_test_event(endpoint_id uuid, event_type text default 'webhook.test')
returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  ep public.webhook_endpoints;
  event_id uuid := gen_random_uuid();
  test_row jsonb;
  body jsonb;
begin
  select * into ep from public.webhook_endpoints e
   where e.id = webhook_send_test_event.endpoint_id and (org is null or e.organization_id = org);
  if not found then
    perform private.webhook_not_found(org, 'endpoint');
  end if;
  if not ep.enabled then
    raise exception 'the endpoint is disabled; enable it first' using errcode = '55000';
  end if;
  if event_type = 'webhook.test' then
    test_row := jsonb_build_object('endpoint_id', ep.id, 'message', 'This is a test event.');
    body := private.webhook_envelope(event_id, event_type, ep.organization_id, test_row, test_row);
  else
    body := private.webhook_event_examples() -> event_type;
    if body is null then
      raise exception 'no such event type: %', event_type using errcode = '22023';
    end if;
    body := body || jsonb_build_object('id', event_id, 'created_at', now(), 'organization_id', ep.organization_id);
    -- The example's row belongs to this organization too, as a real event's would.
    if body #> '{data,row}' ? 'organization_id' then
      body := jsonb_set(body, '{data,row,organization_id}', to_jsonb(ep.organization_id));
    end if;
    if body #> '{data,delta}' ? 'organization_id' then
      body := jsonb_set(body, '{data,delta,organization_id}', to_jsonb(ep.organization_id));
    end if;
  end if;
  insert into public.webhook_events (id, organization_id, type, payload)
  values (event_id, ep.organization_id, event_type, body || '{"test": true}'::jsonb);
  insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, test)
  values (ep.organization_id, event_id, ep.id, event_type, true);
  perform pg_notify('webhook_deliveries', event_type);
  return event_id;
end;
$$;

-- Returns the new secret. `grace` (at most 7 days) is how long the previous secret keeps signing.
create function public.webhook_rotate_secret(
  endpoint_id uuid,
  grace interval default interval '24 hours',
  new_secret text default null
) returns text
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_operator_organization();
  ep public.webhook_endpoints;
  fresh text := coalesce(new_secret, private.webhook_new_secret());
begin
  select * into ep from public.webhook_endpoints e
   where e.id = webhook_rotate_secret.endpoint_id and (org is null or e.organization_id = org)
     for update;
  if not found then
    perform private.webhook_not_found(org, 'endpoint');
  end if;
  if grace < interval '0' or grace > interval '7 days' then
    raise exception 'grace must be between 0 and 7 days' using errcode = '22023';
  end if;
  update public.webhook_endpoints e
     set previous_secret = case when grace > interval '0' then ep.secret end,
         previous_secret_expires_at = case when grace > interval '0' then now() + grace end,
         secret = fresh
   where e.id = ep.id;
  return fresh;
end;
$$;

revoke all on function private.webhook_operator_organization(), private.webhook_not_found(uuid, text)
  from public, authenticated;
revoke all on function private.webhook_event_examples() from public;
revoke all on function private.webhook_recoverable(uuid, timestamptz, timestamptz, text) from public;
-- The settings area's (the configuration API's role) and the server's; the Data API cannot call them.
revoke all on function public.webhook_redeliver(uuid),
  public.webhook_recover_failed(uuid, timestamptz, timestamptz, text, uuid),
  public.webhook_recover_preview(uuid, timestamptz, timestamptz, text, integer),
  public.webhook_send_test_event(uuid, text), public.webhook_rotate_secret(uuid, interval, text)
  from public, anon, authenticated;
grant execute on function public.webhook_redeliver(uuid),
  public.webhook_recover_failed(uuid, timestamptz, timestamptz, text, uuid),
  public.webhook_recover_preview(uuid, timestamptz, timestamptz, text, integer),
  public.webhook_send_test_event(uuid, text), public.webhook_rotate_secret(uuid, interval, text)
  to config_api, service_role;
