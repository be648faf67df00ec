-- The audit log: every change an organization's admins, staff, API keys, the platform's administrators,
-- an operator or one of the service's own rules makes to an organization's settings and people, and the
-- platform's own changes of who administers it. Who (as they were then), when, what (the changed fields
-- before and after, never a secret), and from where (the client's address and user agent, as the
-- configuration API received them).
--
-- One recorder, private.audit_record(), called in the transaction of the change it records, so neither
-- exists without the other: by row triggers on the settings tables (whatever route, function or SQL
-- makes the change), and by the operations that change no settings row (a reveal, a recovery, a replay,
-- a redelivery, an erasure, a suspension). private.audit() is the same recorder for the configuration
-- API's own operations; the actor comes from the request (its claims and request.headers, set by
-- supabase/functions/webhooks/actor.ts), never from the caller's arguments.
--
-- Read by the organization's admins (GET /webhooks/audit-log) and the platform console
-- (GET /webhooks/platform/audit-log); staff, API keys and the Data API read nothing. Nobody alters an
-- entry; only the retention job (a year) and the organization's own deletion remove them.
-- See docs/audit-log.md

create table public.audit_log (
  id uuid primary key default gen_random_uuid(),
  -- The organization affected; null for changes to platform administrators, which concern none.
  organization_id uuid references public.organizations (id) on delete cascade,
  action text not null check (action in (
    'organization.created', 'organization.updated', 'organization.suspended', 'organization.resumed',
    'log_retention.changed',
    'platform_admin.granted', 'platform_admin.revoked', 'superadmin.granted', 'superadmin.revoked',
    'invitation.sent', 'invitation.resent', 'invitation.withdrawn', 'invitation.accepted',
    'member.joined', 'member.role_changed', 'member.removed', 'member.left', 'member.erasure_requested',
    'endpoint.created', 'endpoint.updated', 'endpoint.enabled', 'endpoint.disabled', 'endpoint.deleted',
    'endpoint.secret_rotated', 'endpoint.secret_revealed', 'endpoint.recovered',
    'delivery.redelivered', 'deliveries.retried',
    'api_key.created', 'api_key.revoked',
    'connection.secret_set', 'connection.secret_removed',
    'whatsapp_number.registered', 'whatsapp_number.updated', 'whatsapp_number.app_secret_replaced',
    'whatsapp_number.verify_token_replaced', 'whatsapp_number.removed',
    'inbound.replayed', 'inbound.replayed_failed')),
  -- Who: an administrator or staff member of the organization, a signed-in person who is not (yet, or
  -- any more) a member (accepting an invitation, leaving), an API key, a platform administrator, an
  -- operator with database access (no account here), or a rule of the service (actor_label says which:
  -- "every attempt failed for 5 days: …"). The e-mail, key name and ids as they were: no foreign keys,
  -- so an entry outlives the account or key it names and is never rewritten.
  actor_kind text not null check (actor_kind in ('admin', 'staff', 'person', 'api_key', 'platform_admin',
                                                 'operator', 'rule')),
  actor_user_id uuid,
  actor_email text,
  actor_api_key_id uuid,
  actor_label text check (length(actor_label) <= 500),
  -- Whom it concerned (a member, an invitee, a platform administrator), as they were.
  subject_user_id uuid,
  subject_email text,
  -- What it concerned: endpoint, invitation, membership, api_key, connection, whatsapp_number, delivery,
  -- inbound_log, member, organization; and its id (a provider's name for a connection).
  target_type text,
  target_id text check (length(target_id) <= 200),
  -- In the acting person's words, or why the service did it (shown to the organization's admins).
  reason text check (reason is null or (length(reason) <= 500 and reason !~ '[[:cntrl:]]')),
  -- The changed fields only, before and after; never a secret, token, key or header value.
  before jsonb,
  after jsonb,
  -- Counts at the time (deliveries released on resumption, deliveries recovered, ...).
  details jsonb not null default '{}'::jsonb,
  ip text check (length(ip) <= 64),
  user_agent text check (length(user_agent) <= 500),
  created_at timestamptz not null default now(),
  check ((organization_id is null) = (action ~ '^(platform_admin|superadmin)\.'))
);
-- An organization's entries newest first, and filtered by action, kind of actor, the actor's e-mail or
-- key name, or the actor's id (its admins' page: each filter reads only matching index entries, however
-- many entries a tenant has); every entry newest first (the platform console, and the retention job's
-- oldest-first scan).
create index audit_log_organization_idx on public.audit_log (organization_id, created_at desc, id desc);
create index audit_log_organization_action_idx on public.audit_log (organization_id, action, created_at desc, id desc);
create index audit_log_organization_kind_idx on public.audit_log (organization_id, actor_kind, created_at desc, id desc);
create index audit_log_organization_actor_idx
  on public.audit_log (organization_id, lower(coalesce(actor_email, actor_label)), created_at desc, id desc);
