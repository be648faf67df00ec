-- Outbound webhooks, part 1: the tables.
--
--   webhook_endpoints          where an organization wants events sent, which ones, and the signing secret
--   webhook_events             the outbox: one row per domain event, `payload` is the exact JSON body sent
--   webhook_deliveries         one row per (event, endpoint): the delivery state machine and its lease
--   webhook_delivery_attempts  one row per HTTP attempt, for Settings > Integrations > Webhook Logs
--
-- Only those who may configure the organization's webhooks (its admins and API keys:
-- private.webhook_admin_organization_id) read any of this (the endpoint rows hold the signing secrets);
-- only the server (triggers, the dispatcher, the operation functions) writes events, deliveries and
-- attempts. See docs/architecture.md#a-database-row-becomes-a-signed-post

-- A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. The hex
-- signature keys HMAC with this whole string; the Standard Webhooks signature with the decoded bytes.
create function private.webhook_new_secret() returns text
language sql volatile
set search_path = ''
as $$
  select 'whsec_' || encode(extensions.gen_random_bytes(32), 'base64')
$$;

-- Signing secrets an endpoint may have: ours (`whsec_` + base64 of at least 24 bytes), or one the
-- organization defines itself: 24 to 256 printable ASCII characters with at least 8 different ones,
-- not starting with `whsec_` (so it is never mistaken for the base64 form). The hex signature keys HMAC
-- with the secret exactly as the organization sees it; the Standard Webhooks signature with the decoded
-- bytes of the whsec_ form, or with the UTF-8 bytes of an own secret.
create function private.webhook_secret_acceptable(secret text) returns boolean
language sql immutable
set search_path = ''
as $$
  select case
    when secret ~ '^whsec_' then secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$'
    else length(secret) between 24 and 256 and secret ~ '^[!-~]+$'
         and (select count(distinct c) from regexp_split_to_table(secret, '') c) >= 8
  end
$$;

-- The open delivery states, stated once: a delivery in one of them is still to be attempted (the
-- dispatcher's work); `delivered` and `permanently_failed` are final. Immutable, so the planner folds
-- it into a constant and the partial due index below matches the queries that use it.
create function private.webhook_open_states() returns text[]
language sql immutable parallel safe
set search_path = ''
as $$ select array['pending', 'retrying'] $$;

-- The largest body an event carries: 256 KiB of JSON text, as Svix-class services take a few hundred
-- KB. Bodies are built by private.webhook_envelope, which trims a row too large for it (the event and
-- the row's id stay, with a `truncated` marker: nothing is lost silently), and the events table
-- refuses anything larger whoever writes, so the memory a dispatcher needs per delivery is bounded.
create function private.webhook_max_body_bytes() returns integer
language sql immutable parallel safe
set search_path = ''
as $$ select 262144 $$;

-- The event types organizations can subscribe to: written from the event catalogue
-- (supabase/functions/webhooks/catalogue.ts, the one list) by `npm run openapi`; a test fails when this
-- body differs. `webhook.test` exists only for "send a test event".
-- webhook.endpoint.disabled is about the webhooks themselves: the system disabled another endpoint (it
-- answered 410 Gone, or failed every attempt for 5 days: private.webhook_disable_endpoints()).
create function private.webhook_event_types() returns text[]
language sql immutable
set search_path = ''
as $$
  select array[
    'member.created',
    'member.lost',
    'donation.recorded',
    'attendance.marked',
    'workflow.completed',
    'webhook.endpoint.disabled',
    'webhook.endpoint.failing',
    'webhook.endpoint.recovered'
  ]
$$;

-- Endpoints ------------------------------------------------------------------------------------------
create table public.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  -- Syntax only here (scheme, a host, no credentials). Whether the target is safe (https in
  -- production, not a private/loopback/metadata address) depends on DNS and on the deployment, so
  -- it is checked in TypeScript when the endpoint is saved (_shared/webhook_targets.ts) and again by
  -- the dispatcher before every send.
  url text not null check (
    length(url) <= 2048 and url ~* '^https?://[^/?#@[:space:]]+([/?#][^[:space:]]*)?$'
  ),
  events text[] not null check (cardinality(events) > 0 and events <@ private.webhook_event_types()),
  secret text not null default private.webhook_new_secret()
    check (private.webhook_secret_acceptable(secret)),
  -- During a secret rotation the old secret keeps signing too, until it expires.
  previous_secret text check (previous_secret is null or private.webhook_secret_acceptable(previous_secret)),
  previous_secret_expires_at timestamptz,
  enabled boolean not null default true,
  disabled_reason text,
  disabled_at timestamptz,
  description text check (description is null or length(description) <= 500),
  -- At most this many deliveries a second to this endpoint (null: no limit), across every dispatcher:
  -- small church servers and automation plans limit requests. private.webhook_claim paces the sends.
  rate_limit_per_second integer check (rate_limit_per_second between 1 and 1000),
  -- The receiver answered 429 with Retry-After: nothing is sent to this endpoint before then (capped by
  -- private.webhook_retry_after_cap()). Written by the server only (webhook_record_results).
  paused_until timestamptz,
  -- Who made it: the admin (no foreign key: the id outlives their account, so the Webhooks page still
  -- says "removed member"), or the API key (an automation platform's subscription). Neither is
  -- writable by a user role; private.creator_display() says it in words.
  created_by uuid default private.live_user_id(),
  created_by_api_key_id uuid default private.api_key_id(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, id)
);
-- Fan-out looks up the enabled endpoints of one organization inside the domain trigger.
create index webhook_endpoints_fanout_idx on public.webhook_endpoints (organization_id) where enabled;

-- At most this many endpoints per organization: every event is fanned out to each of them inside the
-- writer's transaction, so the count bounds the work one row can cause (Stripe allows 16 per account).
create function private.webhook_max_endpoints() returns integer
language sql immutable
set search_path = ''
as $$ select 100 $$;

create function private.webhook_endpoints_cap() returns trigger
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  cap constant integer := private.webhook_max_endpoints();
begin
  -- Concurrent inserts for one organization take turns, so two cannot both see room for one more.
  perform pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || new.organization_id::text, 0));
  if (select count(*) from public.webhook_endpoints e where e.organization_id = new.organization_id) >= cap then
    raise exception 'This organization has % endpoints, the most it can have; delete one first', cap
      using errcode = '54000', hint = 'too_many_endpoints';
  end if;
  return new;
