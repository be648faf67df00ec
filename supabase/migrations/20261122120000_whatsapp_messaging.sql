-- WhatsApp messaging: the gateway numbers an organization owns, one thread per contact, the messages in
-- it and the delivery receipts the gateway reports for them.
--
-- The messaging-webhook function writes here as the server (it bypasses RLS); users read through the
-- tenancy policies at the end of this file. Every reference between these tables carries
-- organization_id in a composite foreign key, so a row can never point into another organization.

-- Gateway accounts ----------------------------------------------------------------------------------
-- One row per WhatsApp business phone number an organization registered. phone_number_id is the
-- gateway's id for the number, the routing key of every inbound webhook. It is unique per organization
-- only: anyone may type any id, so a global unique key would tell one organization that another holds a
-- number, and let whoever registers first keep the owner out. A body for the id belongs to the
-- registrations whose app secret signed it (messaging-webhook/accounts.ts), so a registration with the
-- wrong secret receives nothing. See docs/whatsapp.md#who-a-number-belongs-to
create table public.messaging_accounts (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  phone_number_id text not null check (phone_number_id ~ '^[0-9A-Za-z_.-]{1,64}$'),
  display_phone_number text check (length(display_phone_number) <= 40),
  -- The first time a body for this number verified under this registration's app secret: the
  -- connection works. Of several organizations' registrations that verify one body (they hold the same
  -- app secret), the one verified first receives it.
  verified_at timestamptz,
  -- The last time the gateway's subscription handshake presented this registration's verify token.
  handshake_at timestamptz,
  -- The last verified body for this number (messages or receipts); refreshed at most once a minute.
  last_received_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, phone_number_id),
  unique (organization_id, id)
);
-- Routing: every registration of the ids a body names.
create index messaging_accounts_phone_number_idx on public.messaging_accounts (phone_number_id);
-- The country an organization's members' numbers are written in when they lack a country code: inbound
-- senders are matched to such numbers through it (private.whatsapp_upsert_thread). ISO 3166-1 alpha-2.
alter table public.organization_settings add column default_country text
  check (default_country ~ '^[A-Z]{2}$');
grant select (default_country), insert (default_country), update (default_country)
  on public.organization_settings to config_api;
-- The inbound log (20261122105000) keeps each WhatsApp payload under the account it came in for.
alter table public.inbound_webhook_log add constraint inbound_webhook_log_account_fkey
  foreign key (organization_id, account_id) references public.messaging_accounts (organization_id, id)
  on delete set null (account_id);

-- The secrets of an account live apart from it, in a table with row-level security on and no policy
-- for any user role: only the server (which bypasses RLS) can read them. A future `grant select` on
-- messaging_accounts can therefore never expose a secret.
--   app_secret   keys the HMAC-SHA256 in x-hub-signature-256 of every POST
--   verify_token what the gateway presents in the GET subscription handshake
create table public.messaging_account_secrets (
  account_id uuid primary key,
  organization_id uuid not null,
  app_secret text not null check (length(app_secret) >= 8),
  verify_token text not null check (length(verify_token) >= 8),
  -- The handshake looks an account up by this digest and then compares the token itself in constant
  -- time, so the index lookup never leaks how much of a guessed token was right.
  verify_token_sha256 bytea not null,
  updated_at timestamptz not null default now(),
  foreign key (organization_id, account_id)
    references public.messaging_accounts (organization_id, id) on delete cascade
);
-- Accounts under one gateway app share its verify token, so the digest is not unique.
create index messaging_account_secrets_verify_idx on public.messaging_account_secrets (verify_token_sha256);

create function private.hash_verify_token() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.verify_token_sha256 := pg_catalog.sha256(pg_catalog.convert_to(new.verify_token, 'UTF8'));
  new.updated_at := now();
  return new;
end;
$$;
create trigger messaging_account_secrets_hash
  before insert or update of verify_token, app_secret on public.messaging_account_secrets
  for each row execute function private.hash_verify_token();

