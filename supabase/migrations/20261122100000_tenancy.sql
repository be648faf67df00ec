-- Tenancy: organizations, who belongs to them, and the helpers every row-level security policy uses.
--
-- The JWT says which organization a user acts for (`organization_id`, put there by the access-token
-- hook). The claim alone is never trusted for access: every policy also requires a live `profiles` row
-- for (auth.uid(), that organization), so a member removed from an organization loses access at once,
-- not when the token expires. See docs/architecture.md#tenancy

-- Supabase's default privileges give anon and authenticated every table privilege on what is created in
-- `public`. Row-level security filters rows for select, insert, update and delete, but TRUNCATE skips it
-- (one staff member could empty every organization's table), REFERENCES lets a foreign key probe other
-- tenants' keys and TRIGGER runs the grantee's code on everyone's writes. No user role gets them, on
-- any table made from here on by the role that runs migrations.
alter default privileges in schema public revoke truncate, references, trigger on tables from anon, authenticated;
-- Beyond that, no table in `public` reaches the Data API by default: Supabase grants every new table to
-- anon and authenticated, so a table added without a thought would be served to every signed-in
-- browser. Here each table grants what the browser may do (private.create_tenant_policies does it for
-- the day-to-day records) and the configuration API's role what it needs. (Functions keep Postgres's
-- EXECUTE for PUBLIC, which per-schema defaults cannot take back: each migration revokes it, and the
-- Security Advisor test refuses a security-definer function a user role may call.) The list, door by
-- door: docs/two-doors.md#two-doors-one-rule
alter default privileges in schema public revoke all on tables from anon, authenticated;

-- The login of the Edge Functions' user-request pool. NOINHERIT, so a query outside a request's
-- transaction runs with nothing, never as postgres. Its login and password: 20261128160000_edge_user_login.sql.
-- See docs/operations.md#through-the-pooler
do $$
begin
  if not exists (select from pg_roles where rolname = 'edge_user') then
    create role edge_user nologin noinherit;
  end if;
end
$$;
-- The configuration API's role (the `webhooks` function). It has everything `authenticated` has, and
-- besides the tables and functions only the configuration API may reach (API keys, endpoint secrets,
-- invitations: see docs/two-doors.md#two-doors-one-rule). PostgREST's `authenticator` is not a
-- member of it, so no access token, whatever role it claims, reaches them through the Data API.
do $$
begin
  if not exists (select from pg_roles where rolname = 'config_api') then
    create role config_api nologin;
  end if;
end
$$;
grant authenticated to config_api;
grant anon, authenticated, config_api to edge_user;
-- The database owner may act through that door too, as it may become authenticated on a hosted project
-- where it is not a superuser: what an operator checking a grant and the pgTAP suite
-- (`supabase test db --linked`, tests.act_as_config_api) need.
grant config_api to postgres;

create schema if not exists private;
revoke all on schema private from public;
grant usage on schema private to authenticated, service_role, supabase_auth_admin;

-- Organizations and memberships ---------------------------------------------------------------------
create table public.organizations (
  id uuid primary key default gen_random_uuid(),
  -- One line of at most 200 characters without control, bidi-control or invisible (zero-width)
  -- characters: the name is put into mail subjects and bodies (invitations go to any address an admin
  -- types) and into every page's header, where a line break would let an admin write the mail's body
  -- and a right-to-left override or an invisible character would let one church's name pass for
  -- another's. The configuration API checks the same characters (routes/organizations.ts,
  -- FORBIDDEN_IN_NAME) so its callers are told at the field.
  name text not null check (
    length(btrim(name)) > 0 and length(name) <= 200
    and name !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]'
  ),
  -- The church's own time zone and the address people may write to about it, set by its admins.
  -- (a name of pg_timezone_names: organizations_time_zone below)
  time_zone text not null default 'UTC' check (length(time_zone) between 1 and 64),
  contact_email text check (
    contact_email = lower(contact_email) and contact_email ~ '^[^@[:space:]]+@[^@[:space:][:cntrl:]]+\.[^@[:space:][:cntrl:]]+$'
    and length(contact_email) <= 320
  ),
  -- Who created it (private.create_organization), for the limit of new organizations per person and day.
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now()
);
create index organizations_created_by_idx on public.organizations (created_by, created_at) where created_by is not null;