create index audit_log_organization_actor_id_idx
  on public.audit_log (organization_id, coalesce(actor_user_id, actor_api_key_id), created_at desc, id desc);
create index audit_log_created_idx on public.audit_log (created_at desc, id desc);
-- The entries of one thing (an invitation whose address an erasure removes).
create index audit_log_target_idx on public.audit_log (organization_id, target_type, target_id);

select private.create_tenant_triggers('audit_log');

-- Nobody alters an entry, but an erasure takes a person's address out of it (private.audit_erase_invitation
-- below: the e-mail fields only, nothing else of the entry). Deletions: the retention job (it says so
-- for its own transaction), and the cascade of the organization's own deletion (its row is gone by then).
create function private.audit_log_append_only() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' and current_setting('audit.erasure', true) = 'on'
     and to_jsonb(new) - '{before,after,subject_email}'::text[] = to_jsonb(old) - '{before,after,subject_email}'::text[] then
    return new;
  end if;
  if tg_op = 'DELETE' and (current_setting('audit.retention', true) = 'on'
     or (old.organization_id is not null
         and not exists (select 1 from public.organizations o where o.id = old.organization_id))) then
    return old;
  end if;
  raise exception 'audit log entries cannot be changed or deleted' using errcode = '42501';
end;
$$;
create trigger audit_log_append_only before update or delete on public.audit_log
  for each row execute function private.audit_log_append_only();

-- The organization's admins read its entries, through the configuration API only: no user role writes,
-- and the Data API's roles read nothing (staff see none either: the entries name people's addresses,
-- what they changed and where from, which is the administrators' business).
alter table public.audit_log enable row level security;
revoke all on public.audit_log from public, anon, authenticated, config_api;
grant select on public.audit_log to config_api;
create policy audit_log_admin_select on public.audit_log
  for select to config_api
  using (organization_id = (select private.admin_organization_id()));

-- Recording ---------------------------------------------------------------------------------------------
-- The fields of a row that an entry may show: those named in `keep`; of custom request headers
-- (`headers`, an object of name -> value or an array of {name, value}, or an endpoint's `custom_headers`,
-- [{name, value_hint}]) only the names, when there are any.
create function private.audit_fields(row_json jsonb, keep text[]) returns jsonb
language sql immutable
set search_path = ''
as $$
  select coalesce((select jsonb_object_agg(k, v) from jsonb_each(row_json) e(k, v) where k = any (keep)), '{}')
    || case when jsonb_typeof(hj) in ('object', 'array') and hj not in ('[]', '{}') then
         jsonb_build_object('header_names', coalesce((
           select jsonb_agg(n order by n) from (
             select jsonb_object_keys(hj) as n where jsonb_typeof(hj) = 'object'
             union all
             select h ->> 'name' from jsonb_array_elements(case when jsonb_typeof(hj) = 'array' then hj else '[]' end) h
           ) names where n is not null), '[]'))
       else '{}' end
  from (select coalesce(row_json -> 'custom_headers', row_json -> 'headers') as hj) x
$$;