-- Admins set or rotate the secrets of an account of their active organization through this function,
-- in the settings area (the configuration API's role only); nobody can read them back.
create function public.set_messaging_account_secrets(account_id uuid, app_secret text, verify_token text)
returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
begin
  if org is null or not exists (
    select 1 from public.messaging_accounts a
    where a.id = set_messaging_account_secrets.account_id and a.organization_id = org
  ) then
    raise exception 'not an admin of this account''s organization' using errcode = '42501';
  end if;
  insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
  values (set_messaging_account_secrets.account_id, org, set_messaging_account_secrets.app_secret,
          set_messaging_account_secrets.verify_token)
  on conflict on constraint messaging_account_secrets_pkey do update
    set app_secret = excluded.app_secret, verify_token = excluded.verify_token;
end;
$$;
revoke execute on function public.set_messaging_account_secrets(uuid, text, text) from public, anon, authenticated;
grant execute on function public.set_messaging_account_secrets(uuid, text, text) to config_api, service_role;

-- Conversations -------------------------------------------------------------------------------------
-- One thread per organization and contact. A contact is known by its phone number (digits only, no
-- leading '+', the same normalization as members.primary_phone_normalized) or, for senders the gateway
-- identifies only by a business-scoped user id (WhatsApp usernames), by that id.
create table public.whatsapp_conversations (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  contact_phone text check (contact_phone ~ '^[0-9]{1,20}$'),
  contact_user_id text check (length(contact_user_id) between 1 and 200),
  contact_name text,
  member_id uuid,
  -- How member_id was decided: 'matched' (exactly one member has this number), 'ambiguous' (several
  -- do, so none is attached), 'none' (no member has it, or no phone is known), 'manual' (set by staff).
  member_match text not null default 'none' check (member_match in ('matched', 'ambiguous', 'none', 'manual')),
  -- Who the row concerns: see "Who a thread, a message and a receipt concern" below.
  member_ids uuid[] not null default '{}',
  last_message_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (contact_phone is not null or contact_user_id is not null),
  -- The upsert key: two first messages from one number can only ever create one thread.
  unique (organization_id, contact_phone),
  unique (organization_id, id),
  foreign key (organization_id, member_id) references public.members (organization_id, id)
    on delete set null (member_id)
);
-- Phone-less contacts are keyed by their user id (the upsert key for them).
create unique index whatsapp_conversations_user_key on public.whatsapp_conversations (organization_id, contact_user_id)
  where contact_phone is null;
create index whatsapp_conversations_user_idx on public.whatsapp_conversations (organization_id, contact_user_id)
  where contact_user_id is not null;
create index whatsapp_conversations_recent_idx on public.whatsapp_conversations (organization_id, last_message_at desc);
create index whatsapp_conversations_member_idx on public.whatsapp_conversations (member_id) where member_id is not null;

-- Messages ------------------------------------------------------------------------------------------
-- status: 'received' for inbound messages; outbound ones go pending -> sent -> delivered -> read, or
-- failed (see private.whatsapp_status_rank).
create table public.whatsapp_messages (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  conversation_id uuid not null,
  account_id uuid,
  provider_message_id text not null check (length(provider_message_id) between 1 and 512),
  direction text not null check (direction in ('inbound', 'outbound')),
  -- The gateway's message type (text, image, audio, video, document, sticker, location, contacts,
  -- interactive, button, reaction, system, unsupported, ...) kept as sent, and the type's own object.
  type text not null,
  text text,
  content jsonb,
  status text not null,
  error jsonb,
  sender_phone text,
  sender_user_id text,
  -- When the gateway says the message was sent (inbound) or when it was created (outbound).
  sent_at timestamptz not null default now(),
  status_updated_at timestamptz,
  -- This message's part of the webhook (message, contact, metadata): never the whole body, which may
  -- carry other organizations' messages.
  raw jsonb,
  -- Who the row concerns: see "Who a thread, a message and a receipt concern" below.
  member_ids uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  -- Redeliveries and duplicates of one message are stored once.
  unique (organization_id, provider_message_id),
  foreign key (organization_id, conversation_id)
    references public.whatsapp_conversations (organization_id, id) on delete cascade,
  foreign key (organization_id, account_id)
    references public.messaging_accounts (organization_id, id) on delete set null (account_id)
);
create index whatsapp_messages_conversation_idx on public.whatsapp_messages (conversation_id, sent_at);
-- (account_id, created_at): a number's newest message for the Connections page, and the foreign key.
create index whatsapp_messages_account_idx on public.whatsapp_messages (account_id, created_at desc);

