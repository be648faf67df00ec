-- People of an organization, for its admins (Settings > People): who belongs, with their role, when
-- they joined and when they last signed in; changing a member's role and removing a member.
--
-- Through the configuration API only (`config_api`): the functions live in `private`, which the Data
-- API does not serve, and no other user role may execute them. Each checks, whoever calls it, that the
-- caller's session is live and that they are an admin of their active organization now (a membership
-- row, not the token's claim), so a change takes effect at the caller's next request. The last admin
-- stays (private.keep_an_admin, 20261122100000_tenancy.sql); losing admin ends that person's API keys
-- (20261122100400_organization_api_keys.sql), invitations and, below, the endpoints they made. Last
-- sign-in comes from auth.users here; nothing of auth.* is exposed.
-- See docs/authentication.md#settings--people

-- The caller's organization, when they may manage its people -------------------------------------------
-- An admin of the active organization with a live session, else 42501.
create function private.people_admin_organization_id() returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
begin
  if org is null or not private.session_is_live() then
    raise exception 'only admins of the active organization can manage its people' using errcode = '42501';
  end if;
  return org;
end;
$$;

-- Listing ------------------------------------------------------------------------------------------------
-- The members of the caller's organization, admins first, then by address: at most `max_rows` (the API
-- asks for one more than it shows, to say there are more).
create function private.organization_people(max_rows integer default 1001)
returns table (id uuid, user_id uuid, email text, display_name text, role text, joined_at timestamptz,
               last_sign_in_at timestamptz)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
begin
  return query
    select p.id, p.user_id, lower(u.email), p.display_name, p.role, p.created_at, u.last_sign_in_at
      from public.profiles p join auth.users u on u.id = p.user_id
     where p.organization_id = org
     order by p.role = 'admin' desc, lower(u.email), p.id
     limit least(greatest(organization_people.max_rows, 0), 5001);
end;
$$;

-- One member of the caller's organization (another organization's, or none: P0002 alike).
create function private.organization_person(membership_id uuid)
returns table (id uuid, user_id uuid, email text, display_name text, role text, joined_at timestamptz,
               last_sign_in_at timestamptz)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
begin
  return query
    select p.id, p.user_id, lower(u.email), p.display_name, p.role, p.created_at, u.last_sign_in_at
      from public.profiles p join auth.users u on u.id = p.user_id
     where p.organization_id = org and p.id = organization_person.membership_id;
  if not found then
    raise exception 'no member % in this organization', organization_person.membership_id using errcode = 'P0002';
  end if;
end;
$$;

-- The endpoints a person's authority made ------------------------------------------------------------------
-- An endpoint sends the organization's data to a URL its maker chose: when the maker stops being an admin
-- there (removed, left, demoted, or their account deleted), the enabled endpoints they made, themselves
-- or through an API key of theirs, are disabled, as their keys and invitations end. The disable is the
-- ordinary one (20261122130000_outbound_webhook_tables.sql): its open deliveries end saying why, and an
-- admin who enables it again recovers them. `disabled_reason` says why and who.
--
-- The remover may keep them (DELETE /webhooks/people/{id} with {"keep_endpoints": true}, or a demotion
-- with it): private.remove_member / private.set_member_role then name that membership in the
-- transaction's `private.keep_endpoints_of`, which only those functions set. Nobody keeps their own.

-- The enabled endpoints of `org` made by `maker` or through an API key `maker` made there.
create function private.endpoints_made_by(org uuid, maker uuid)
returns table (id uuid, url text, description text, created_at timestamptz, api_key_name text)
language sql stable security definer
set search_path = ''
as $$
  select e.id, e.url, e.description, e.created_at, k.name
    from public.webhook_endpoints e
    left join public.organization_api_keys k on k.id = e.created_by_api_key_id and k.organization_id = org
   where e.organization_id = org and e.enabled
     and (e.created_by = maker or k.created_by = maker)
   order by e.created_at, e.id
$$;

create function private.endpoints_end_with_their_creator() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  who text;
  actor uuid := private.live_user_id();
  by_whom text;
  reason text;
begin
  if tg_op = 'UPDATE' and new.role = 'admin' then
    return null;
  end if;
  -- Kept by the remover; or the organization itself is going (its endpoints go with it).
  if current_setting('private.keep_endpoints_of', true) = old.id::text
     or not exists (select 1 from public.organizations o where o.id = old.organization_id) then
    return null;
  end if;
  select lower(u.email) into who from auth.users u where u.id = old.user_id;
  select lower(u.email) into by_whom from auth.users u where u.id = actor and actor <> old.user_id;
  reason := case
    when who is null then 'its creator''s account was deleted'
    when tg_op = 'UPDATE' then format('its creator, %s, is no longer an administrator', who)
      || coalesce(format(' (changed by %s)', by_whom), '')
    when actor = old.user_id then format('its creator, %s, left the organization', who)
    else format('its creator, %s, was removed from the organization', who) || coalesce(format(' by %s', by_whom), '')
  end;
  update public.webhook_endpoints e
     set enabled = false, disabled_reason = reason
   where e.organization_id = old.organization_id and e.enabled
     and e.id in (select m.id from private.endpoints_made_by(old.organization_id, old.user_id) m);
  return null;