-- Of two field sets, the fields that differ: [before, after].
create function private.audit_changed(before_json jsonb, after_json jsonb) returns jsonb[]
language sql immutable
set search_path = ''
as $$
  select array[
    coalesce((select jsonb_object_agg(k, before_json -> k) from jsonb_object_keys(before_json || after_json) k
              where (before_json -> k) is distinct from (after_json -> k)), '{}'),
    coalesce((select jsonb_object_agg(k, after_json -> k) from jsonb_object_keys(before_json || after_json) k
              where (before_json -> k) is distinct from (after_json -> k)), '{}')]
$$;

-- Writes one entry for `org` with the actor of the current request: the API key its claims name (the
-- configuration API sets them only for a key it verified), else the person its claims name (their role
-- in `org` now, or `as_kind` where the caller knows better: a platform administrator's console action,
-- an admin stepping down), else `rule` if one is given (a change the service made by itself), else the
-- operator at the database. The client's address and user agent come from request.headers. An
-- organization being deleted records nothing (its entries go with it). Returns the entry's id.
create function private.audit_record(
  org uuid, action text, target_type text default null, target_id text default null,
  before jsonb default null, after jsonb default null, reason text default null, details jsonb default '{}',
  subject uuid default null, as_kind text default null, rule text default null
) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  claims jsonb := coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb;
  headers jsonb := coalesce(nullif(current_setting('request.headers', true), ''), '{}')::jsonb;
  uid uuid;
  key_id uuid;
  kind text;
  label text;
  email text;
  address text := trim(split_part(headers ->> 'x-forwarded-for', ',', 1));
  entry uuid;
begin
  if org is not null and not exists (select 1 from public.organizations o where o.id = org) then
    return null;
  end if;
  if claims ->> 'sub' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    uid := (claims ->> 'sub')::uuid;
  elsif claims ->> 'api_key_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    key_id := (claims ->> 'api_key_id')::uuid;
  end if;
  if key_id is not null then
    kind := 'api_key';
    select k.name into label from public.organization_api_keys k where k.id = key_id;
  elsif uid is not null then
    select u.email::text into email from auth.users u where u.id = uid;
    kind := coalesce(as_kind,
                     (select p.role from public.profiles p where p.user_id = uid and p.organization_id = org),
                     case when exists (select 1 from public.platform_user_flags f where f.user_id = uid
                                       and (f.is_platform_admin or f.is_superadmin)) and org is null
                          then 'platform_admin' end,
                     'person');
  elsif rule is not null then
    kind := 'rule';
    label := left(rule, 500);
  else
    kind := 'operator';
    label := 'operator (database role ' || session_user || ')';
  end if;
  insert into public.audit_log (organization_id, action, actor_kind, actor_user_id, actor_email, actor_api_key_id,
                                actor_label, subject_user_id, subject_email, target_type, target_id, reason,
                                before, after, details, ip, user_agent)
  values (org, action, kind, uid, email, key_id, label, subject,
          (select u.email::text from auth.users u where u.id = subject), target_type, left(target_id, 200),
          nullif(left(trim(regexp_replace(reason, '[[:cntrl:]]+', ' ', 'g')), 500), ''),
          before, after, coalesce(details, '{}'),
          case when address ~ '^[0-9A-Fa-f:.]{2,45}$' then address end,
          nullif(left(regexp_replace(headers ->> 'user-agent', '[[:cntrl:]]+', ' ', 'g'), 500), ''))
  returning id into entry;
  return entry;
end;
$$;

-- The configuration API's recorder for an operation on the caller's organization that changes no
-- settings row (a recovery, a replay, a redelivery, a bulk retry): `org` must be the organization the
-- caller may configure. private.audit(org, action, target_type, target_id, before, after[, details]).
create function private.audit(org uuid, action text, target_type text, target_id text,
                              before jsonb, after jsonb, details jsonb default '{}') returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if org is null or org is distinct from private.webhook_admin_organization_id() then
    raise exception 'only the organization''s administrators and API keys record its operations'
      using errcode = '42501';
  end if;
  return private.audit_record(org, action, target_type, target_id, before, after, null, details);
end;
$$;

-- The audit entry of an action by the calling platform administrator.
create function private.platform_audit(org uuid, action text, reason text, details jsonb,
                                       subject uuid default null) returns uuid