-- Delivery receipts -----------------------------------------------------------------------------------
-- Every distinct receipt the gateway reports, kept as the message's delivery history. A receipt can
-- arrive before the outbound message row it belongs to is written (the sender stores the row after the
-- gateway accepted it, the receipt may be faster): it waits here and is folded into the message when
-- that row is inserted (trigger below), so no receipt is lost.
create table public.whatsapp_message_receipts (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  provider_message_id text not null,
  status text not null check (length(status) between 1 and 40),
  occurred_at timestamptz not null,
  recipient_phone text,
  recipient_user_id text,
  errors jsonb,
  raw jsonb,
  -- Who the row concerns: see "Who a thread, a message and a receipt concern" below.
  member_ids uuid[] not null default '{}',
  received_at timestamptz not null default now(),
  -- A redelivered receipt is the same fact: recorded once.
  unique (organization_id, provider_message_id, status)
);

-- The forward-only order of delivery states. failed outranks sent (a message that was sent can still
-- fail) but not delivered or read, which prove the message arrived. Unknown states rank null and never
-- move a message.
create function private.whatsapp_status_rank(status text) returns int
language sql immutable
set search_path = ''
as $$
  select case status
    when 'pending' then 0
    when 'sent' then 1
    when 'failed' then 2
    when 'delivered' then 3
    when 'read' then 4
  end
$$;