end;
$$;
-- A removal whatever the role (a demoted admin whose endpoints were kept still made them); a demotion.
create trigger profiles_end_endpoints_on_removal after delete on public.profiles
  for each row execute function private.endpoints_end_with_their_creator();
create trigger profiles_end_endpoints_on_demotion after update of role on public.profiles
  for each row when (old.role = 'admin' and new.role <> 'admin')
  execute function private.endpoints_end_with_their_creator();

-- The endpoints that removing or demoting a member of the caller's organization would disable (the
-- People page lists them in its dialog). Another organization's member: P0002.
create function private.member_endpoints(membership_id uuid)
returns table (id uuid, url text, description text, created_at timestamptz, api_key_name text)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
  maker uuid;
begin
  select p.user_id into maker from public.profiles p
   where p.id = member_endpoints.membership_id and p.organization_id = org;
  if maker is null then
    raise exception 'no member % in this organization', member_endpoints.membership_id using errcode = 'P0002';
  end if;
  return query select * from private.endpoints_made_by(org, maker);
end;
$$;

-- How many endpoints of `org` that `maker` made this transaction disabled (the API's answer counts them:
-- one a write in flight committed while the removal waited is counted too).
create function private.endpoints_disabled_now(org uuid, maker uuid) returns integer
language sql stable security definer
set search_path = ''
as $$
  select count(*)::integer
    from public.webhook_endpoints e
    left join public.organization_api_keys k on k.id = e.created_by_api_key_id and k.organization_id = org
   where e.organization_id = org and not e.enabled and e.disabled_at = now()
     and (e.created_by = maker or k.created_by = maker)
$$;

-- Keeping a member's endpoints is the remover's choice about someone else.
create function private.keep_endpoints_of(membership_id uuid, keep boolean) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  if not coalesce(keep, false) then
    perform set_config('private.keep_endpoints_of', '', true);
    return;
  end if;
  if exists (select 1 from public.profiles p where p.id = keep_endpoints_of.membership_id
                and p.user_id = private.live_user_id()) then
    raise exception 'you cannot keep your own endpoints when you leave or stop being admin; another admin can'
      using errcode = '22023', hint = 'keep_endpoints';
  end if;
  perform set_config('private.keep_endpoints_of', keep_endpoints_of.membership_id::text, true);
end;
$$;

-- Changing ----------------------------------------------------------------------------------------------
-- Gives a member of the caller's organization another role (admin or staff). Demoting the last admin
-- raises 55000 (private.keep_an_admin); an unknown role 22023; another organization's member P0002.
-- Returns how many of their endpoints a demotion disabled.
create function private.set_member_role(membership_id uuid, role text, keep_endpoints boolean default false)
returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
  maker uuid;
begin
  if set_member_role.role is null or set_member_role.role not in ('admin', 'staff') then
    raise exception 'role must be admin or staff' using errcode = '22023';
  end if;
  perform private.keep_endpoints_of(set_member_role.membership_id, set_member_role.keep_endpoints);
  update public.profiles p set role = set_member_role.role
   where p.id = set_member_role.membership_id and p.organization_id = org
  returning p.user_id into maker;
  if maker is null then
    raise exception 'no member % in this organization', set_member_role.membership_id using errcode = 'P0002';
  end if;
  perform set_config('private.keep_endpoints_of', '', true);
  return private.endpoints_disabled_now(org, maker);
end;
$$;

-- Removes a member from the caller's organization (themselves included: that is leaving). Removing the
-- last admin raises 55000; another organization's member P0002. Their remembered choice of this
-- organization goes too, so their next token names another of theirs, or none. Returns how many of
-- their endpoints were disabled.
create function private.remove_member(membership_id uuid, keep_endpoints boolean default false) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
  removed uuid;
begin
  perform private.keep_endpoints_of(remove_member.membership_id, remove_member.keep_endpoints);
  delete from public.profiles p
   where p.id = remove_member.membership_id and p.organization_id = org
  returning p.user_id into removed;
  if removed is null then
    raise exception 'no member % in this organization', remove_member.membership_id using errcode = 'P0002';
  end if;
  delete from public.user_active_organization a where a.user_id = removed and a.organization_id = org;
  perform set_config('private.keep_endpoints_of', '', true);
  return private.endpoints_disabled_now(org, removed);
end;
$$;

-- Invitations: when the next invitation mail to an address may go -----------------------------------
-- For the caller's organization (private.mail_recipient_next_at, 20261125100000_mail_outbox.sql); null:
-- now. The People page shows it beside "Resend".
create function private.invitation_mail_available_at(email text) returns timestamptz
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
begin
  return private.mail_recipient_next_at(org, 'invitation', invitation_mail_available_at.email);
end;
$$;

revoke all on function private.people_admin_organization_id(), private.organization_people(integer),
  private.organization_person(uuid), private.set_member_role(uuid, text, boolean),
  private.remove_member(uuid, boolean), private.invitation_mail_available_at(text),
  private.endpoints_made_by(uuid, uuid), private.endpoints_end_with_their_creator(),
  private.member_endpoints(uuid), private.keep_endpoints_of(uuid, boolean),
  private.endpoints_disabled_now(uuid, uuid)
  from public, anon, authenticated;
grant execute on function private.organization_people(integer), private.organization_person(uuid),
  private.set_member_role(uuid, text, boolean), private.remove_member(uuid, boolean),
  private.invitation_mail_available_at(text), private.member_endpoints(uuid)
  to config_api;