-- A time zone is one of the database's own (an IANA name such as Europe/London), checked when it is set:
-- reading pg_timezone_names takes some 25 ms, too slow for a check on every write of the row. A
-- check_violation naming the column, like the table's checks.
create function private.check_time_zone() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if not exists (select 1 from pg_catalog.pg_timezone_names z where z.name = new.time_zone) then
    raise exception 'time_zone "%" is not a time zone name', new.time_zone
      using errcode = '23514', table = 'organizations', column = 'time_zone',
            constraint = 'organizations_time_zone_check';
  end if;
  return new;
end;
$$;
create trigger organizations_time_zone before insert or update of time_zone on public.organizations
  for each row when (new.time_zone <> 'UTC') execute function private.check_time_zone();

create table public.profiles (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  organization_id uuid not null references public.organizations (id) on delete cascade,
  role text not null default 'staff' check (role in ('admin', 'staff')),
  display_name text,
  created_at timestamptz not null default now(),
  unique (user_id, organization_id)
);
-- (user_id, organization_id) is served by the unique index; listing an organization's people needs this.
create index profiles_organization_id_idx on public.profiles (organization_id);

-- Per-organization settings. webhook_secret keys the checkout provider's signatures: admins set it, nobody
-- reads it back but the server.
create table public.organization_settings (
  organization_id uuid primary key references public.organizations (id) on delete cascade,
  webhook_secret text,
  updated_at timestamptz not null default now()
);

-- The organization a user last chose; the hook uses it while the user is still a member there.
create table public.user_active_organization (
  user_id uuid primary key references auth.users (id) on delete cascade,
  organization_id uuid not null references public.organizations (id) on delete cascade,
  updated_at timestamptz not null default now()
);

-- Platform-wide flags. Nobody but the server writes these (no write policy exists for any user role),
-- and they are never taken from user_metadata, which users can edit themselves.
create table public.platform_user_flags (
  user_id uuid primary key references auth.users (id) on delete cascade,
  is_platform_admin boolean not null default false,
  is_superadmin boolean not null default false,
  updated_at timestamptz not null default now()
);

-- Suspended organizations: a platform administrator stopped this organization (the platform console,
-- 20261128150000_platform_console.sql, suspends, resumes and audits). While a row is here nobody acts
-- for the organization through either door (private.claimed_organization_id below), the access-token
-- hook lands no one in it, inbound webhooks are answered 503 and outbound deliveries wait. Here, beside
-- the organizations, because the policy helpers read it. No user role reads it.
-- See docs/platform-console.md#suspending-an-organization
create table private.organization_suspensions (
  organization_id uuid primary key references public.organizations (id) on delete cascade,
  suspended_at timestamptz not null default now(),
  suspended_by uuid references auth.users (id) on delete set null,
  reason text not null check (length(trim(reason)) between 1 and 500 and reason !~ '[[:cntrl:]]')
);
alter table private.organization_suspensions enable row level security;
revoke all on private.organization_suspensions from public, anon, authenticated;

-- Policy helpers --------------------------------------------------------------------------------------
-- In a schema PostgREST does not expose. security definer so that a policy on `profiles` can consult
-- `profiles` without recursing into its own policy. Policies call them as `(select private.fn())` so
-- Postgres evaluates them once per statement (an initPlan), not once per row.
--
-- A token outlives its session by up to jwt_expiry (an hour): signing out, or Supabase Auth revoking a
-- session whose rotated refresh token was reused, ends the session at once but not the token. So the
-- caller is known only while the token's session is live (private.live_user_id()), and every helper
-- below starts from it: through either door, a signed-out token reads and changes nothing from the
-- next statement on. See docs/two-doors.md#sessions-end-everywhere