end;
$$;
create trigger webhook_endpoints_cap before insert on public.webhook_endpoints
  for each row execute function private.webhook_endpoints_cap();
revoke all on function private.webhook_endpoints_cap() from public, anon, authenticated;

-- Events (the outbox) --------------------------------------------------------------------------------
create table public.webhook_events (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  type text not null check (type = any (private.webhook_event_types() || 'webhook.test'::text)),
  -- The whole body as delivered: {"id","type","created_at","organization_id","data":{"row","delta"}}.
  -- Sent as payload::text, so every retry carries byte-identical JSON.
  payload jsonb not null,
  -- The body's size as sent, counted once when it is written: what the dispatcher's claims budget by.
  body_bytes integer generated always as (octet_length(payload::text)) stored
    check (body_bytes <= private.webhook_max_body_bytes()),
  created_at timestamptz not null default now(),
  -- The member the event is about (its row's member, or the member row itself), recorded by the trigger
  -- that raised it: what erasing a person follows ("Who a row concerns", 20261122100200_domain_core.sql).
  -- Deliveries and their attempts concern whom their event concerns.
  member_ids uuid[] not null default '{}',
  -- Set when the person the event is about was erased: the payload is then the envelope without the
  -- data (20261125110000_person_erasure.sql), and the event is never sent again.
  redacted_at timestamptz,
  unique (organization_id, id)
);
create index webhook_events_organization_idx on public.webhook_events (organization_id, created_at);
-- A person's events in id order, for erasing them in batches; events about no one are not in it.
create index webhook_events_member_links_idx on public.webhook_events (member_ids, id) where member_ids <> '{}';

-- Deliveries -----------------------------------------------------------------------------------------
create table public.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  event_id uuid not null,
  endpoint_id uuid not null,
  -- The event's type, copied when the delivery is made (an event's type never changes), so Webhook
  -- Logs filters and shows it from this table alone, on its own index.
  event_type text not null,
  -- The event's body_bytes, copied likewise, so the claim budgets bytes from the due rows it reads
  -- anyway, without a lookup of each candidate's event.
  body_bytes integer not null,
  status text not null default 'pending'
    check (status in ('pending', 'retrying', 'delivered', 'permanently_failed')),
  attempt_count integer not null default 0,
  -- When the dispatcher may next pick this up: set while the delivery is open, null once it is final.
  -- An attempt in flight does not move it: its lease is a row of private.webhook_leases (below).
  next_attempt_at timestamptz default now(),
  first_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_response_status integer,
  last_error text,
  delivered_at timestamptz,
  -- A test delivery ("Send test event", public.webhook_send_test_event): Webhook Logs tags it, and its
  -- tests filter shows, hides or lists only these.
  test boolean not null default false,
  -- The recovery ("Recover failed deliveries", public.webhook_recover_failed) or bulk retry ("Retry
  -- matching", public.webhook_bulk_retry: its job's id) that last queued this delivery again: its answer
  -- links to its deliveries in Webhook Logs by this id.
  recovery_id uuid,
  created_at timestamptz not null default now(),
  unique (event_id, endpoint_id),
  foreign key (organization_id, event_id) references public.webhook_events (organization_id, id) on delete cascade,
  foreign key (organization_id, endpoint_id)
    references public.webhook_endpoints (organization_id, id) on delete cascade,
  check ((status = any (private.webhook_open_states())) = (next_attempt_at is not null))
);
-- Every state change rewrites the row with a new status or next_attempt_at, so no update is HOT and
-- each one inserts into every index of this table: keep them few (and leases out of it, below). These
-- serve everything: primary key; (event_id, endpoint_id) unique, also the event foreign key's index
-- (and retention's way from an old event to its deliveries); the endpoint's history; the dispatcher's
-- claim; and Webhook Logs (below).
create index webhook_deliveries_endpoint_idx on public.webhook_deliveries (endpoint_id, created_at, id);
-- Due work per endpoint in time order. Partial, so it holds only open deliveries and stays small
-- however many millions of finished ones accumulate. Per endpoint, so the claim reaches each
-- endpoint's oldest due rows directly and never walks the backlog of an endpoint already at its cap.
-- Housekeeping reads it too: a retrying row past its window is due (retries are never scheduled past
-- the window's end).
create index webhook_deliveries_due_idx on public.webhook_deliveries (endpoint_id, next_attempt_at)
  where status = any (private.webhook_open_states());
-- Webhook Logs pages one organization's deliveries by (created_at, id) as a range scan of one index,
-- with the status and event type filters checked inside it (See docs/architecture.md#webhook-logs-queries).
-- One index rather than one per filter, because each delivery is rewritten on every state change and
-- inserted into every index again.
-- An endpoint belongs to one organization. Without being told, the planner multiplies the RLS filter's
-- selectivity into an endpoint's row estimate, expects too few rows to fill a page, and sorts the
-- endpoint's whole history instead of reading its index backwards.
create statistics webhook_deliveries_endpoint_organization (dependencies)
  on endpoint_id, organization_id from public.webhook_deliveries;
-- `test` is in it too, so hiding test deliveries (or listing only them) is checked inside the index.
create index webhook_deliveries_log_idx
  on public.webhook_deliveries (organization_id, created_at, id, status, event_type, test);
-- A recovery's deliveries, newest first. Partial: only deliveries ever recovered are in it, and no
-- other delivery's state change touches it.
create index webhook_deliveries_recovery_idx
  on public.webhook_deliveries (recovery_id, created_at, id) where recovery_id is not null;

-- Leases ---------------------------------------------------------------------------------------------
-- A delivery in flight (See docs/architecture.md#leases): kept apart from the delivery row, unlogged,
-- `token` fencing the attempt. `claims` counts claims since the last recorded result, across takeovers;
-- a delivery claimed private.webhook_max_unrecorded_claims() times without a result (a dispatcher died
-- during each attempt) is claimed no more, and housekeeping sets it aside, saying why, instead of it
-- being claimed first again and again while everything behind it waits. No foreign key: a key check
-- would lock the delivery row on every claim; housekeeping clears a lease left by a removed delivery.
create unlogged table private.webhook_leases (
  delivery_id uuid primary key,
  endpoint_id uuid not null,
  organization_id uuid not null,
  token uuid not null,
  leased_until timestamptz not null,
  claims integer not null default 1
);
-- An endpoint's and an organization's live leases, counted by every claim.
create index webhook_leases_endpoint_idx on private.webhook_leases (endpoint_id, leased_until);
create index webhook_leases_organization_idx on private.webhook_leases (organization_id, leased_until);
-- The server's alone (the dispatcher connects as the database owner).
revoke all on private.webhook_leases from public, anon, authenticated;

-- How many times a delivery is claimed without a recorded result before it is set aside.
create function private.webhook_max_unrecorded_claims() returns integer
language sql immutable parallel safe
set search_path = ''
as $$ select 3 $$;

-- The pace of endpoints with a rate limit: when the next send to each may start, whichever dispatcher
-- makes it. The claim gives a paced endpoint only the sends due within private.webhook_pace_horizon(),
-- each with its own start time, and moves next_send_at on; the dispatcher waits for each start.
-- Unlogged like the leases: after a database crash the pace starts afresh, from now. Rows of endpoints
-- gone, or long idle, are cleared by housekeeping. See docs/outbound-webhooks.md#rate-limits-and-429
create unlogged table private.webhook_endpoint_pace (
  endpoint_id uuid primary key,
  next_send_at timestamptz not null
);
revoke all on private.webhook_endpoint_pace from public, anon, authenticated;

-- The time between two sends to an endpoint limited to `rate` a second: 10% more than 1/rate. A
-- receiver counts arrivals, and the time from a dispatcher's start to the receiver's count varies (a
-- busy process, the network): six sends fit in one second as the receiver counts them only if that
-- time varies by more than five margins (at 5 a second, 100 ms).
create function private.webhook_send_gap(rate integer) returns interval
language sql immutable parallel safe
set search_path = ''
as $$ select make_interval(secs => 1.1 / rate) $$;

-- How far ahead a claim schedules a paced endpoint's sends: a dispatcher claims again at least this
-- often while it has work (each result written claims along), so the pace runs on without gaps.
create function private.webhook_pace_horizon() returns interval
language sql immutable parallel safe
set search_path = ''
as $$ select interval '1 second' $$;

-- The leases that have not run out: the attempts in flight, stated once. A view, so the planner reads
-- through it: `not exists (select from private.webhook_live_leases l where l.delivery_id = d.id)` is an
-- anti-join probing the primary key, and an endpoint's or organization's count a range of its index.
create view private.webhook_live_leases as
  select l.delivery_id, l.endpoint_id, l.organization_id, l.token, l.leased_until, l.claims
  from private.webhook_leases l
  where l.leased_until > now();
revoke all on private.webhook_live_leases from public, anon, authenticated;

-- The outbox sets event_type and body_bytes itself; any other insert (an operation, scripts, tests)
-- that leaves them out gets the event's. The WHEN clause keeps the outbox's bulk inserts free of the
-- call.
create function private.webhook_delivery_event_type() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  select coalesce(new.event_type, e.type), coalesce(new.body_bytes, e.body_bytes)
    into new.event_type, new.body_bytes
    from public.webhook_events e where e.id = new.event_id;
  return new;
end;
$$;
create trigger webhook_deliveries_event_type before insert on public.webhook_deliveries
  for each row when (new.event_type is null or new.body_bytes is null)
  execute function private.webhook_delivery_event_type();

-- Attempts -------------------------------------------------------------------------------------------
create table public.webhook_delivery_attempts (
  id uuid primary key default gen_random_uuid(),
  -- Copied from the delivery so the admin policy needs no join. No foreign key of its own: the
  -- dispatcher (webhook_record_results) copies it from the delivery, and an organization's attempts go
  -- with its deliveries (the cascade below); a second key check on every attempt cost a tenth of
  -- recording a batch.
  organization_id uuid not null,
  delivery_id uuid not null references public.webhook_deliveries (id) on delete cascade,
  attempt_number integer not null,
  attempted_at timestamptz not null,
  duration_ms integer,
  response_status integer,
  error text,
  -- The first bytes of the response body (at most 1 KiB), never more.
  response_excerpt text,
  -- The headers we sent ({name: value}), every signature cut to its first characters by the dispatcher
  -- (send.ts): a stored signature could be replayed by anyone who reads the logs. Null when no request
  -- went out (a refused target).
  request_headers jsonb,
  -- The receiver's headers, bounded by the dispatcher (at most 50, 4 KiB in all); cookies not kept.
  response_headers jsonb,
  created_at timestamptz not null default now()
);
-- Attempts are read per delivery (the policy's organization_id filter rides along).
create index webhook_delivery_attempts_delivery_idx
  on public.webhook_delivery_attempts (delivery_id, attempted_at);

-- Endpoint bookkeeping ---------------------------------------------------------------------------------
-- Enabling clears why it was disabled; disabling records when and why (an admin, or a 410 Gone).
create function private.webhook_endpoint_before_write() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- A receiver's pause is not a change of the endpoint's settings (updated_at also restarts the 5 days
  -- of failures before an automatic disable).
  if tg_op = 'UPDATE' and to_jsonb(new) - 'paused_until' = to_jsonb(old) - 'paused_until' then
    return new;
  end if;
  new.updated_at := now();
  if tg_op = 'UPDATE' and new.enabled and not old.enabled then
    new.disabled_reason := null;
    new.disabled_at := null;
  elsif not new.enabled and (tg_op = 'INSERT' or old.enabled) then
    new.disabled_at := now();
    new.disabled_reason := coalesce(new.disabled_reason, 'disabled by an administrator');
  end if;
  return new;
end;
$$;

create trigger webhook_endpoints_before_write before insert or update on public.webhook_endpoints
  for each row execute function private.webhook_endpoint_before_write();
select private.create_tenant_triggers('webhook_endpoints');

-- A disabled endpoint gets nothing more: its open deliveries end now, saying why, and can be brought
-- back with webhook_recover_failed() once it is enabled again. Live leases are kept: a delivery still
-- in flight must not be sent again by a recover before that attempt is over.
create function private.webhook_endpoint_after_disable() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  update public.webhook_deliveries d
     set status = 'permanently_failed',
         next_attempt_at = null,
         last_error = 'endpoint disabled: ' || coalesce(new.disabled_reason, 'disabled')
   where d.endpoint_id = new.id and d.status = any (private.webhook_open_states());
  return null;
end;
$$;

create trigger webhook_endpoints_after_disable after update of enabled on public.webhook_endpoints
  for each row when (old.enabled and not new.enabled)
  execute function private.webhook_endpoint_after_disable();

-- Row-level security -----------------------------------------------------------------------------------
-- The settings area's alone (the configuration API's role): the Data API gets none of these tables.
revoke all on public.webhook_endpoints, public.webhook_events, public.webhook_deliveries,
  public.webhook_delivery_attempts from anon, authenticated;

-- Admins of the active organization (and its API keys) manage its endpoints. Staff see no endpoint
-- row at all. The signing secrets are write-only for every user role (the API returns a secret once,
-- when it makes one; only the dispatcher reads them). Rotation state, the disable bookkeeping and who
-- made an endpoint are written only by the server (no column privilege for them).
grant select (id, organization_id, url, events, previous_secret_expires_at, enabled, disabled_reason, disabled_at,
              description, rate_limit_per_second, paused_until, created_by, created_by_api_key_id, created_at,
              updated_at),
  delete on public.webhook_endpoints to config_api;
-- organization_id must be writable for inserts; the policy pins it to the admin's.
grant insert (organization_id, url, events, secret, enabled, description, disabled_reason, rate_limit_per_second)
  on public.webhook_endpoints to config_api;
grant update (url, events, secret, enabled, description, disabled_reason, rate_limit_per_second)
  on public.webhook_endpoints to config_api;
select private.create_admin_policies('webhook_endpoints', '{select,insert,update,delete}',
                                     'private.webhook_admin_organization_id');

-- The history is read-only, for the same callers.
grant select on public.webhook_events, public.webhook_deliveries, public.webhook_delivery_attempts to config_api;
select private.create_admin_policies(t, '{select}', 'private.webhook_admin_organization_id')
  from unnest(array['webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts']) t;

revoke all on function private.webhook_new_secret(), private.webhook_event_types(),
  private.webhook_secret_acceptable(text), private.webhook_open_states() from public;
grant execute on function private.webhook_new_secret(), private.webhook_event_types(),
  private.webhook_secret_acceptable(text), private.webhook_open_states() to config_api, service_role;
-- The events table's check calls it, whoever writes.
revoke all on function private.webhook_max_body_bytes(), private.webhook_max_unrecorded_claims(),
  private.webhook_send_gap(integer), private.webhook_pace_horizon() from public;
grant execute on function private.webhook_max_body_bytes() to config_api, service_role;
