-- Inbound payment webhooks: what the checkout (subscription) provider and the card-payment provider tell
-- us about money, kept so that nothing is lost, nothing is applied twice, and a failed write can be
-- replayed. See docs/inbound-webhooks.md#checkout-and-card-payments
--
-- Reading order: the state the domain tables gain (subscription states, refunds), how a delivery finds
-- its organization, then the functions that apply one logged event (the log itself, shared with the
-- WhatsApp receiver, is 20261122105000_inbound_webhook_log.sql). The
-- Edge Functions (checkout-webhook, payments-webhook) verify signatures and normalize the providers'
-- shapes; everything that changes money rows happens in one statement here, so a payload is either
-- applied completely and its log row marked processed, or not at all.

-- Subscriptions ---------------------------------------------------------------------------------------
-- Stored states of a recurring donation; cancelled and completed are terminal. How provider events map
-- onto them: See docs/inbound-webhooks.md#subscription-states-recurring_donationsstatus
alter table public.recurring_donations
  add constraint recurring_donations_status_check check (
    status in ('pending', 'authenticated', 'active', 'past_due', 'paused', 'halted', 'cancelled', 'completed')
  ),
  -- When the provider says the newest applied event happened: an older event arriving late never moves
  -- the subscription back.
  add column last_event_at timestamptz,
  -- Consecutive failed charges; a successful charge resets it.
  add column failure_count integer not null default 0 check (failure_count >= 0),
  add column last_charged_at timestamptz;

-- Webhook routing without an organization in the URL finds the organization by the provider's ids.
create index recurring_donations_gateway_subscription_idx
  on public.recurring_donations (gateway_subscription_id);
create index donations_gateway_payment_idx on public.donations (gateway_payment_id)
  where gateway_payment_id is not null;

-- Refunds ---------------------------------------------------------------------------------------------
-- A donation knows how much of it went back. The amount is derived from donation_refunds (sum of the
-- processed ones), never incremented, so applying the same refund twice cannot count it twice.
alter table public.donations
  add column refunded_minor bigint not null default 0,
  add column refund_status text not null default 'none',
  add constraint donations_refunded_minor_check check (refunded_minor >= 0 and refunded_minor <= amount_minor),
  add constraint donations_refund_status_check check (refund_status in ('none', 'partial', 'refunded')),
  -- Target of the composite reference from donation_refunds, keeping refunds inside one organization.
  add constraint donations_organization_id_id_key unique (organization_id, id);

-- One row per provider refund. A refund may arrive before the payment it refunds (webhooks are not
-- ordered): it is kept with donation_id null and attached when the payment is recorded.
create table public.donation_refunds (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  donation_id uuid,
  gateway_refund_id text not null,
  gateway_payment_id text not null,
  amount_minor bigint not null check (amount_minor > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  -- pending -> processed | failed; the two outcomes are final.
  status text not null check (status in ('pending', 'processed', 'failed')),
  last_event_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, gateway_refund_id),
  -- A deleted donation leaves its refunds waiting, to be attached again if the payment is re-recorded.
  foreign key (organization_id, donation_id) references public.donations (organization_id, id)
    on delete set null (donation_id)
);
create index donation_refunds_payment_idx on public.donation_refunds (organization_id, gateway_payment_id);
create index donation_refunds_donation_idx on public.donation_refunds (donation_id);
create index donation_refunds_gateway_payment_idx on public.donation_refunds (gateway_payment_id);

select private.create_tenant_triggers('donation_refunds', touch => true);

-- Members of the organization read refunds; only the server writes them (no write policy, no grant).
select private.create_tenant_policies('donation_refunds', '{select}');

-- The card-payment provider's secret ---------------------------------------------------------------------
-- Same HMAC scheme as the checkout provider. Providers such as Razorpay give every webhook URL its own
-- secret, so an organization may set one for payments-webhook; when it is null, webhook_secret is used.
-- Write-only like webhook_secret: admins set it through the configuration API, only the server reads it.
alter table public.organization_settings add column payments_webhook_secret text;
grant insert (payments_webhook_secret), update (payments_webhook_secret) on public.organization_settings to config_api;