-- The organization claimed in the JWT, or null; null too while that organization is suspended, so every
-- helper below (and API keys' private.api_key_organization_id) finds no membership in it.
create function private.claimed_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select c.id
  from (select case
    when (auth.jwt() ->> 'organization_id') ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    then (auth.jwt() ->> 'organization_id')::uuid
  end as id) c
  where not exists (select 1 from private.organization_suspensions s where s.organization_id = c.id)
$$;

-- The signed-in caller while their session lasts: the token's user when its `session_id` names a
-- session Supabase Auth still has for that user (not past its not_after), else null. A token naming no
-- session, or another user's, has none. API-key requests (claims the configuration API builds, with no
-- user) have none either: their own rule is private.api_key_organization_id().
-- PL/pgSQL, whose statement plans are kept per connection, where a SQL function's body would be planned
-- on every call: a third of the cost (scripts/bench/caller_check.ts).
create function private.live_user_id() returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  claims jsonb := auth.jwt();
  sid text := claims ->> 'session_id';
  uid text := lower(claims ->> 'sub');
begin
  if sid is null or sid !~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or uid is null or uid !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return null;
  end if;
  if exists (
    select 1 from auth.sessions s
    where s.id = sid::uuid and s.user_id = uid::uuid
      and (s.not_after is null or s.not_after > now())
  ) then
    return uid::uuid;
  end if;
  return null;
end;
$$;

-- Whether the caller's token belongs to a live session (the configuration API answers 401
-- session_not_found when it does not).
create function private.session_is_live() returns boolean
language sql stable
set search_path = ''
as $$
  select private.live_user_id() is not null
$$;

-- The claimed organization if the caller is still a member of it, else null: the tenant of every row
-- a user may touch.
create function private.active_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select p.organization_id
  from public.profiles p
  where p.user_id = private.live_user_id()
    and p.organization_id = private.claimed_organization_id()
$$;

-- The caller's live role in the active organization, or null.
create function private.active_role() returns text
language sql stable security definer
set search_path = ''
as $$
  select p.role
  from public.profiles p
  where p.user_id = private.live_user_id()
    and p.organization_id = private.claimed_organization_id()
$$;

-- The active organization if the caller is an admin there, else null.
create function private.admin_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select p.organization_id
  from public.profiles p
  where p.user_id = private.live_user_id()
    and p.organization_id = private.claimed_organization_id()
    and p.role = 'admin'
$$;

-- Every organization the caller belongs to (for the organization switcher).
create function private.member_organization_ids() returns setof uuid
language sql stable security definer
set search_path = ''
as $$
  select p.organization_id from public.profiles p where p.user_id = private.live_user_id()
$$;

-- Membership check for an arbitrary organization.
create function private.is_member(org uuid) returns boolean
language sql stable security definer
set search_path = ''
as $$
  select exists (
    select 1 from public.profiles p where p.user_id = private.live_user_id() and p.organization_id = org
  )
$$;

revoke all on all functions in schema private from public;
grant execute on all functions in schema private to authenticated, service_role;

