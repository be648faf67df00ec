-- The inbound webhook log: every payload the receivers (checkout-webhook, payments-webhook,
-- messaging-webhook) accept is written here in its own transaction before anything is applied, so that
-- nothing is lost, nothing is applied twice, and a failed write can be replayed.
--
-- Reading order: the table and its indexes, who reads it, then the functions the shared pipeline
-- (supabase/functions/_shared/inbound/) calls: log a verified delivery, count a refused one, claim a
-- row for applying, finish it, mark it failed. What applying means is each receiver's own function
-- (private.process_payment_webhook, private.process_whatsapp_webhook), which claims and finishes the row
-- in the same statement as its writes. See docs/inbound-webhooks.md#the-log-inbound_webhook_log

-- The log ---------------------------------------------------------------------------------------------
-- A verified delivery claims its key AND the SHA-256 of its bytes (See docs/inbound-webhooks.md#idempotency).
-- Unverified deliveries claim nothing, so a forged request cannot block the genuine one, and keep
-- nothing the sender chose (private.log_refused_webhook counts them). A WhatsApp body is logged as one
-- row per account, holding only that account's changes, so no organization reads another's messages.
create table public.inbound_webhook_log (
  id uuid primary key default gen_random_uuid(),
  -- null when the organization could not be determined (e.g. a body that is not JSON, with no
  -- organization in the URL)
  organization_id uuid references public.organizations (id) on delete cascade,
  provider text not null check (provider in ('checkout', 'payments', 'whatsapp')),
  -- WhatsApp: the gateway account (phone number) the row's changes belong to (foreign key in
  -- 20261122120000_whatsapp_messaging.sql, where the accounts are defined).
  account_id uuid,
  event text,
  idempotency_key text,
  -- The full body as JSON (for WhatsApp, the account's part of it); raw_body keeps the text only when
  -- it is not JSON that jsonb can hold.
  payload jsonb,
  raw_body text,
  -- SHA-256 of the verified body's bytes (WhatsApp: of the account's part): the second idempotency key.
  body_sha256 bytea,
  -- Bytes received: the body's size, or for a row counting refused deliveries the sum of theirs.
  body_bytes bigint not null default 0,
  -- The headers that matter for debugging (signature, idempotency, event id, content type, user agent).
  headers jsonb not null default '{}'::jsonb,
  -- true: verified with the organization's secret; false: wrong or missing signature; null: not checked.
  signature_valid boolean,
  -- received   stored, not applied yet (or an apply was interrupted)
  -- processed  applied (or found to be stale/already applied): never applied again
  -- unmatched  verified, but the subscription/payment it names does not exist (yet): replayable
  -- failed     applying raised an error (in `error`): replayable, and a provider retry applies again
  -- rejected   verified or unverifiable, but malformed or an unknown event: answered 400
  -- unverified wrong or missing signature: answered 401, never applied
  status text not null default 'received'
    check (status in ('received', 'processed', 'unmatched', 'failed', 'rejected', 'unverified')),
  error text,
  result jsonb,
  -- deliveries: how often the provider sent it; attempts: how often we tried to apply it.
  deliveries integer not null default 1,
  attempts integer not null default 0,
  received_at timestamptz not null default now(),
  last_received_at timestamptz not null default now(),
  processed_at timestamptz,
  updated_at timestamptz not null default now(),
  -- The members the delivery concerns, recorded when it is applied (the subscription's, the payment's,
  -- the WhatsApp threads'): what erasing a person follows (20261122100200_domain_core.sql, "Who a row
  -- concerns").
  member_ids uuid[] not null default '{}',
  -- Set when the person the delivery concerns was erased: the payload is then {"redacted": true}
  -- (20261125110000_person_erasure.sql); keys, digest, status and times stay, so a provider's retry is
  -- still recognized.
  redacted_at timestamptz,
  -- A verified row keeps its body; anything else keeps no text its sender chose (no body, event name,
  -- key or headers): an admin reads only our reason, a count, a size and times.
  check (case when signature_valid then payload is not null or raw_body is not null
              else payload is null and raw_body is null and event is null and idempotency_key is null
                   and body_sha256 is null and headers = '{}'::jsonb end)
);

-- The idempotency guards: one verified, well-formed row per (organization, provider, key) and per
-- (organization, provider, bytes). Rejected rows stay out of them so that a corrected retry under the
-- same key is still applied.
-- The key and the digest lead: a generic plan (private.log_verified_webhook runs under plpgsql's plan
-- cache) could otherwise look a key up through the digest index by organization alone and filter every
-- row of the organization (measured: linear in the log's size).
create unique index inbound_webhook_log_idempotency_idx
  on public.inbound_webhook_log (idempotency_key, organization_id, provider)
  where signature_valid and status <> 'rejected';
create unique index inbound_webhook_log_body_idx
  on public.inbound_webhook_log (body_sha256, organization_id, provider)
  where signature_valid and status <> 'rejected';
-- Refused deliveries are counted into the current hour's row of their reason.
create index inbound_webhook_log_refused_idx
  on public.inbound_webhook_log (organization_id, provider, error, received_at desc)
  where signature_valid is not true;
-- Webhook Logs lists an organization's newest rows, paged by the keyset (received_at, id); replay picks
-- its failed and unmatched ones. The id makes every page (and erasing a person's rows,
-- 20261125110000_person_erasure.sql) a range of this index even when many rows share a received_at.
create index inbound_webhook_log_org_idx
  on public.inbound_webhook_log (organization_id, received_at desc, id desc);
-- One provider's newest rows: Payment webhooks filtered by provider, and the Connections page's last
-- payload of each provider (an organization's WhatsApp traffic never has to be read past to find them).
create index inbound_webhook_log_provider_idx
  on public.inbound_webhook_log (organization_id, provider, received_at desc, id desc);
create index inbound_webhook_log_replayable_idx
  on public.inbound_webhook_log (organization_id, received_at)
  where status in ('failed', 'unmatched', 'received');
create index inbound_webhook_log_account_idx on public.inbound_webhook_log (account_id)
  where account_id is not null;
create index inbound_webhook_log_member_links_idx on public.inbound_webhook_log using gin (member_ids)
  where member_ids <> '{}';

select private.create_tenant_triggers('inbound_webhook_log');

-- Payloads carry donors' names, e-mails, card details and members' messages: organization admins only,
-- read only, in the settings area (the Payment webhooks page); the Data API gets nothing.
revoke all on public.inbound_webhook_log from anon, authenticated;
grant select on public.inbound_webhook_log to config_api;
select private.create_admin_policies('inbound_webhook_log', '{select}');

-- donation_payment_webhook_log (the name the interface specification gives it): the log of
-- the checkout and card-payment payloads. The rows live in the one log above;
-- this view is that log's payment part. security_invoker: whoever reads it is held to the log's own
-- row-level security (admins of the active organization only), never the view owner's.
create view public.donation_payment_webhook_log with (security_invoker = true) as
  select l.id, l.organization_id, l.provider, l.event, l.idempotency_key, l.payload, l.raw_body,
         l.body_sha256, l.body_bytes, l.headers, l.signature_valid, l.status, l.error, l.result,
         l.deliveries, l.attempts, l.received_at, l.last_received_at, l.processed_at, l.updated_at
  from public.inbound_webhook_log l
  where l.provider in ('checkout', 'payments');
revoke all on public.donation_payment_webhook_log from anon, authenticated;
grant select on public.donation_payment_webhook_log to config_api;

-- Writing the log -------------------------------------------------------------------------------------
-- A verified delivery: the row an earlier delivery with the same key or the same bytes left (counting
-- this delivery), else a new 'received' row. A row not processed yet takes the newest body (a provider
-- retry is the same event); a processed one is never touched beyond its counters. Concurrent first
-- deliveries meet in the unique indexes: the loser sees the winner's row on its next turn.
create function private.log_verified_webhook(
  p_organization_id uuid, p_provider text, p_account_id uuid, p_event text, p_key text, p_sha256 bytea,
  p_payload jsonb, p_raw_body text, p_headers jsonb, p_bytes bigint
) returns table (id uuid, status text)
language plpgsql
set search_path = ''
as $$
declare
  found_row public.inbound_webhook_log%rowtype;
  by_bytes public.inbound_webhook_log%rowtype;
begin
  loop
    -- Two lookups, each on its own unique index (an OR of the two would not use them).
    select * into found_row from public.inbound_webhook_log l
    where l.organization_id = p_organization_id and l.provider = p_provider
      and l.signature_valid and l.status <> 'rejected' and l.idempotency_key = p_key
    for update;
    if found_row.id is null or found_row.status <> 'processed' then
      select * into by_bytes from public.inbound_webhook_log l
      where l.organization_id = p_organization_id and l.provider = p_provider
        and l.signature_valid and l.status <> 'rejected' and l.body_sha256 = p_sha256
      for update;
      -- Key and bytes may point at two rows: an applied one wins, so nothing applies twice.
      if by_bytes.id is not null and (found_row.id is null or by_bytes.status = 'processed') then
        found_row := by_bytes;
      end if;
    end if;
    if found_row.id is not null then
      update public.inbound_webhook_log l
      set deliveries = l.deliveries + 1, last_received_at = now(), updated_at = now()
      where l.id = found_row.id;
      if found_row.status <> 'processed' and found_row.body_sha256 is distinct from p_sha256 and not exists (
        select 1 from public.inbound_webhook_log o
        where o.organization_id = p_organization_id and o.provider = p_provider and o.body_sha256 = p_sha256
          and o.signature_valid and o.status <> 'rejected'
      ) then
        update public.inbound_webhook_log l
        set payload = p_payload, raw_body = p_raw_body, body_sha256 = p_sha256, body_bytes = p_bytes,
            headers = p_headers, event = p_event
        where l.id = found_row.id;
      end if;
      return query select found_row.id, found_row.status;
      return;
    end if;
    -- Without a conflict target every unique index is an arbiter: a concurrent delivery of the same key
    -- or bytes that committed first makes this insert do nothing, and the next turn finds its row.
    insert into public.inbound_webhook_log as l
      (organization_id, provider, account_id, event, idempotency_key, payload, raw_body, body_sha256,
       body_bytes, headers, signature_valid, status)
    values (p_organization_id, p_provider, p_account_id, p_event, p_key, p_payload, p_raw_body, p_sha256,
            p_bytes, p_headers, true, 'received')
    on conflict do nothing
    returning l.id, l.status into found_row.id, found_row.status;
    if found_row.id is not null then
      return query select found_row.id, found_row.status;
      return;
    end if;
  end loop;
end;
$$;

-- A refused delivery (wrong or missing signature, or a body nobody can be found for): counted into the
-- row of its organization (null: none), provider, status and reason for the current hour. However many
-- arrive, the log grows by at most one small row per reason and hour, and it holds nothing they sent.
create function private.log_refused_webhook(
  p_organization_id uuid, p_provider text, p_status text, p_reason text, p_bytes bigint
) returns uuid
language plpgsql
set search_path = ''
as $$
declare
  row_id uuid;
begin
  perform pg_advisory_xact_lock(
    hashtextextended(concat_ws('/', p_organization_id, p_provider, p_status, p_reason), 7305));
  update public.inbound_webhook_log l
  set deliveries = l.deliveries + 1, body_bytes = l.body_bytes + p_bytes, last_received_at = now(),
      updated_at = now()
  where l.id = (
    select x.id from public.inbound_webhook_log x
    where (x.organization_id = p_organization_id or (p_organization_id is null and x.organization_id is null))
      and x.provider = p_provider and x.signature_valid is not true and x.status = p_status
      and x.error = p_reason and x.received_at >= now() - interval '1 hour'
    order by x.received_at desc
    limit 1)
  returning l.id into row_id;
  if row_id is null then
    insert into public.inbound_webhook_log
      (organization_id, provider, signature_valid, status, error, body_bytes)
    values (p_organization_id, p_provider, case when p_status = 'unverified' then false end, p_status,
            left(p_reason, 200), p_bytes)
    returning id into row_id;
  end if;
  return row_id;
end;
$$;

-- Applying a row ----------------------------------------------------------------------------------------
-- The first step of every receiver's process function: the row, locked for the rest of the statement.
-- The caller answers a processed row as a duplicate and applies nothing.
create function private.claim_inbound_webhook(p_log_id uuid)
returns public.inbound_webhook_log
language plpgsql
set search_path = ''
as $$
declare
  log public.inbound_webhook_log%rowtype;
begin
  select * into log from public.inbound_webhook_log where id = p_log_id for update;
  if not found then
    raise exception 'no webhook log row %', p_log_id using errcode = 'P0002';
  end if;
  if log.status <> 'processed' and (log.organization_id is null or log.signature_valid is not true
                                    or log.status = 'rejected') then
    raise exception 'webhook log row % is not a verified delivery', p_log_id using errcode = '22023';
  end if;
  return log;
end;
$$;

-- The last step: the row is processed (or unmatched, to be replayed when what it names exists).
create function private.finish_inbound_webhook(p_log_id uuid, p_result jsonb, p_unmatched boolean)
returns void
language sql
set search_path = ''
as $$
  update public.inbound_webhook_log
  set status = case when p_unmatched then 'unmatched' else 'processed' end,
      result = p_result,
      error = null,
      attempts = attempts + 1,
      processed_at = case when p_unmatched then null else now() end,
      updated_at = now()
  where id = p_log_id
$$;

-- Records which members an applied row concerns (added to what it had: a replay never drops a link).
-- Only members of the organization now: a subscription of a member being erased names an id that will
-- never be followed again.
create function private.link_inbound_webhook(p_log_id uuid, p_members uuid[])
returns void
language sql
set search_path = ''
as $$
  update public.inbound_webhook_log l
  set member_ids = private.member_links_grow(l.organization_id, l.member_ids, p_members)
  where l.id = p_log_id and cardinality(p_members) > 0 and not (l.member_ids @> p_members)
$$;

-- After a process function raised (its writes are gone): the error, for the admin and for replay.
create function private.mark_inbound_webhook_failed(p_log_id uuid, p_error text)
returns void
language sql
set search_path = ''
as $$
  update public.inbound_webhook_log
  set status = 'failed', error = left(p_error, 2000), attempts = attempts + 1, updated_at = now()
  where id = p_log_id and status <> 'processed'
$$;

-- Server-side only. Postgres grants EXECUTE to PUBLIC by default, and `authenticated` has USAGE on
-- schema private, so take it back explicitly.
revoke all on function private.log_verified_webhook(uuid, text, uuid, text, text, bytea, jsonb, text, jsonb, bigint),
  private.log_refused_webhook(uuid, text, text, text, bigint), private.claim_inbound_webhook(uuid),
  private.finish_inbound_webhook(uuid, jsonb, boolean), private.mark_inbound_webhook_failed(uuid, text),
  private.link_inbound_webhook(uuid, uuid[])
  from public, anon, authenticated;