language sql volatile security definer
set search_path = ''
as $$
  select private.audit_record(org, action, case when subject is null then 'organization' else 'person' end,
                              coalesce(subject, org)::text, null, null, reason, details, subject,
                              'platform_admin')
$$;

-- Row triggers ------------------------------------------------------------------------------------------
-- Endpoints: created, changed, enabled, disabled (by whom, or by which rule), deleted; a new signing
-- secret is "rotated" (its value never recorded); custom headers by name only.
create function private.audit_endpoint() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  keep constant text[] := array['url', 'events', 'enabled', 'disabled_reason', 'description', 'rate_limit_per_second'];
  b jsonb := case when tg_op <> 'INSERT' then private.audit_fields(to_jsonb(old), keep) end;
  a jsonb := case when tg_op <> 'DELETE' then private.audit_fields(to_jsonb(new), keep) end;
  diff jsonb[];
  act text;
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.organization_id, 'endpoint.created', 'endpoint', new.id::text, null, a);
  elsif tg_op = 'DELETE' then
    perform private.audit_record(old.organization_id, 'endpoint.deleted', 'endpoint', old.id::text, b, null);
  else
    if new.secret is distinct from old.secret then
      perform private.audit_record(new.organization_id, 'endpoint.secret_rotated', 'endpoint', new.id::text,
        jsonb_build_object('url', old.url), jsonb_build_object('url', new.url, 'previous_secret_expires_at',
        new.previous_secret_expires_at));
    end if;
    diff := private.audit_changed(b, a);
    if diff[2] <> '{}' then
      act := case when old.enabled and not new.enabled then 'endpoint.disabled'
                  when new.enabled and not old.enabled then 'endpoint.enabled'
                  else 'endpoint.updated' end;
      perform private.audit_record(new.organization_id, act, 'endpoint', new.id::text, diff[1], diff[2],
        rule => case when act = 'endpoint.disabled' then new.disabled_reason end);
    end if;
  end if;
  return null;
end;
$$;
-- Only when a recorded field or the secret changed: the dispatcher's own writes (a receiver's pause)
-- never reach the function.
create trigger audit_endpoint after insert or delete on public.webhook_endpoints
  for each row execute function private.audit_endpoint();
create trigger audit_endpoint_update after update on public.webhook_endpoints
  for each row when ((to_jsonb(old) - '{paused_until,updated_at,disabled_at,previous_secret,previous_secret_expires_at}'::text[])
                     is distinct from
                     (to_jsonb(new) - '{paused_until,updated_at,disabled_at,previous_secret,previous_secret_expires_at}'::text[]))
  execute function private.audit_endpoint();

-- Invitations: sent (or sent again: inviting an address whose open invitation this transaction just
-- replaced), withdrawn (by an admin, or because its inviter's authority ended) and accepted. Never the
-- token or its hash.
create function private.audit_invitation() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.organization_id,
      case when exists (select 1 from public.organization_invitations i
                        where i.organization_id = new.organization_id and i.email = new.email
                          and i.id <> new.id and i.revoked_at = now()
                          and i.revoked_reason = 'replaced by a newer invitation')
           then 'invitation.resent' else 'invitation.sent' end,
      'invitation', new.id::text, null,
      jsonb_build_object('email', new.email, 'role', new.role, 'expires_at', new.expires_at));
  elsif new.accepted_at is not null and old.accepted_at is null then
    perform private.audit_record(new.organization_id, 'invitation.accepted', 'invitation', new.id::text,
      jsonb_build_object('email', old.email, 'role', old.role), jsonb_build_object('accepted_at', new.accepted_at),
      subject => new.accepted_by);
  elsif new.revoked_at is not null and old.revoked_at is null
        and new.revoked_reason is distinct from 'replaced by a newer invitation' then
    perform private.audit_record(new.organization_id, 'invitation.withdrawn', 'invitation', new.id::text,
      jsonb_build_object('email', old.email, 'role', old.role),
      jsonb_build_object('revoked_at', new.revoked_at), new.revoked_reason);
  end if;
  return null;
