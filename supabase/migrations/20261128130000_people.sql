-- People of an organization, for its admins (Settings > People): who belongs, with their role, when
-- they joined and when they last signed in; changing a member's role and removing a member.
--
-- Through the configuration API only (`config_api`): the functions live in `private`, which the Data
-- API does not serve, and no other user role may execute them. Each checks, whoever calls it, that the
-- caller's session is live and that they are an admin of their active organization now (a membership
-- row, not the token's claim), so a change takes effect at the caller's next request. The last admin
-- stays (private.keep_an_admin, 20261122100000_tenancy.sql); losing admin ends that person's API keys
-- (20261122100400_organization_api_keys.sql). Last sign-in comes from auth.users here; nothing of
-- auth.* is exposed. See docs/authentication.md#settings--people

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

-- Changing ----------------------------------------------------------------------------------------------
-- Gives a member of the caller's organization another role (admin or staff). Demoting the last admin
-- raises 55000 (private.keep_an_admin); an unknown role 22023; another organization's member P0002.
create function private.set_member_role(membership_id uuid, role text) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
begin
  if set_member_role.role is null or set_member_role.role not in ('admin', 'staff') then
    raise exception 'role must be admin or staff' using errcode = '22023';
  end if;
  update public.profiles p set role = set_member_role.role
   where p.id = set_member_role.membership_id and p.organization_id = org;
  if not found then
    raise exception 'no member % in this organization', set_member_role.membership_id using errcode = 'P0002';
  end if;
end;
$$;

-- Removes a member from the caller's organization (themselves included: that is leaving). Removing the
-- last admin raises 55000; another organization's member P0002. Their remembered choice of this
-- organization goes too, so their next token names another of theirs, or none.
create function private.remove_member(membership_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.people_admin_organization_id();
  removed uuid;
begin
  delete from public.profiles p
   where p.id = remove_member.membership_id and p.organization_id = org
  returning p.user_id into removed;
  if removed is null then
    raise exception 'no member % in this organization', remove_member.membership_id using errcode = 'P0002';
  end if;
  delete from public.user_active_organization a where a.user_id = removed and a.organization_id = org;
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
  private.organization_person(uuid), private.set_member_role(uuid, text), private.remove_member(uuid),
  private.invitation_mail_available_at(text)
  from public, anon, authenticated;
grant execute on function private.organization_people(integer), private.organization_person(uuid),
  private.set_member_role(uuid, text), private.remove_member(uuid), private.invitation_mail_available_at(text)
  to config_api;
