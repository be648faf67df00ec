-- Organization API keys, and who may configure an organization's webhooks (its admins and its live
-- API keys), stated once here, before the webhook tables whose policies and operations use it.
--
-- Keys exist only in the configuration API: its requests with a key run as `config_api` with the claims
-- {"api_key_id", "organization_id"}; the webhook tables let them in only while the key is live (checked
-- like memberships), and nothing else does. The Data API can neither read nor make keys. A key ends
-- with its creator's authority as an admin. See docs/authentication.md#api-keys

create table public.organization_api_keys (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  name text not null check (length(trim(name)) between 1 and 100),
  -- The first characters of the key, so admins can tell keys apart without the key itself.
  key_prefix text not null,
  key_hash text not null unique check (key_hash ~ '^[0-9a-f]{64}$'),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  -- Why, in words for the API keys page: an administrator revoked it, or its creator's authority ended.
  revoked_reason text check (revoked_reason is null or revoked_at is not null)
);
create index organization_api_keys_organization_idx on public.organization_api_keys (organization_id, created_at);
-- The keys a person made, found when their membership ends.
create index organization_api_keys_creator_idx on public.organization_api_keys (created_by, organization_id)
  where revoked_at is null;

select private.create_tenant_triggers('organization_api_keys');

-- Revocation is final: once revoked_at is set nobody can clear or move it, nor rewrite why (an admin
-- restoring a key someone revoked because it leaked would silently re-open it), and the time is the
-- server's own. A revocation that gives no reason is an administrator's.
create function private.api_key_revocation_is_final() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if old.revoked_at is not null
     and (new.revoked_at, new.revoked_reason) is distinct from (old.revoked_at, old.revoked_reason) then
    raise exception 'a revoked API key stays revoked' using errcode = '42501';
  end if;
  if old.revoked_at is null and new.revoked_at is not null then
    new.revoked_at := now();
    new.revoked_reason := coalesce(new.revoked_reason, 'revoked by an administrator');
  end if;
  return new;
end;
$$;
create trigger organization_api_keys_revocation_final before update of revoked_at, revoked_reason
  on public.organization_api_keys
  for each row execute function private.api_key_revocation_is_final();

-- A membership that stops being an admin's (left, removed, demoted, or gone with the user's account)
-- revokes the keys its person made in that organization. Security definer: a member leaving or an
-- admin removing someone cannot see the keys, yet they must end.
create function private.api_keys_end_with_their_creator() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  reason text;
begin
  if tg_op = 'UPDATE' and new.role = 'admin' then
    return null;
  end if;
  reason := case
    when tg_op = 'UPDATE' then 'its creator is no longer an administrator'
    when not exists (select 1 from auth.users u where u.id = old.user_id) then 'its creator''s account was deleted'
    when old.user_id = auth.uid() then 'its creator left the organization'
    else 'its creator was removed from the organization'
  end;
  update public.organization_api_keys k
     set revoked_at = now(), revoked_reason = reason
   where k.created_by = old.user_id and k.organization_id = old.organization_id and k.revoked_at is null;
  return null;
end;
$$;
create trigger profiles_end_api_keys after delete or update of role on public.profiles
  for each row when (old.role = 'admin') execute function private.api_keys_end_with_their_creator();

-- Deleting an account also clears created_by (the foreign key above), possibly before the membership
-- goes: a key whose creator disappears is revoked right there.
create function private.api_key_creator_deleted() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.revoked_at := now();
  new.revoked_reason := 'its creator''s account was deleted';
  return new;
end;
$$;
create trigger organization_api_keys_creator_deleted before update of created_by on public.organization_api_keys
  for each row when (old.created_by is not null and new.created_by is null and old.revoked_at is null)
  execute function private.api_key_creator_deleted();

-- The live API key a request is made with: the claimed key if it is live and belongs to the claimed
-- organization, else nothing. The server builds such claims itself after looking the presented key up
-- (they never carry `sub`); a signed-in user's token names a user, so an `api_key_id` in it is never
-- taken as a key, whoever signed it. A key has no session: its rule is that it is not revoked.
create function private.live_api_key() returns table (id uuid, organization_id uuid)
language sql stable security definer
set search_path = ''
as $$
  select k.id, k.organization_id
  from public.organization_api_keys k
  where auth.jwt() ->> 'sub' is null
    and k.id = case
      when (auth.jwt() ->> 'api_key_id') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then (auth.jwt() ->> 'api_key_id')::uuid
    end
    and k.organization_id = private.claimed_organization_id()
    and k.revoked_at is null
$$;

-- The organization a request made with a live API key acts for, and that key; null for anyone else.
create function private.api_key_organization_id() returns uuid
language sql stable
set search_path = ''
as $$ select k.organization_id from private.live_api_key() k $$;
create function private.api_key_id() returns uuid
language sql stable
set search_path = ''
as $$ select k.id from private.live_api_key() k $$;