end;
$$;
create trigger audit_invitation after insert or update of accepted_at, revoked_at on public.organization_invitations
  for each row execute function private.audit_invitation();

-- An invitation is deleted only when a person is erased (20261125110000_person_erasure.sql: one sent to
-- their address alone): its entries keep what happened and when, and lose the address.
create function private.audit_erase_invitation() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform set_config('audit.erasure', 'on', true);
  update public.audit_log a
     set before = case when a.before ? 'email' then a.before || '{"email": "(erased)"}' else a.before end,
         after = case when a.after ? 'email' then a.after || '{"email": "(erased)"}' else a.after end,
         subject_email = case when a.subject_email is not null then '(erased)' end
   where a.organization_id = old.organization_id and a.target_type = 'invitation' and a.target_id = old.id::text;
  perform set_config('audit.erasure', 'off', true);
  return null;
end;
$$;
create trigger audit_erase_invitation after delete on public.organization_invitations
  for each row execute function private.audit_erase_invitation();

-- Memberships: joined, role changed, removed or left.
create function private.audit_membership() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub';
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.organization_id, 'member.joined', 'membership', new.id::text, null,
      jsonb_build_object('role', new.role), subject => new.user_id);
  elsif tg_op = 'UPDATE' then
    perform private.audit_record(new.organization_id, 'member.role_changed', 'membership', new.id::text,
      jsonb_build_object('role', old.role), jsonb_build_object('role', new.role), subject => new.user_id,
      as_kind => case when new.user_id = me then old.role end);
  else
    perform private.audit_record(old.organization_id,
      case when old.user_id = me then 'member.left' else 'member.removed' end, 'membership', old.id::text,
      jsonb_build_object('role', old.role), null, subject => old.user_id,
      as_kind => case when old.user_id = me then old.role end);
  end if;
  return null;
end;
$$;
create trigger audit_membership after insert or delete on public.profiles
  for each row execute function private.audit_membership();
create trigger audit_membership_role after update of role on public.profiles
  for each row when (old.role is distinct from new.role) execute function private.audit_membership();

-- API keys: created and revoked (by an admin, or because its creator's authority ended). The name only:
-- never the key, its hash or its prefix.
create function private.audit_api_key() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.organization_id, 'api_key.created', 'api_key', new.id::text, null,
      jsonb_build_object('name', new.name));
  else
    perform private.audit_record(new.organization_id, 'api_key.revoked', 'api_key', new.id::text,
      jsonb_build_object('name', old.name, 'revoked_at', null),
      jsonb_build_object('name', new.name, 'revoked_at', new.revoked_at), new.revoked_reason);
  end if;
  return null;
end;
$$;
create trigger audit_api_key after insert on public.organization_api_keys
  for each row execute function private.audit_api_key();
create trigger audit_api_key_revoked after update of revoked_at on public.organization_api_keys
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function private.audit_api_key();

-- The organization's own settings: created, its name, time zone, contact address.
create function private.audit_organization() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  keep constant text[] := array['name', 'time_zone', 'contact_email'];
  diff jsonb[];
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.id, 'organization.created', 'organization', new.id::text, null,
      private.audit_fields(to_jsonb(new), keep));
  else
    diff := private.audit_changed(private.audit_fields(to_jsonb(old), keep), private.audit_fields(to_jsonb(new), keep));
    perform private.audit_record(new.id, 'organization.updated', 'organization', new.id::text, diff[1], diff[2]);
  end if;
  return null;
end;
$$;
create trigger audit_organization after insert on public.organizations
  for each row execute function private.audit_organization();
create trigger audit_organization_update after update of name, time_zone, contact_email on public.organizations
  for each row when ((old.name, old.time_zone, old.contact_email) is distinct from (new.name, new.time_zone, new.contact_email))
  execute function private.audit_organization();

-- Connections: a provider's secret set, replaced or removed (whether one is set, never the value); the
-- country members' numbers are written in.
create function private.audit_connection_settings() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  was jsonb := case when tg_op = 'UPDATE' then to_jsonb(old) else '{}' end;
  now_ jsonb := to_jsonb(new);
  provider text;
  col text;