-- Receipts and the outbound row they belong to meet under one lock per (organization, message id),
-- so whichever commits second sees the other: the receipt path updates the row if it exists, the
-- insert trigger picks up receipts that arrived first.
create function private.lock_whatsapp_message(org uuid, provider_message_id text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_catalog.pg_advisory_xact_lock(
    pg_catalog.hashtextextended(org::text || '/' || provider_message_id, 7123))
$$;

-- security definer: staff recording an outbound message need neither the lock function nor the receipts
-- of other organizations; new.organization_id is checked by the insert policy.
create function private.apply_early_receipts() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  best record;
begin
  perform private.lock_whatsapp_message(new.organization_id, new.provider_message_id);
  select r.status, r.occurred_at, r.errors into best
  from public.whatsapp_message_receipts r
  where r.organization_id = new.organization_id and r.provider_message_id = new.provider_message_id
    and private.whatsapp_status_rank(r.status) is not null
  order by private.whatsapp_status_rank(r.status) desc
  limit 1;
  if best.status is not null
     and private.whatsapp_status_rank(best.status) > coalesce(private.whatsapp_status_rank(new.status), -1) then
    new.status := best.status;
    new.status_updated_at := best.occurred_at;
    if best.status = 'failed' then
      new.error := coalesce(new.error, best.errors);
    end if;
  end if;
  return new;
end;
$$;
create trigger whatsapp_messages_early_receipts
  before insert on public.whatsapp_messages
  for each row when (new.direction = 'outbound')
  execute function private.apply_early_receipts();

-- Who a thread, a message and a receipt concern ----------------------------------------------------------
-- (20261122100200_domain_core.sql, "Who a row concerns".) A thread: every member it was ever linked to
-- (matched by number, or by staff). A message: its thread's members when it was written, plus the new
-- thread's when it is moved to another; the thread takes the message's members too, so a thread's links
-- hold those of every message in it and erasure finds them all through the thread. A receipt: its
-- message's members, or those of its recipient's thread.
create index whatsapp_conversations_member_links_idx on public.whatsapp_conversations using gin (member_ids)
  where member_ids <> '{}';
create index whatsapp_message_receipts_member_links_idx on public.whatsapp_message_receipts
  using gin (member_ids) where member_ids <> '{}';

create trigger whatsapp_conversations_member_links
  before insert or update of member_id, member_ids on public.whatsapp_conversations
  for each row execute function private.link_member_id();

create function private.link_whatsapp_message() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  erasing uuid := private.erasing_member();
  thread_links uuid[];
  grown uuid[];
begin
  if tg_op = 'UPDATE' and erasing is not null then
    new.member_ids := array_remove(old.member_ids, erasing);
    return new;
  end if;
  perform private.refuse_user_links(case when tg_op = 'UPDATE' then old.member_ids end, new.member_ids);
  select coalesce(c.member_ids, '{}') into thread_links from public.whatsapp_conversations c
   where c.organization_id = new.organization_id and c.id = new.conversation_id;
  grown := private.member_links_grow(new.organization_id,
             case when tg_op = 'UPDATE' then old.member_ids else '{}' end, new.member_ids);
  -- The usual case: nothing the thread does not have already (its links are sorted and distinct).
  if thread_links @> grown then
    new.member_ids := thread_links;
    return new;
  end if;
  new.member_ids := private.member_links_add(grown, thread_links);
  update public.whatsapp_conversations c set member_ids = new.member_ids
   where c.organization_id = new.organization_id and c.id = new.conversation_id;
  return new;
end;
$$;
create trigger whatsapp_messages_member_links
  before insert or update of conversation_id, member_ids on public.whatsapp_messages
  for each row execute function private.link_whatsapp_message();

create function private.link_whatsapp_receipt() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  -- Three lookups, each on its own unique index (an OR of them would read the organization's threads).
  new.member_ids := private.member_links_add('{}', array(
    select x from public.whatsapp_messages m, unnest(m.member_ids) x
     where m.organization_id = new.organization_id and m.provider_message_id = new.provider_message_id
    union all
    select x from public.whatsapp_conversations c, unnest(c.member_ids) x
     where c.organization_id = new.organization_id and c.contact_phone = new.recipient_phone
    union all
    select x from public.whatsapp_conversations c, unnest(c.member_ids) x
     where new.recipient_phone is null and c.organization_id = new.organization_id
       and c.contact_user_id = new.recipient_user_id));
  return new;
end;
$$;
create trigger whatsapp_message_receipts_member_links before insert on public.whatsapp_message_receipts
  for each row execute function private.link_whatsapp_receipt();

-- Housekeeping triggers shared with the domain tables --------------------------------------------------
select private.create_tenant_triggers(t, t <> 'whatsapp_messages')
from unnest(array['messaging_accounts', 'whatsapp_conversations', 'whatsapp_messages']) t;

revoke all on function private.whatsapp_status_rank(text), private.lock_whatsapp_message(uuid, text),
  private.apply_early_receipts(), private.hash_verify_token(), private.link_whatsapp_message(),
  private.link_whatsapp_receipt() from public;
grant execute on function private.whatsapp_status_rank(text) to authenticated, service_role;

-- Row-level security ----------------------------------------------------------------------------------
-- Secrets: no policy for any user role, and no privilege either.
alter table public.messaging_account_secrets enable row level security;
revoke all on public.messaging_account_secrets from anon, authenticated;

-- messaging_accounts: everyone in the organization sees its numbers (the Data API too); admins register
-- and remove them in the settings area.
select private.create_tenant_policies('messaging_accounts', '{select}');
select private.create_admin_policies('messaging_accounts', '{insert,update,delete}');
grant insert (organization_id, phone_number_id, display_phone_number), update (phone_number_id, display_phone_number),
  delete on public.messaging_accounts to config_api;

-- Threads and messages: members of the active organization read and write them through either door
-- (staff link a thread to a member, record outbound messages); deleting is for admins.
select private.create_tenant_policies(t) from unnest(array['whatsapp_conversations', 'whatsapp_messages']) t;
-- Receipts are written by the server only; users read the history.
select private.create_tenant_policies('whatsapp_message_receipts', '{select}');
