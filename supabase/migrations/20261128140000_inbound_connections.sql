-- Inbound connections: what an organization's administrator sets up so that its providers can reach
-- it, through Settings > Integrations > Connections (the configuration API's /connections routes).
--   * the checkout and card-payment providers' secrets (organization_settings.webhook_secret and
--     payments_webhook_secret): set, replaced or removed, never read back; the page shows whether one
--     is set, its last four characters and since when;
--   * the organization's WhatsApp numbers: registered with the Meta app's secret and a verify token,
--     with whether the gateway's handshake arrived and whether a signed body verified.
-- Every function here is for the configuration API only (granted to config_api, which PostgREST cannot
-- become) and checks the caller itself: a live session of an admin of the active organization.
-- See docs/inbound-webhooks.md#connect-a-provider-in-the-settings-page

-- When each provider secret was last set -------------------------------------------------------------------
alter table public.organization_settings
  add column webhook_secret_set_at timestamptz,
  add column payments_webhook_secret_set_at timestamptz;

-- Stamped however the secret changes (the page, or an operator's SQL), so "set on" is never stale.
create function private.stamp_inbound_secrets() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' or new.webhook_secret is distinct from old.webhook_secret then
    new.webhook_secret_set_at := case when new.webhook_secret is null then null else now() end;
  end if;
  if tg_op = 'INSERT' or new.payments_webhook_secret is distinct from old.payments_webhook_secret then
    new.payments_webhook_secret_set_at := case when new.payments_webhook_secret is null then null else now() end;
  end if;
  return new;
end;
$$;
create trigger organization_settings_stamp_secrets
  before insert or update of webhook_secret, payments_webhook_secret on public.organization_settings
  for each row execute function private.stamp_inbound_secrets();

-- Who may change connections ---------------------------------------------------------------------------
-- The active organization when the caller is its admin with a live session; otherwise 42501. API keys
-- (no user, no session) never pass.
create function private.connections_admin_organization() returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
begin
  if org is null or not private.session_is_live() then
    raise exception 'only a signed-in administrator of the organization can manage its connections'
      using errcode = '42501';
  end if;
  return org;
end;
$$;

-- The shape every provider secret must have: what the HMAC is keyed with, so long enough not to be
-- guessed, and text a provider's dashboard takes (printable ASCII, no spaces).
create function private.inbound_secret_acceptable(secret text) returns boolean
language sql immutable
set search_path = ''
as $$ select secret ~ '^[!-~]+$' and length(secret) between 16 and 256 $$;

-- Refuses a value a connection's field cannot take, naming the field in the hint: the configuration API
-- shows the message at that field. A null passes unless `required`. Fields: phone_number_id,
-- display_phone_number, and the secrets (secret, app_secret, verify_token).
create function private.check_connection_field(field text, value text, required boolean default false)
returns void
language plpgsql immutable
set search_path = ''
as $$
declare
  problem text := case
    when value is null then case when required then 'is required' end
    when field = 'phone_number_id' then case when value !~ '^[0-9A-Za-z_.-]{1,64}$' then
      'must be the Phone number ID from Meta''s WhatsApp settings (digits, at most 64 characters)' end
    when field = 'display_phone_number' then case when value !~ '^[0-9 +().-]{1,40}$' then
      'must be a phone number of digits, spaces, +, ( ) . - (at most 40 characters)' end
    when not private.inbound_secret_acceptable(value) then 'must be 16 to 256 printable characters without spaces'
  end;
begin
  if problem is not null then
    raise exception '%', problem using errcode = '22023', hint = field;
  end if;
end;
$$;

-- Payment provider secrets -------------------------------------------------------------------------------
-- Whether each secret is set, its last four characters and when it was set; never the secret.
create function private.inbound_secrets()
returns table (provider text, secret_set boolean, secret_last4 text, set_at timestamptz)
language sql stable security definer
set search_path = ''
as $$
  select p.provider,
         p.secret is not null,
         case when p.secret is not null then right(p.secret, 4) end,
         p.set_at
  from (select private.connections_admin_organization() as org) c
  left join public.organization_settings s on s.organization_id = c.org
  cross join lateral (values
    ('checkout', s.webhook_secret, s.webhook_secret_set_at),
    ('payments', s.payments_webhook_secret, s.payments_webhook_secret_set_at)
  ) p (provider, secret, set_at)
$$;

-- Sets (or with null removes) one provider's secret of the caller's organization.
create function private.set_inbound_secret(p_provider text, p_secret text)
returns table (provider text, secret_set boolean, secret_last4 text, set_at timestamptz)
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.connections_admin_organization();
begin
  if p_provider is null or p_provider not in ('checkout', 'payments') then
    raise exception 'unknown provider %', left(p_provider, 40) using errcode = '22023', hint = 'provider';
  end if;
  perform private.check_connection_field('secret', p_secret);
  insert into public.organization_settings as s (organization_id, webhook_secret, payments_webhook_secret)
  values (org, case when p_provider = 'checkout' then p_secret end,
          case when p_provider = 'payments' then p_secret end)
  on conflict (organization_id) do update
    set webhook_secret = case when p_provider = 'checkout' then excluded.webhook_secret else s.webhook_secret end,
        payments_webhook_secret = case when p_provider = 'payments' then excluded.payments_webhook_secret
                                       else s.payments_webhook_secret end,
        updated_at = now();
  return query select * from private.inbound_secrets() i where i.provider = p_provider;
end;
$$;

-- WhatsApp numbers -----------------------------------------------------------------------------------------
-- How many numbers one organization may register: a church has a few; the limit bounds what a hostile
-- tenant adds to every body's routing (messaging-webhook/accounts.ts loads at most 64 per id).
create function private.whatsapp_numbers_limit() returns integer
language sql immutable
set search_path = ''
as $$ select 25 $$;

-- The caller's organization's numbers, with what the page shows of each: never a secret or a token,
-- only the app secret's last four characters; the newest message received, its sender cut to the last
-- four digits.
create function private.whatsapp_numbers()
returns table (
  id uuid, phone_number_id text, display_phone_number text, app_secret_last4 text,
  verified_at timestamptz, handshake_at timestamptz, last_received_at timestamptz,
  last_message_at timestamptz, last_message_type text, last_message_from text,
  created_at timestamptz, updated_at timestamptz
)
language sql stable security definer
set search_path = ''
as $$
  select a.id, a.phone_number_id, a.display_phone_number,
         case when s.app_secret is not null then right(s.app_secret, 4) end,
         a.verified_at, a.handshake_at, a.last_received_at,
         m.sent_at, m.type,
         case when m.sender_phone is not null then '…' || right(m.sender_phone, 4) end,
         a.created_at, a.updated_at
  from public.messaging_accounts a
  left join public.messaging_account_secrets s on s.account_id = a.id
  left join lateral (
    select wm.sent_at, wm.type, wm.sender_phone
    from public.whatsapp_messages wm
    where wm.account_id = a.id and wm.direction = 'inbound'
    order by wm.created_at desc
    limit 1
  ) m on true
  where a.organization_id = (select private.connections_admin_organization())
  order by a.created_at, a.id
$$;

-- Registers a number for the caller's organization. Whether another organization registered the same
-- id changes nothing here: the same row, the same answer (see the messaging_accounts comment).
create function private.register_whatsapp_number(
  p_phone_number_id text, p_display_phone_number text, p_app_secret text, p_verify_token text
) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.connections_admin_organization();
  account uuid;
begin
  perform private.check_connection_field('phone_number_id', p_phone_number_id, required => true);
  perform private.check_connection_field('display_phone_number', p_display_phone_number);
  perform private.check_connection_field('app_secret', p_app_secret, required => true);
  perform private.check_connection_field('verify_token', p_verify_token, required => true);
  -- Serializes this organization's registrations, so two at once cannot pass the limit together.
  perform 1 from public.organizations o where o.id = org for update;
  if exists (select 1 from public.messaging_accounts a
             where a.organization_id = org and a.phone_number_id = p_phone_number_id) then
    raise exception 'this organization has registered this number already' using errcode = '23505',
      hint = 'phone_number_id';
  end if;
  if (select count(*) from public.messaging_accounts a where a.organization_id = org)
     >= private.whatsapp_numbers_limit() then
    raise exception 'an organization can register at most % WhatsApp numbers; remove one first',
      private.whatsapp_numbers_limit() using errcode = '54000', hint = 'too_many_numbers';
  end if;
  insert into public.messaging_accounts (organization_id, phone_number_id, display_phone_number)
  values (org, p_phone_number_id, nullif(p_display_phone_number, ''))
  returning id into account;
  insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
  values (account, org, p_app_secret, p_verify_token);
  return account;
end;
$$;

-- Changes a number's display number and/or app secret (null: unchanged). A new app secret keeps the
-- registration's verified state: it is still the organization's number.
create function private.update_whatsapp_number(
  p_id uuid, p_display_phone_number text, p_change_display boolean, p_app_secret text
) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.connections_admin_organization();
begin
  perform private.check_connection_field('display_phone_number', p_display_phone_number);
  perform private.check_connection_field('app_secret', p_app_secret);
  update public.messaging_accounts a
  set display_phone_number = case when p_change_display then nullif(p_display_phone_number, '')
                                  else a.display_phone_number end
  where a.id = p_id and a.organization_id = org;
  if not found then
    raise exception 'No such WhatsApp number' using errcode = 'P0002';
  end if;
  if p_app_secret is not null then
    update public.messaging_account_secrets s set app_secret = p_app_secret
    where s.account_id = p_id and s.organization_id = org;
  end if;
end;
$$;

-- Replaces a number's verify token. The handshake has to happen again with the new one.
create function private.set_whatsapp_verify_token(p_id uuid, p_verify_token text) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.connections_admin_organization();
begin
  perform private.check_connection_field('verify_token', p_verify_token, required => true);
  update public.messaging_accounts a set handshake_at = null
  where a.id = p_id and a.organization_id = org;
  if not found then
    raise exception 'No such WhatsApp number' using errcode = 'P0002';
  end if;
  update public.messaging_account_secrets s set verify_token = p_verify_token
  where s.account_id = p_id and s.organization_id = org;
end;
$$;

-- Removes a number. Its threads and messages stay (their account_id becomes null); bodies for it are
-- then answered 401 like those for any id this organization does not hold.
create function private.delete_whatsapp_number(p_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  delete from public.messaging_accounts a
  where a.id = p_id and a.organization_id = private.connections_admin_organization();
  if not found then
    raise exception 'No such WhatsApp number' using errcode = 'P0002';
  end if;
end;
$$;

-- For messaging-webhook (the server) ------------------------------------------------------------------------
-- A body that verified under no registration is counted in the log of every organization that holds one
-- of the ids it names (each once, at most 64), in one statement: what an organization sees of refused
-- bodies for its number never depends on whether another organization registered it too.
create function private.log_refused_webhooks(
  p_organization_ids uuid[], p_provider text, p_status text, p_reason text, p_bytes bigint
) returns void
language sql
set search_path = ''
as $$
  select count(private.log_refused_webhook(o, p_provider, p_status, p_reason, p_bytes))
  from (select distinct o from unnest(p_organization_ids[1:64]) o) x
$$;

revoke all on function private.stamp_inbound_secrets(), private.connections_admin_organization(),
  private.inbound_secret_acceptable(text), private.check_connection_field(text, text, boolean), private.inbound_secrets(), private.set_inbound_secret(text, text),
  private.whatsapp_numbers_limit(), private.whatsapp_numbers(),
  private.register_whatsapp_number(text, text, text, text), private.update_whatsapp_number(uuid, text, boolean, text),
  private.set_whatsapp_verify_token(uuid, text), private.delete_whatsapp_number(uuid),
  private.log_refused_webhooks(uuid[], text, text, text, bigint)
  from public, anon, authenticated;
grant execute on function private.inbound_secrets(), private.set_inbound_secret(text, text),
  private.whatsapp_numbers(), private.register_whatsapp_number(text, text, text, text),
  private.update_whatsapp_number(uuid, text, boolean, text), private.set_whatsapp_verify_token(uuid, text),
  private.delete_whatsapp_number(uuid)
  to config_api;
grant execute on function private.log_refused_webhooks(uuid[], text, text, text, bigint) to service_role;