begin
  foreach provider in array array['checkout', 'payments'] loop
    col := case provider when 'checkout' then 'webhook_secret' else 'payments_webhook_secret' end;
    if (was -> col) is distinct from (now_ -> col) and not (tg_op = 'INSERT' and now_ -> col = 'null') then
      perform private.audit_record(new.organization_id,
        case when now_ -> col = 'null' then 'connection.secret_removed' else 'connection.secret_set' end,
        'connection', provider,
        jsonb_build_object('secret_set', coalesce(was -> col, 'null') <> 'null'),
        jsonb_build_object('secret_set', now_ -> col <> 'null'));
    end if;
  end loop;
  if (was -> 'default_country') is distinct from (now_ -> 'default_country')
     and not (tg_op = 'INSERT' and now_ -> 'default_country' = 'null') then
    perform private.audit_record(new.organization_id, 'organization.updated', 'organization',
      new.organization_id::text, jsonb_build_object('default_country', was -> 'default_country'),
      jsonb_build_object('default_country', now_ -> 'default_country'));
  end if;
  return null;
end;
$$;
create trigger audit_connection_settings after insert or update on public.organization_settings
  for each row execute function private.audit_connection_settings();

-- How long the webhook logs are kept.
create function private.audit_log_retention_setting() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  perform private.audit_record(new.organization_id, 'log_retention.changed', 'organization',
    new.organization_id::text,
    jsonb_build_object('webhook_log_days', case when tg_op = 'UPDATE' then old.webhook_log_days end),
    jsonb_build_object('webhook_log_days', new.webhook_log_days));
  return null;
end;
$$;
create trigger audit_log_retention_setting after insert on public.organization_log_retention
  for each row execute function private.audit_log_retention_setting();
create trigger audit_log_retention_setting_update after update of webhook_log_days on public.organization_log_retention
  for each row when (old.webhook_log_days is distinct from new.webhook_log_days)
  execute function private.audit_log_retention_setting();

-- WhatsApp numbers: registered, changed, removed; their app secret or verify token replaced (that it
-- was, never the value). The server's own bookkeeping (verified, handshake, last received) is not a
-- change of settings.
create function private.audit_whatsapp_number() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform private.audit_record(new.organization_id, 'whatsapp_number.registered', 'whatsapp_number',
      new.id::text, null, jsonb_build_object('phone_number_id', new.phone_number_id,
                                             'display_phone_number', new.display_phone_number));
  elsif tg_op = 'DELETE' then
    perform private.audit_record(old.organization_id, 'whatsapp_number.removed', 'whatsapp_number',
      old.id::text, jsonb_build_object('phone_number_id', old.phone_number_id,
                                       'display_phone_number', old.display_phone_number), null);
  else
    perform private.audit_record(new.organization_id, 'whatsapp_number.updated', 'whatsapp_number',
      new.id::text, jsonb_build_object('display_phone_number', old.display_phone_number),
      jsonb_build_object('display_phone_number', new.display_phone_number));
  end if;
  return null;
end;
$$;
create trigger audit_whatsapp_number after insert or delete on public.messaging_accounts
  for each row execute function private.audit_whatsapp_number();
create trigger audit_whatsapp_number_update after update of display_phone_number on public.messaging_accounts
  for each row when (old.display_phone_number is distinct from new.display_phone_number)
  execute function private.audit_whatsapp_number();

create function private.audit_whatsapp_secrets() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if new.app_secret is distinct from old.app_secret then
    perform private.audit_record(new.organization_id, 'whatsapp_number.app_secret_replaced', 'whatsapp_number',
      new.account_id::text, null, null);
  end if;
  if new.verify_token is distinct from old.verify_token then
    perform private.audit_record(new.organization_id, 'whatsapp_number.verify_token_replaced', 'whatsapp_number',
      new.account_id::text, null, null);
  end if;
  return null;
