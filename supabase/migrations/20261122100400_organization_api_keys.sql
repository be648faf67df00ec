-- Organization API keys, and who may configure an organization's webhooks (its admins and its live
-- API keys), stated once here, before the webhook tables whose policies and operations use it.
--
-- API keys are for automation platforms (Zapier, Make, n8n) and scripts that call the configuration API
-- without a person's session. A key is shown once, when it is created; only its SHA-256 is stored. It
-- belongs to one organization and acts there with the rights of the webhooks configuration API only:
-- requests made with it run as `authenticated` with the claims {"api_key_id": ..., "organization_id":
-- ...}, and the webhook tables grant access to such a request only while the key exists, is not revoked
-- and belongs to that organization (checked live, like memberships). Keys give no access to members,
-- donations, settings or anything else.

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
  revoked_at timestamptz
);
create index organization_api_keys_organization_idx on public.organization_api_keys (organization_id, created_at);

create trigger organization_api_keys_fixed_org before update of organization_id on public.organization_api_keys
  for each row execute function private.forbid_organization_change();

-- Revocation is final: once revoked_at is set nobody can clear or move it (an admin restoring a key
-- someone revoked because it leaked would silently re-open it), and the time is the server's own.
create function private.api_key_revocation_is_final() returns trigger
language plpgsql as $$
begin
  if old.revoked_at is not null and new.revoked_at is distinct from old.revoked_at then
    raise exception 'a revoked API key stays revoked' using errcode = '42501';
  end if;
  if old.revoked_at is null and new.revoked_at is not null then
    new.revoked_at := now();
  end if;
  return new;
end;
$$;
create trigger organization_api_keys_revocation_final before update of revoked_at on public.organization_api_keys
  for each row execute function private.api_key_revocation_is_final();

-- The organization a request made with an API key acts for: the claimed organization if the claimed
-- key is live and belongs to it, else null. The server builds such claims itself after looking the
-- presented key up (they never carry `sub`); a signed-in user's token names a user, so an `api_key_id`
-- in it is never taken as a key, whoever signed it.
create function private.api_key_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select k.organization_id
  from public.organization_api_keys k
  where auth.jwt() ->> 'sub' is null
    and k.id = case
      when (auth.jwt() ->> 'api_key_id') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
      then (auth.jwt() ->> 'api_key_id')::uuid
    end
    and k.organization_id = private.claimed_organization_id()
    and k.revoked_at is null
$$;

-- Who may configure webhooks, the one rule: the organization whose webhooks the caller may configure,
-- as an admin there (live membership) or with its live API key; null for anyone else. The webhook
-- tables' policies, the webhook operations and the configuration API all ask this function.
create function private.webhook_admin_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select coalesce(private.admin_organization_id(), private.api_key_organization_id())
$$;

revoke all on function private.api_key_organization_id(), private.webhook_admin_organization_id() from public;
grant execute on function private.api_key_organization_id(), private.webhook_admin_organization_id()
  to authenticated, service_role;

-- Admins list and revoke their organization's keys; the hash is never readable by anyone but the server.
alter table public.organization_api_keys enable row level security;
revoke all on public.organization_api_keys from anon, authenticated;
grant select (id, organization_id, name, key_prefix, created_by, created_at, last_used_at, revoked_at)
  on public.organization_api_keys to authenticated;
grant insert (organization_id, name, key_prefix, key_hash, created_by) on public.organization_api_keys to authenticated;
grant update (revoked_at) on public.organization_api_keys to authenticated;
create policy organization_api_keys_admin_select on public.organization_api_keys for select to authenticated
  using (organization_id = (select private.admin_organization_id()));
create policy organization_api_keys_admin_insert on public.organization_api_keys for insert to authenticated
  with check (organization_id = (select private.admin_organization_id()) and created_by = (select auth.uid()));
create policy organization_api_keys_admin_update on public.organization_api_keys for update to authenticated
  using (organization_id = (select private.admin_organization_id()))
  with check (organization_id = (select private.admin_organization_id()));

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