-- Row-level security ----------------------------------------------------------------------------------
-- Two doors (docs/two-doors.md#two-doors-one-rule): policies `to authenticated` hold for the Data
-- API and for the configuration API alike (config_api is a member of authenticated); policies
-- `to config_api` only for the configuration API, which PostgREST's login cannot become. What each role
-- may do at all is granted table by table, after the policies.
alter table public.organizations enable row level security;
alter table public.profiles enable row level security;
alter table public.organization_settings enable row level security;
alter table public.user_active_organization enable row level security;
alter table public.platform_user_flags enable row level security;

-- organizations: members see the organizations they belong to; admins rename their active one (in the
-- settings area). Creating organizations is the configuration API's or the server's.
create policy organizations_select on public.organizations
  for select to authenticated
  using (id in (select private.member_organization_ids()));
create policy organizations_update on public.organizations
  for update to config_api
  using (id = (select private.admin_organization_id()))
  with check (id = (select private.admin_organization_id()));

-- profiles: a user sees their own memberships everywhere, and the people of their active organization.
-- Admins change roles in and remove people from their active organization, in the settings area. Nobody
-- adds a membership by writing a row: a membership is consented to, by accepting an invitation
-- (public.accept_invitation, 20261122100300_invitations.sql), so no organization can enroll a user, let
-- alone become the organization that user's next token lands in (the hook prefers the oldest membership).
create policy profiles_select on public.profiles
  for select to authenticated
  using (user_id = (select private.live_user_id()) or organization_id = (select private.active_organization_id()));
create policy profiles_update on public.profiles
  for update to config_api
  using (organization_id = (select private.admin_organization_id()))
  with check (organization_id = (select private.admin_organization_id()));
create policy profiles_delete on public.profiles
  for delete to config_api
  using (organization_id = (select private.admin_organization_id()));

-- organization_settings: admins of the active organization, in the settings area. The inbound secrets
-- (webhook_secret, payments_webhook_secret) are write-only for every user role: the receivers read them
-- as the server.
create policy organization_settings_admin on public.organization_settings
  for all to config_api
  using (organization_id = (select private.admin_organization_id()))
  with check (organization_id = (select private.admin_organization_id()));

-- user_active_organization: its user reads it and, through set_active_organization(), writes it: only
-- their own row, naming an organization they belong to.
create policy user_active_organization_select on public.user_active_organization
  for select to authenticated
  using (user_id = (select private.live_user_id()));
create policy user_active_organization_insert on public.user_active_organization
  for insert to authenticated
  with check (user_id = (select private.live_user_id()) and private.is_member(organization_id));
create policy user_active_organization_update on public.user_active_organization
  for update to authenticated
  using (user_id = (select private.live_user_id()))
  with check (user_id = (select private.live_user_id()) and private.is_member(organization_id));

-- platform_user_flags: a user may read their own flags; nobody may write them.
create policy platform_user_flags_select on public.platform_user_flags
  for select to authenticated
  using (user_id = (select private.live_user_id()));

-- What each role may do at all (no default privileges in public: see the top of this file). Server-set
-- columns stay server-set: ids, organization and user of a membership, and every created_at (the hook
-- orders memberships by it). Users write only what a person decides.
grant select on public.organizations, public.profiles, public.user_active_organization,
  public.platform_user_flags to authenticated;
grant insert (user_id, organization_id), update (organization_id, updated_at)
  on public.user_active_organization to authenticated;
grant update (name) on public.organizations to config_api;
grant update (role, display_name), delete on public.profiles to config_api;
grant select (organization_id, updated_at), insert (organization_id, webhook_secret), update (webhook_secret)
  on public.organization_settings to config_api;

-- Every organization keeps an admin: through user roles the last admin can neither leave, be removed nor
-- be demoted (make someone else admin first). The server (service role, account deletion, an
-- organization's deletion) is not held to it. Taking the organization's row lock serializes two admins
-- leaving at the same moment, so they cannot both pass the check.
create function private.keep_an_admin() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if current_setting('role', true) not in ('authenticated', 'anon', 'config_api') or old.role <> 'admin'
     or (tg_op = 'UPDATE' and new.role = 'admin') then
    return coalesce(new, old);
  end if;
  perform 1 from public.organizations o where o.id = old.organization_id for update;
  if not exists (
    select 1 from public.profiles p
    where p.organization_id = old.organization_id and p.role = 'admin' and p.id <> old.id
  ) then
    raise exception 'the last admin of an organization cannot leave or stop being admin'
      using errcode = '55000', hint = 'Make another member an admin first.';
  end if;
  return coalesce(new, old);
end;
$$;
create trigger profiles_keep_an_admin before delete or update of role on public.profiles
  for each row execute function private.keep_an_admin();