-- Provider ids of erased people -----------------------------------------------------------------------------
-- Erasing a member (20261125110000_person_erasure.sql) keeps their donations, anonymous, but a provider's
-- payment or subscription id names the payer at the provider, so it is replaced by a keyed digest of
-- itself: `erased:` and the hex HMAC-SHA256 of the id under a key only the database holds (a plain hash of
-- a short, digit-only id is reversed by trying them all). A provider retrying a payment after the
-- erasure is still recognized (its id's digest is the one stored), so nothing is recorded twice;
-- nothing can turn a digest back into the id.
create table private.gateway_id_key (
  singleton boolean primary key default true check (singleton),
  key bytea not null default extensions.gen_random_bytes(32)
);
insert into private.gateway_id_key default values;
alter table private.gateway_id_key enable row level security;
revoke all on private.gateway_id_key from public, anon, authenticated;

-- Security definer: whoever applies a delivery needs the digest, never the key.
create function private.erased_gateway_id(id text) returns text
language sql stable security definer
set search_path = ''
as $$
  select 'erased:' || encode(extensions.hmac(convert_to(id, 'UTF8'), k.key, 'sha256'), 'hex')
  from private.gateway_id_key k
$$;

-- An id as it may be stored: as the provider sent it, or erased.
create function private.gateway_id_forms(id text) returns text[]
language sql stable
set search_path = ''
as $$
  select case when id is null then '{}'::text[] else array[id, private.erased_gateway_id(id)] end
$$;

-- Routing: which organizations could have sent this, with the secret to check it -------------------------
-- The organization in the URL wins; otherwise one named in the payload; otherwise the organizations that
-- know the subscription or payment id. Several candidates are possible (ids are unique per organization
-- only): the caller keeps the one whose secret verifies the signature.
create function private.inbound_webhook_targets(
  p_provider text,
  p_organization_id uuid,
  p_subscription_id text,
  p_payment_id text
) returns table (organization_id uuid, secret text)
language sql stable
set search_path = ''
as $$
  with candidates as (
    select p_organization_id as id where p_organization_id is not null
    union
    select rd.organization_id from public.recurring_donations rd
    where p_organization_id is null
      and rd.gateway_subscription_id = any (private.gateway_id_forms(p_subscription_id))
    union
    select d.organization_id from public.donations d
    where p_organization_id is null and d.gateway_payment_id = any (private.gateway_id_forms(p_payment_id))
    union
    select r.organization_id from public.donation_refunds r
    where p_organization_id is null and r.gateway_payment_id = any (private.gateway_id_forms(p_payment_id))
  )
  select s.organization_id, t.secret
  from candidates c
  join public.organization_settings s on s.organization_id = c.id
  cross join lateral (
    select case when p_provider = 'payments' then coalesce(nullif(s.payments_webhook_secret, ''), s.webhook_secret)
                else s.webhook_secret end as secret
  ) t
  where t.secret is not null and t.secret <> ''
  -- Every candidate, in a fixed order: what other organizations store (a copied subscription id, say)
  -- can add candidates but never push out the one whose secret signed the delivery.
  order by s.organization_id
$$;

-- Refund arithmetic ---------------------------------------------------------------------------------------
-- A payment and its refund may be applied at the same moment by two deliveries. Under read committed
-- neither would see the other's uncommitted row, and the refund would stay unattached. Both paths take
-- this lock on (organization, payment id) first, so the second waits and then sees the first.
create function private.lock_gateway_payment(p_organization_id uuid, p_payment_id text)
returns void
language sql
set search_path = ''
as $$
  select pg_advisory_xact_lock(hashtextextended(p_organization_id::text || '/' || p_payment_id, 7304))
$$;

-- Attaches the refunds of a payment to its donation and derives the refunded amount and state from them.
create function private.settle_donation_refunds(p_organization_id uuid, p_payment_id text)
returns void
language plpgsql
set search_path = ''
as $$
declare
  d public.donations%rowtype;
  total bigint;
  state text;
  -- The payment as sent, and as stored once its payer was erased.
  forms text[] := private.gateway_id_forms(p_payment_id);
begin
  select * into d from public.donations
  where organization_id = p_organization_id and gateway_payment_id = any (forms)
  for update;
  if not found then
    return;
  end if;
  if exists (
    select 1 from public.donation_refunds r
    where r.organization_id = p_organization_id and r.gateway_payment_id = any (forms)
      and r.currency <> d.currency
  ) then
    raise exception 'refund currency differs from donation currency % for payment %', d.currency, p_payment_id
      using errcode = '22023';
  end if;
  update public.donation_refunds r set donation_id = d.id
  where r.organization_id = p_organization_id and r.gateway_payment_id = any (forms)
    and r.donation_id is null;
  select coalesce(sum(r.amount_minor), 0) into total
  from public.donation_refunds r
  where r.organization_id = p_organization_id and r.gateway_payment_id = any (forms)
    and r.status = 'processed';
  if total > d.amount_minor then
    -- Amounts in minor units with their currency: the settings page says it as money.
    raise exception 'refunds (% %) exceed the donation (% %) for payment %', total, d.currency, d.amount_minor,
      d.currency, p_payment_id using errcode = '22023';
  end if;
  state := case when total = 0 then 'none' when total < d.amount_minor then 'partial' else 'refunded' end;
  update public.donations set refunded_minor = total, refund_status = state
  where id = d.id and (refunded_minor, refund_status) is distinct from (total, state);
end;
$$;

-- Records a provider payment as a donation exactly once (unique per organization and payment id), links
-- it to its recurring donation when known, and settles refunds that arrived before it. Returns whether
-- the donation was new.
create function private.record_gateway_payment(
  p_organization_id uuid,
  p_recurring_donation_id uuid,
  p_member_id uuid,
  p_payment jsonb
) returns boolean
language plpgsql
set search_path = ''
as $$
declare
  inserted boolean;
  payment_id text := p_payment ->> 'id';
begin
  perform private.lock_gateway_payment(p_organization_id, payment_id);
  -- Recorded before, for a payer since erased: known, and left as it is.
  if exists (select 1 from public.donations d
             where d.organization_id = p_organization_id
               and d.gateway_payment_id = private.erased_gateway_id(payment_id)) then
    return false;
  end if;
  insert into public.donations as d (
    organization_id, member_id, recurring_donation_id, amount_minor, currency, source,
    gateway_payment_id, donated_at
  ) values (
    p_organization_id, p_member_id, p_recurring_donation_id, (p_payment ->> 'amount_minor')::bigint,
    p_payment ->> 'currency', case when p_recurring_donation_id is null then 'online' else 'recurring' end,
    payment_id, coalesce((p_payment ->> 'paid_at')::timestamptz, now())
  )
  on conflict (organization_id, gateway_payment_id) do nothing;
  inserted := found;
  if not inserted and p_recurring_donation_id is not null then
    -- Known already as a one-off card payment: the subscription charge says it is recurring.
    update public.donations
    set recurring_donation_id = p_recurring_donation_id, source = 'recurring',
        member_id = coalesce(member_id, p_member_id)
    where organization_id = p_organization_id and gateway_payment_id = payment_id
      and recurring_donation_id is null;
  end if;
  -- Only a payment with refunds waiting (or already attached) needs its refund arithmetic redone.
  if exists (
    select 1 from public.donation_refunds r
    where r.organization_id = p_organization_id and r.gateway_payment_id = payment_id
  ) then
    perform private.settle_donation_refunds(p_organization_id, payment_id);
  end if;
  return inserted;
end;
$$;

-- Applying one event ---------------------------------------------------------------------------------------
-- A subscription event. p_change: {subscription_id, status, occurred_at, payment_failed, payment?}.
-- Rules: cancelled and completed are final; an event older than the newest applied one changes no state;
-- pending/authenticated are only reachable from pending/authenticated (a late "created" never undoes
-- "active", even when both carry the same second). A charge records its donation whatever the order.
create function private.apply_subscription_event(p_organization_id uuid, p_change jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  rd public.recurring_donations%rowtype;
  target text := p_change ->> 'status';
  occurred timestamptz := (p_change ->> 'occurred_at')::timestamptz;
  failed boolean := coalesce((p_change ->> 'payment_failed')::boolean, false);
  payment jsonb := p_change -> 'payment';
  moves boolean;
  donation_created boolean;
begin
  select * into rd from public.recurring_donations
  where organization_id = p_organization_id
    and gateway_subscription_id = any (private.gateway_id_forms(p_change ->> 'subscription_id'))
  for update;
  if not found then
    return jsonb_build_object('outcome', 'unmatched');
  end if;

  -- An event at the same instant as the newest applied one may still move the state (the rules above
  -- decide), but it never counts a failure again: a second copy of one failure is not a second failure.
  moves := rd.status not in ('cancelled', 'completed')
    and (rd.last_event_at is null or occurred >= rd.last_event_at)
    and (target not in ('pending', 'authenticated')
         or (rd.status = 'pending') or (rd.status = 'authenticated' and target = 'authenticated'));

  if moves then
    update public.recurring_donations
    set status = target,
        last_event_at = greatest(coalesce(last_event_at, occurred), occurred),
        failure_count = case when failed and (rd.last_event_at is null or occurred > rd.last_event_at)
                             then failure_count + 1
                             when payment is not null then 0 else failure_count end,
        last_charged_at = case when payment is not null
                               then greatest(coalesce(last_charged_at, occurred), occurred)
                               else last_charged_at end
    where id = rd.id;
  end if;

  if payment is not null then
    donation_created := private.record_gateway_payment(p_organization_id, rd.id, rd.member_id, payment);
  end if;

  return jsonb_build_object(
    'outcome', case when moves then 'applied' else 'stale' end,
    'recurring_donation_id', rd.id,
    'status', case when moves then target else rd.status end,
    'donation_created', donation_created
  );
end;
$$;

-- A refund event. p_change: {refund: {id, payment_id, amount_minor, currency, status, occurred_at}}.
-- The refund row moves pending -> processed | failed only; the donation's refunded amount is re-derived.
create function private.apply_refund_event(p_organization_id uuid, p_change jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  r jsonb := p_change -> 'refund';
  row_status text;
  has_donation boolean;
begin
  perform private.lock_gateway_payment(p_organization_id, r ->> 'payment_id');
  -- A refund of an erased payer's donation, recorded before: known, and left as it is.
  select x.status into row_status from public.donation_refunds x
  where x.organization_id = p_organization_id and x.gateway_refund_id = private.erased_gateway_id(r ->> 'id');
  if row_status is not null then
    return jsonb_build_object('outcome', 'applied', 'refund_status', row_status, 'donation_known', true);
  end if;
  insert into public.donation_refunds as x (
    organization_id, gateway_refund_id, gateway_payment_id, amount_minor, currency, status, last_event_at
  ) values (
    p_organization_id, r ->> 'id', r ->> 'payment_id', (r ->> 'amount_minor')::bigint, r ->> 'currency',
    r ->> 'status', (r ->> 'occurred_at')::timestamptz
  )
  on conflict (organization_id, gateway_refund_id) do update
  set status = excluded.status,
      amount_minor = excluded.amount_minor,
      last_event_at = excluded.last_event_at
  where x.status = 'pending' and excluded.status <> 'pending'
  returning x.status into row_status;
  if row_status is null then
    select status into row_status from public.donation_refunds
    where organization_id = p_organization_id and gateway_refund_id = r ->> 'id';
  end if;

  perform private.settle_donation_refunds(p_organization_id, r ->> 'payment_id');
  select exists (
    select 1 from public.donations
    where organization_id = p_organization_id
      and gateway_payment_id = any (private.gateway_id_forms(r ->> 'payment_id'))
  ) into has_donation;

  return jsonb_build_object(
    'outcome', 'applied',
    'refund_status', row_status,
    -- false: the payment is not known yet; the refund waits and is settled when the payment arrives.
    'donation_known', has_donation
  );
end;
$$;

-- A captured card payment. p_change: {payment: {id, amount_minor, currency, paid_at}, subscription_id?}.
-- With a subscription id it is a recurring-payment notification: linked to that recurring donation, and
-- unmatched (replayable) while the recurring donation does not exist.
create function private.apply_payment_event(p_organization_id uuid, p_change jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  rd public.recurring_donations%rowtype;
  created boolean;
begin
  if p_change ->> 'subscription_id' is not null then
    select * into rd from public.recurring_donations
    where organization_id = p_organization_id
      and gateway_subscription_id = any (private.gateway_id_forms(p_change ->> 'subscription_id'));
    if not found then
      return jsonb_build_object('outcome', 'unmatched');
    end if;
  end if;
  created := private.record_gateway_payment(p_organization_id, rd.id, rd.member_id, p_change -> 'payment');
  return jsonb_build_object('outcome', 'applied', 'donation_created', created, 'recurring_donation_id', rd.id);
end;
$$;

-- The members a payment delivery concerns: the links of the subscription and of the payment it names
-- (after applying, so a payment it just recorded counts). An event we ignore names them too.
create function private.payment_webhook_members(p_organization_id uuid, p_change jsonb)
returns uuid[]
language sql stable
set search_path = ''
as $$
  select private.member_links_add('{}', array(
    select x from public.recurring_donations rd, unnest(rd.member_ids) x
    where rd.organization_id = p_organization_id
      and rd.gateway_subscription_id = any (private.gateway_id_forms(p_change ->> 'subscription_id'))
    union all
    select x from public.donations d, unnest(d.member_ids) x
    where d.organization_id = p_organization_id
      and d.gateway_payment_id = any (private.gateway_id_forms(coalesce(
            p_change #>> '{payment,id}', p_change #>> '{refund,payment_id}', p_change ->> 'payment_id')))))
$$;

-- Applies one logged payment delivery, at most once (private.claim_inbound_webhook locks the log row and
-- answers a processed row as a duplicate); the change is applied and the row marked in the same
-- statement. If applying raises, nothing of it stays and the caller records the failure with
-- private.mark_inbound_webhook_failed.
create function private.process_payment_webhook(p_log_id uuid, p_change jsonb)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  log public.inbound_webhook_log%rowtype;
  applied jsonb;
begin
  log := private.claim_inbound_webhook(p_log_id);
  if log.status = 'processed' then
    return jsonb_build_object('outcome', 'duplicate');
  end if;
  applied := case p_change ->> 'kind'
    when 'subscription' then private.apply_subscription_event(log.organization_id, p_change)
    when 'refund' then private.apply_refund_event(log.organization_id, p_change)
    when 'payment' then private.apply_payment_event(log.organization_id, p_change)
    -- A verified event that changes nothing we keep (subscription.updated, payment.authorized, ...).
    when 'none' then jsonb_build_object('outcome', 'ignored')
  end;
  if applied is null then
    raise exception 'unknown change kind %', p_change ->> 'kind' using errcode = '22023';
  end if;
  perform private.link_inbound_webhook(p_log_id, private.payment_webhook_members(log.organization_id, p_change));
  perform private.finish_inbound_webhook(p_log_id, applied, applied ->> 'outcome' = 'unmatched');
  return applied;
end;
$$;

-- Server-side only: these read secrets and write money rows. Postgres grants EXECUTE to PUBLIC by
-- default, and `authenticated` has USAGE on schema private, so take it back explicitly.
revoke all on function private.inbound_webhook_targets(text, uuid, text, text),
  private.lock_gateway_payment(uuid, text), private.settle_donation_refunds(uuid, text),
  private.record_gateway_payment(uuid, uuid, uuid, jsonb), private.apply_subscription_event(uuid, jsonb),
  private.apply_refund_event(uuid, jsonb), private.apply_payment_event(uuid, jsonb),
  private.process_payment_webhook(uuid, jsonb), private.erased_gateway_id(text), private.gateway_id_forms(text),
  private.payment_webhook_members(uuid, jsonb) from public, anon, authenticated;