-- Who may configure webhooks, the one rule: the organization whose webhooks the caller may configure,
-- as an admin there (live membership, live session) or with its live API key; null for anyone else. The webhook
-- tables' policies, the webhook operations and the configuration API all ask this function.
create function private.webhook_admin_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select coalesce(private.admin_organization_id(), private.api_key_organization_id())
$$;

-- The same organization, with the authority it rests on held until the transaction ends: the caller's
-- admin membership, or their live API key, locked FOR SHARE. Every admin-only write of the configuration
-- API starts with it (webhooks/actor.ts, asAdmin). A removal, a demotion or a key's revocation updates or
-- deletes that row, so they take turns: either the write commits first and the removal, which then
-- waits, ends what it made (the end-with-creator triggers read committed rows), or the write waits for
-- the removal and finds no authority left (null: refused). Without the lock a key or an admin
-- invitation made while its maker's removal was in flight passed the check, waited, and outlived them.
create function private.hold_admin_authority() returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid;
begin
  select p.organization_id into org
    from public.profiles p
   where p.user_id = private.live_user_id() and p.organization_id = private.claimed_organization_id()
     and p.role = 'admin'
     for share;
  if org is null then
    select k.organization_id into org
      from public.organization_api_keys k
     where k.id = (select l.id from private.live_api_key() l) and k.revoked_at is null
       for share;
  end if;
  return org;
end;
$$;

revoke all on function private.live_api_key(), private.api_key_organization_id(), private.api_key_id(),
  private.webhook_admin_organization_id(), private.hold_admin_authority() from public;
grant execute on function private.live_api_key(), private.api_key_organization_id(), private.api_key_id(),
  private.webhook_admin_organization_id(), private.hold_admin_authority() to config_api, service_role;
revoke all on function private.api_key_revocation_is_final(), private.api_keys_end_with_their_creator(),
  private.api_key_creator_deleted() from public;

-- Admins list, make and revoke their organization's keys, in the settings area only; the hash is never
-- readable by anyone but the server, and a key's creator is the admin making it.
revoke all on public.organization_api_keys from anon, authenticated;
grant select (id, organization_id, name, key_prefix, created_by, created_at, last_used_at, revoked_at, revoked_reason)
  on public.organization_api_keys to config_api;
grant insert (organization_id, name, key_prefix, key_hash, created_by) on public.organization_api_keys to config_api;
grant update (revoked_at) on public.organization_api_keys to config_api;
select private.create_admin_policies('organization_api_keys', '{select,update}');
create policy organization_api_keys_admin_insert on public.organization_api_keys for insert to config_api
  with check (organization_id = (select private.admin_organization_id()) and created_by = (select private.live_user_id()));

-- Who made an endpoint or a key, in words for the settings area, so that the remaining admins see what
-- a removed admin left behind: the person's name (or e-mail address) while they are a member of the
-- organization, "removed member" once they are not (or their account is gone), the API key's name for
-- what an automation platform made, null for what the server made. Only for the organization the caller
-- may configure: anything else answers null.
create function private.creator_display(org uuid, user_id uuid, api_key_id uuid) returns text
language sql stable security definer
set search_path = ''
as $$
  select case
    when org is distinct from private.webhook_admin_organization_id() then null
    when creator_display.user_id is not null then coalesce(
      (select coalesce(nullif(trim(p.display_name), ''), u.email)
       from public.profiles p join auth.users u on u.id = p.user_id
       where p.user_id = creator_display.user_id and p.organization_id = org),
      'removed member')
    when creator_display.api_key_id is not null then coalesce(
      (select 'API key ' || k.name from public.organization_api_keys k
       where k.id = creator_display.api_key_id and k.organization_id = org),
      'a deleted API key')
  end
$$;
revoke all on function private.creator_display(uuid, uuid, uuid) from public;
grant execute on function private.creator_display(uuid, uuid, uuid) to config_api, service_role;

-- Resolving a presented key happens before any claims exist, so it is a server-side lookup (the
-- function's own database role), throttling the last-used write to once a minute per key.
create function private.authenticate_api_key(presented_hash text) returns table (api_key_id uuid, organization_id uuid)
language sql volatile security definer
set search_path = ''
as $$
  with k as (
    select k.id, k.organization_id, k.last_used_at
    from public.organization_api_keys k
    where k.key_hash = presented_hash and k.revoked_at is null
  ), touched as (
    update public.organization_api_keys u set last_used_at = now()
    from k
    where u.id = k.id and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute')
  )
  select k.id, k.organization_id from k
$$;
revoke all on function private.authenticate_api_key(text) from public, anon, authenticated;
