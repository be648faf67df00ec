-- The custom access-token hook and the active-organization switch.
--
-- Supabase Auth calls the hook (config.toml: [auth.hook.custom_access_token]) whenever it issues an
-- access token: at sign-in and at every refresh. It receives {user_id, claims, authentication_method}
-- and returns {claims}: the claims it was given, with organization_id, is_platform_admin and
-- is_superadmin added. It never fails a sign-in: missing data just means fewer claims.
-- See docs/authentication.md#switching-organizations

create function public.custom_access_token_hook(event jsonb) returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  claims jsonb := event -> 'claims';
  uid uuid;
  org uuid;
  platform_admin boolean;
  superadmin boolean;
begin
  if claims is null or jsonb_typeof(claims) <> 'object' then
    claims := '{}'::jsonb;
  end if;

  begin
    uid := (event ->> 'user_id')::uuid;
  exception when others then
    uid := null;
  end;

  if uid is not null then
    -- The remembered organization while the user is still a member there, else the oldest membership;
    -- never a suspended organization (its people land in another one of theirs, or in none).
    select p.organization_id into org
    from public.profiles p
    left join public.user_active_organization a
      on a.user_id = p.user_id and a.organization_id = p.organization_id
    where p.user_id = uid
      and not exists (select 1 from private.organization_suspensions s where s.organization_id = p.organization_id)
    order by (a.user_id is not null) desc, p.created_at, p.organization_id
    limit 1;

    select f.is_platform_admin, f.is_superadmin into platform_admin, superadmin
    from public.platform_user_flags f
    where f.user_id = uid;
  end if;

  if org is not null then
    claims := jsonb_set(claims, '{organization_id}', to_jsonb(org::text));
  else
    claims := claims - 'organization_id';
  end if;
  claims := jsonb_set(claims, '{is_platform_admin}', to_jsonb(coalesce(platform_admin, false)));
  claims := jsonb_set(claims, '{is_superadmin}', to_jsonb(coalesce(superadmin, false)));

  return jsonb_build_object('claims', claims);
end;
$$;

-- Only Supabase Auth may call the hook.
revoke execute on function public.custom_access_token_hook(jsonb) from public, anon, authenticated;
grant execute on function public.custom_access_token_hook(jsonb) to supabase_auth_admin;
grant usage on schema public to supabase_auth_admin;

-- What the hook reads, it reads as supabase_auth_admin, through policies made for that role alone.
grant select on public.profiles, public.user_active_organization, public.platform_user_flags
  to supabase_auth_admin;
grant select on private.organization_suspensions to supabase_auth_admin;
create policy organization_suspensions_auth_admin_read on private.organization_suspensions
  for select to supabase_auth_admin using (true);
create policy profiles_auth_admin_read on public.profiles
  for select to supabase_auth_admin using (true);
create policy user_active_organization_auth_admin_read on public.user_active_organization
  for select to supabase_auth_admin using (true);
create policy platform_user_flags_auth_admin_read on public.platform_user_flags
  for select to supabase_auth_admin using (true);

-- Switching organizations: the client calls this, then refreshes its session so the hook puts the new
-- organization into a fresh token. Security invoker: it writes the caller's own row of
-- user_active_organization under that table's policies (their own row, an organization they belong to,
-- a live session), so it can do nothing the caller could not do themselves.
create function public.set_active_organization(organization_id uuid) returns uuid
language plpgsql volatile
set search_path = ''
as $$
declare
  uid uuid := private.live_user_id();
  org uuid := set_active_organization.organization_id;
begin
  if uid is null then
    raise exception 'not signed in, or the session has ended' using errcode = '42501';
  end if;
  if org is null or not exists (
    select 1 from public.profiles p where p.user_id = uid and p.organization_id = org
  ) then
    raise exception 'not a member of organization %', coalesce(org::text, 'null')
      using errcode = '42501', hint = 'Pick one of the organizations listed in your profiles.';
  end if;
  -- (security definer: no user role reads the suspensions themselves)
  if private.membership_is_suspended(org) then
    raise exception 'organization % is suspended', org
      using errcode = '55000', hint = 'organization_suspended';
  end if;
  insert into public.user_active_organization as a (user_id, organization_id)
  values (uid, org)
  on conflict (user_id) do update set organization_id = excluded.organization_id, updated_at = now();
  return org;
end;
$$;

revoke execute on function public.set_active_organization(uuid) from public, anon;
grant execute on function public.set_active_organization(uuid) to authenticated;
