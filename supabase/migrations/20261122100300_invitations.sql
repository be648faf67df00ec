-- Invitations: how a person joins an organization, with their consent.
--
-- The token is the invitation (an account's e-mail address proves nothing: sign-up can confirm any
-- address); only accepting creates the membership, with server-set columns. Everything is a function in
-- `public` (security definer, fixed search_path) that only the configuration API's role may call: the
-- Data API reaches neither them nor the table (docs/two-doors.md#two-doors-one-rule). Admins read
-- their organization's rows without the hash. An invitation is an admin's authority passed on: it ends
-- when its inviter stops being an admin there, as their API keys do.
-- See docs/authentication.md#joining-and-leaving-invitations

-- Invitations ------------------------------------------------------------------------------------------
create table public.organization_invitations (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  -- Lower-cased: auth.users keeps e-mail addresses lower-case too.
  email text not null check (email = lower(email) and email ~ '^[^@[:space:]]+@[^@[:space:]]+$' and length(email) <= 320),
  role text not null check (role in ('admin', 'staff')),
  token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
  invited_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '7 days',
  accepted_at timestamptz,
  accepted_by uuid references auth.users (id) on delete set null,
  revoked_at timestamptz,
  -- Why, in words for the settings area: withdrawn, replaced, or its inviter's authority ended.
  revoked_reason text check (revoked_reason is null or revoked_at is not null),
  -- The members with the invited address ("Who a row concerns", 20261122100200_domain_core.sql).
  member_ids uuid[] not null default '{}',
  check (accepted_at is null or revoked_at is null)
);
-- One open invitation per address and organization (inviting again replaces it).
create unique index organization_invitations_open_idx on public.organization_invitations (organization_id, email)
  where accepted_at is null and revoked_at is null;

select private.create_tenant_triggers('organization_invitations');

create trigger organization_invitations_member_links before insert on public.organization_invitations
  for each row execute function private.link_member_email('email');
create index organization_invitations_member_links_idx on public.organization_invitations using gin (member_ids)
  where member_ids <> '{}';

revoke all on public.organization_invitations from anon, authenticated;
grant select (id, organization_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_by, revoked_at,
              revoked_reason)
  on public.organization_invitations to config_api;
select private.create_admin_policies('organization_invitations', '{select}');

-- Functions (RPC) ---------------------------------------------------------------------------------------

-- An admin of the active organization invites an address. Returns the token once and queues the
-- invitation mail with the accept link; inviting an address that already has an open invitation revokes
-- that one (its token stops working, and its mail is cancelled if not sent yet).
create function public.create_invitation(email text, role text default 'staff')
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
  address text := lower(trim(create_invitation.email));
  secret text := 'inv_' || encode(extensions.gen_random_bytes(32), 'hex');
  created public.organization_invitations;
begin
  if org is null then
    raise exception 'only admins of the active organization can invite' using errcode = '42501';
  end if;
  if create_invitation.role is null or create_invitation.role not in ('admin', 'staff') then
    raise exception 'role must be admin or staff' using errcode = '22023';
  end if;
  if address is null or address !~ '^[^@[:space:]]+@[^@[:space:]]+$' or length(address) > 320 then
    raise exception 'email is not an e-mail address' using errcode = '22023';
  end if;
  if exists (
    select 1 from public.profiles p join auth.users u on u.id = p.user_id
    where p.organization_id = org and lower(u.email) = address
  ) then
    raise exception 'that address already belongs to a member' using errcode = '23505';
  end if;
  update public.organization_invitations i set revoked_at = now(), revoked_reason = 'replaced by a newer invitation'
  where i.organization_id = org and i.email = address and i.accepted_at is null and i.revoked_at is null;
  insert into public.organization_invitations (organization_id, email, role, token_hash, invited_by)
  values (org, address, create_invitation.role, encode(sha256(convert_to(secret, 'UTF8')), 'hex'),
          private.live_user_id())
  returning * into created;
  -- The invitation mail, in this transaction: the token rides in the outbox row only until the mail is
  -- sent or no longer wanted (20261125100000_mail_outbox.sql).
  perform private.mail_enqueue(org, 'invitation', address,
    jsonb_build_object('invitation_id', created.id, 'token', secret, 'role', created.role, 'organization_id', org,
                       'expires_at', created.expires_at,
                       'organization_name', (select o.name from public.organizations o where o.id = org),
                       'invited_by', (select u.email from auth.users u where u.id = created.invited_by)),
    null, created.expires_at);
  return jsonb_build_object('id', created.id, 'organization_id', created.organization_id, 'email', created.email,
    'role', created.role, 'token', secret, 'created_at', created.created_at, 'expires_at', created.expires_at);
end;
$$;

-- An admin withdraws an open invitation of the active organization. Another organization's invitation
-- and one that does not exist answer the same (P0002).
create function public.revoke_invitation(invitation_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
begin
  if org is null then
    raise exception 'only admins of the active organization can revoke invitations' using errcode = '42501';
  end if;
  update public.organization_invitations i set revoked_at = now(), revoked_reason = 'withdrawn by an administrator'
  where i.id = revoke_invitation.invitation_id and i.organization_id = org
    and i.accepted_at is null and i.revoked_at is null;
  if not found then
    raise exception 'no open invitation %', revoke_invitation.invitation_id using errcode = 'P0002';
  end if;
end;
$$;

-- The open invitation a token names (unknown, expired, revoked and used ones alike: P0002). Tokens are
-- stored only as their SHA-256, found through the unique index: what is compared is the hash of what
-- was presented, so how long a lookup takes says nothing about any stored token.
create function private.open_invitation(token text) returns public.organization_invitations
language sql stable security definer
set search_path = ''
as $$
  select i.* from public.organization_invitations i
  where i.token_hash = encode(sha256(convert_to(open_invitation.token, 'UTF8')), 'hex')
    and i.accepted_at is null and i.revoked_at is null and i.expires_at > now()
$$;
revoke all on function private.open_invitation(text) from public;

-- What the invitation page shows before anyone signs in: the church, who invited (their name there,
-- else their address: the invitation mail named it already), the role, the address it was sent to and
-- until when. Whoever holds the token was sent it, so none of this is news to them; nothing else (no
-- ids, no other invitation, and nothing about whether the address has an account: that would let any
-- admin learn who has one by inviting them). The configuration API asks it for anyone, per client
-- address limited (routes/invitations.ts); the Data API cannot call it.
create function public.preview_invitation(token text)
returns table (organization_name text, invited_by text, role text, email text, expires_at timestamptz)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return query
    select o.name, (select coalesce(nullif(trim(p.display_name), ''), u.email::text)
                    from auth.users u
                    left join public.profiles p on p.user_id = u.id and p.organization_id = i.organization_id
                    where u.id = i.invited_by),
           i.role, i.email, i.expires_at
    from private.open_invitation(preview_invitation.token) i
    join public.organizations o on o.id = i.organization_id;
  if not found then
    raise exception 'no such open invitation' using errcode = 'P0002';
  end if;
end;
$$;

-- An account whose address was not yet proven when the invitation went out (it existed unconfirmed)
-- may have a password someone else chose: anyone can sign up with an address they do not own and wait
-- (Supabase Auth keeps that password when the owner signs up and confirms). Such an invitee sets a new
-- password before joining, which ends every other session of the account. Here the password (its
-- stored hash's fingerprint) the account had when it was asked, so accepting again knows it changed.
create table private.invitation_password_renewals (
  invitation_id uuid primary key references public.organization_invitations (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  password_fingerprint text not null,
  asked_at timestamptz not null default now()
);
alter table private.invitation_password_renewals enable row level security;
revoke all on private.invitation_password_renewals from public, anon, authenticated;

-- The invitee accepts with the token (whoever holds it was sent it). Unknown, expired, revoked and used
-- tokens all answer P0002 alike. Nothing joins a suspended organization (55000, hint
-- organization_suspended). An account unconfirmed when invited answers {"new_password_required": true}
-- until its password has changed (above). The membership gets the invitation's role and the server's
-- time; which organization the user's tokens name does not change (the hook prefers the remembered
-- choice, else the oldest membership, and this one is the newest).
create function public.accept_invitation(token text)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  uid uuid := private.live_user_id();
  inv public.organization_invitations;
  account auth.users;
  fingerprint text;
begin
  if uid is null then
    raise exception 'not signed in, or the session has ended' using errcode = '42501';
  end if;
  select * into inv from public.organization_invitations i
  where i.id = (private.open_invitation(accept_invitation.token)).id
  for update;
  -- Locked now: a concurrent acceptance of the same token may have used it meanwhile.
  if inv.id is null or inv.accepted_at is not null or inv.revoked_at is not null then
    raise exception 'no such open invitation for you' using errcode = 'P0002';
  end if;
  if exists (select 1 from public.profiles p where p.user_id = uid and p.organization_id = inv.organization_id) then
    raise exception 'you are already a member of this organization' using errcode = '23505';
  end if;
  if exists (select 1 from private.organization_suspensions s where s.organization_id = inv.organization_id) then
    raise exception 'organization % is suspended', inv.organization_id
      using errcode = '55000', hint = 'organization_suspended';
  end if;
  select * into account from auth.users u where u.id = uid;
  if coalesce(account.encrypted_password, '') <> '' and account.created_at < inv.created_at
     and (account.email_confirmed_at is null or account.email_confirmed_at > inv.created_at) then
    fingerprint := encode(sha256(convert_to(account.encrypted_password, 'UTF8')), 'hex');
    if not exists (select 1 from private.invitation_password_renewals r
                   where r.invitation_id = inv.id and r.user_id = uid
                     and r.password_fingerprint <> fingerprint) then
      insert into private.invitation_password_renewals (invitation_id, user_id, password_fingerprint)
      values (inv.id, uid, fingerprint)
      on conflict (invitation_id) do update
        set user_id = excluded.user_id, password_fingerprint = excluded.password_fingerprint, asked_at = now()
        where private.invitation_password_renewals.user_id <> excluded.user_id;
      return jsonb_build_object('new_password_required', true, 'organization_id', inv.organization_id);
    end if;
  end if;
  delete from private.invitation_password_renewals r where r.invitation_id = inv.id;
  insert into public.profiles (user_id, organization_id, role) values (uid, inv.organization_id, inv.role);
  update public.organization_invitations i set accepted_at = now(), accepted_by = uid where i.id = inv.id;
  return jsonb_build_object('organization_id', inv.organization_id, 'role', inv.role);
end;
$$;

-- A member leaves an organization (any of theirs, not only the active one). The last admin cannot
-- (55000, from private.keep_an_admin). Not a member answers P0002.
create function public.leave_organization(organization_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  uid uuid := private.live_user_id();
begin
  if uid is null then
    raise exception 'not signed in, or the session has ended' using errcode = '42501';
  end if;
  delete from public.profiles p where p.user_id = uid and p.organization_id = leave_organization.organization_id;
  if not found then
    raise exception 'not a member of that organization' using errcode = 'P0002';
  end if;
  delete from public.user_active_organization a
  where a.user_id = uid and a.organization_id = leave_organization.organization_id;
end;
$$;

-- An admin's authority ends: their open invitations end with it ------------------------------------------
-- A membership that stops being an admin's (left, removed, demoted, or gone with the user's account)
-- withdraws the open invitations its person issued in that organization, as it revokes their API keys
-- (20261122100400_organization_api_keys.sql): otherwise an admin about to be removed could invite
-- themselves back as admin and accept after the removal. Their mails, if not sent yet, are cancelled
-- (private.mail_cancel_stale). Security definer: a member leaving or an admin removing someone cannot
-- see the invitations, yet they must end.
create function private.invitations_end_with_their_inviter() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' and new.role = 'admin' then
    return null;
  end if;
  update public.organization_invitations i
     set revoked_at = now(), revoked_reason = 'its inviter is no longer an administrator'
   where i.invited_by = old.user_id and i.organization_id = old.organization_id
     and i.accepted_at is null and i.revoked_at is null;
  return null;
end;
$$;
create trigger profiles_end_invitations after delete or update of role on public.profiles
  for each row when (old.role = 'admin') execute function private.invitations_end_with_their_inviter();

-- Deleting an account clears invited_by (the foreign key above), possibly before the membership goes:
-- an open invitation whose inviter disappears is withdrawn right there.
create function private.invitation_inviter_deleted() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.revoked_at := now();
  new.revoked_reason := 'its inviter is no longer an administrator';
  return new;
end;
$$;
create trigger organization_invitations_inviter_deleted before update of invited_by on public.organization_invitations
  for each row when (old.invited_by is not null and new.invited_by is null
                     and old.accepted_at is null and old.revoked_at is null)
  execute function private.invitation_inviter_deleted();
revoke all on function private.invitations_end_with_their_inviter(), private.invitation_inviter_deleted() from public;

-- The configuration API's role only (and the server's): the Data API cannot invite, accept or leave.
revoke execute on function public.create_invitation(text, text), public.revoke_invitation(uuid),
  public.preview_invitation(text), public.accept_invitation(text), public.leave_organization(uuid)
  from public, anon, authenticated;
grant execute on function public.create_invitation(text, text), public.revoke_invitation(uuid),
  public.preview_invitation(text), public.accept_invitation(text), public.leave_organization(uuid)
  to config_api, service_role;
