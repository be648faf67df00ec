-- Organizations a church makes and runs itself: any signed-in person creates one and becomes its first
-- admin; its admins change its name, time zone and contact address. Both through the configuration API
-- only (POST /webhooks/organizations, PATCH /webhooks/organization), which calls these functions as
-- `config_api`: they are in schema `private`, which the Data API does not expose, and granted to no
-- other user role. The table and its checks: 20261122100000_tenancy.sql.
-- See docs/authentication.md#organizations

-- Creating an organization ------------------------------------------------------------------------------
-- How many organizations one person may create in 24 hours. A church needs one (and perhaps a test
-- one); a script that signs up and creates thousands would fill the platform's lists and mails.
create function private.organizations_per_day() returns integer
language sql immutable
set search_path = ''
as $$ select 5 $$;

-- Whether the caller already belongs to an organization called `name` (ignoring case, as stored:
-- normalized, private.normalize_organization_name), other than `except_id`. Names are not unique across the platform (many churches are called
-- Grace Chapel, and a platform-wide rule would tell anyone which names exist): only within one
-- person's organizations, where two alike in the switcher could not be told apart.
create function private.member_has_organization_named(name text, except_id uuid default null)
returns boolean
language sql stable security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.profiles p join public.organizations o on o.id = p.organization_id
    where p.user_id = auth.uid()
      and lower(o.name) = lower(private.normalize_organization_name(member_has_organization_named.name))
      and o.id is distinct from member_has_organization_named.except_id
  )
$$;

-- The signed-in caller (a live session: private.session_is_live()) creates an organization and becomes
-- its admin. Refused: no user or no live session (42501), a sixth organization within 24 hours (54000,
-- hint `too_many_organizations`, with the time the next one may be created), a name the caller's
-- organizations already have (23505, hint `duplicate_name`); the table's checks decide the rest
-- (23514 naming the column). The caller's active organization does not change: they switch to it.
create function private.create_organization(name text, time_zone text default 'UTC', contact_email text default null)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  uid uuid := auth.uid();
  recent timestamptz[];
  created public.organizations;
begin
  if uid is null or not private.session_is_live() then
    raise exception 'sign in to create an organization' using errcode = '42501';
  end if;
  -- One person's creations one at a time, so two at once cannot both pass the count.
  perform pg_advisory_xact_lock(hashtext('create_organization:' || uid::text));
  select array_agg(o.created_at order by o.created_at) into recent
  from public.organizations o
  where o.created_by = uid and o.created_at > now() - interval '24 hours';
  if coalesce(array_length(recent, 1), 0) >= private.organizations_per_day() then
    raise exception 'you have created % organizations in the last 24 hours', private.organizations_per_day()
      using errcode = '54000', hint = 'too_many_organizations',
            detail = to_char((recent[1] + interval '24 hours') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');
  end if;
  if private.member_has_organization_named(create_organization.name) then
    raise exception 'you already belong to an organization with this name'
      using errcode = '23505', hint = 'duplicate_name', column = 'name';
  end if;
  insert into public.organizations (name, time_zone, contact_email, created_by)
  values (create_organization.name, coalesce(create_organization.time_zone, 'UTC'),
          lower(btrim(create_organization.contact_email)), uid)
  returning * into created;
  insert into public.profiles (user_id, organization_id, role) values (uid, created.id, 'admin');
  insert into public.organization_settings (organization_id) values (created.id);
  return jsonb_build_object('id', created.id, 'name', created.name, 'time_zone', created.time_zone,
    'contact_email', created.contact_email, 'created_at', created.created_at, 'role', 'admin');
end;
$$;

-- Changing an organization -------------------------------------------------------------------------------
-- An admin of the active organization (live membership and session) changes what `patch` names of
-- `name`, `time_zone` and `contact_email` (null clears the contact address); keys it leaves out stay.
-- Refused: not an admin (42501), a name another of the caller's organizations has (23505), anything
-- the table's checks refuse (23514).
create function private.update_organization(patch jsonb)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
  changed public.organizations;
begin
  if org is null or not private.session_is_live() then
    raise exception 'only admins of the active organization can change it' using errcode = '42501';
  end if;
  if patch ? 'name' and private.member_has_organization_named(patch ->> 'name', org) then
    raise exception 'you already belong to another organization with this name'
      using errcode = '23505', hint = 'duplicate_name', column = 'name';
  end if;
  update public.organizations o set
    name = case when patch ? 'name' then patch ->> 'name' else o.name end,
    time_zone = case when patch ? 'time_zone' then patch ->> 'time_zone' else o.time_zone end,
    contact_email = case when patch ? 'contact_email' then lower(btrim(patch ->> 'contact_email')) else o.contact_email end
  where o.id = org
  returning * into changed;
  return jsonb_build_object('id', changed.id, 'name', changed.name, 'time_zone', changed.time_zone,
    'contact_email', changed.contact_email, 'created_at', changed.created_at);
end;
$$;

revoke all on function private.organizations_per_day(), private.member_has_organization_named(text, uuid),
  private.create_organization(text, text, text), private.update_organization(jsonb) from public;
grant execute on function private.organizations_per_day(), private.member_has_organization_named(text, uuid),
  private.create_organization(text, text, text), private.update_organization(jsonb) to config_api, service_role;