end;
$$;
create trigger audit_whatsapp_secrets after update of app_secret, verify_token on public.messaging_account_secrets
  for each row execute function private.audit_whatsapp_secrets();

-- Reading ------------------------------------------------------------------------------------------------
-- Every audit entry with its organization's name, newest first, a page at a time (platform
-- administrators): optionally one organization's, one action's, one actor's (an e-mail, or a key's or
-- person's id), within [since, until).
create function private.platform_audit_entries(org uuid, before_at timestamptz, before_id uuid, max_rows integer)
returns table (id uuid, organization_id uuid, organization_name text, action text, actor_kind text,
               actor_email text, actor_label text, actor_user_id uuid, actor_api_key_id uuid,
               subject_email text, target_type text, target_id text, reason text, before jsonb, after jsonb,
               details jsonb, ip text, user_agent text, created_at timestamptz)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  perform private.require_platform_role('platform_admin');
  return query
  select a.id, a.organization_id, o.name, a.action, a.actor_kind, a.actor_email, a.actor_label, a.actor_user_id,
         a.actor_api_key_id, a.subject_email, a.target_type, a.target_id, a.reason, a.before, a.after, a.details,
         a.ip, a.user_agent, a.created_at
  from public.audit_log a
  left join public.organizations o on o.id = a.organization_id
  where (org is null or a.organization_id = org)
    and (before_at is null or (a.created_at, a.id) < (before_at, before_id))
  order by a.created_at desc, a.id desc
  limit greatest(least(max_rows, 200), 1);
end;
$$;

-- Retention ----------------------------------------------------------------------------------------------
-- Entries are kept a year, then removed in batches by the audit-log-retention job (oldest first, on the
-- created_at index), each batch a short transaction that gives up on a lock rather than wait.
create function private.audit_log_keep() returns interval
language sql immutable
set search_path = ''
as $$ select interval '1 year' $$;

create function private.audit_log_retention_batch(batch_size integer default 1000) returns integer
language plpgsql volatile security definer
set search_path = ''
set lock_timeout = '1s'
as $$
declare
  removed integer;
begin
  perform set_config('audit.retention', 'on', true);
  delete from public.audit_log a
   where a.id = any (array(select x.id from public.audit_log x
                           where x.created_at < now() - private.audit_log_keep()
                           order by x.created_at, x.id limit batch_size
                           for update skip locked));
  get diagnostics removed = row_count;
  perform set_config('audit.retention', 'off', true);
  return removed;
end;
$$;

-- Batches until nothing is older than a year or `budget` is spent.
create procedure private.audit_log_retention_run(budget interval default interval '50 seconds')
language plpgsql
set search_path = ''
as $$
declare
  started timestamptz := clock_timestamp();
begin
  while clock_timestamp() - started < budget loop
    exit when private.audit_log_retention_batch() = 0;
    commit;
  end loop;
end;
$$;

select cron.schedule('audit-log-retention', '41 2 * * *', 'call private.audit_log_retention_run()');

revoke all on function private.audit_log_append_only(), private.audit_fields(jsonb, text[]),
  private.audit_changed(jsonb, jsonb),
  private.audit_record(uuid, text, text, text, jsonb, jsonb, text, jsonb, uuid, text, text),
  private.audit(uuid, text, text, text, jsonb, jsonb, jsonb),
  private.platform_audit(uuid, text, text, jsonb, uuid), private.audit_endpoint(), private.audit_invitation(),
  private.audit_erase_invitation(), private.audit_membership(), private.audit_api_key(), private.audit_organization(),
  private.audit_connection_settings(), private.audit_log_retention_setting(), private.audit_whatsapp_number(),
  private.audit_whatsapp_secrets(), private.platform_audit_entries(uuid, timestamptz, uuid, integer),
  private.audit_log_keep(), private.audit_log_retention_batch(integer)
  from public, anon, authenticated;
revoke all on procedure private.audit_log_retention_run(interval) from public, anon, authenticated;
grant execute on function private.audit(uuid, text, text, text, jsonb, jsonb, jsonb),
  private.platform_audit_entries(uuid, timestamptz, uuid, integer) to config_api;
