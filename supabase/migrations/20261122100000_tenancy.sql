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

-- Organization names ------------------------------------------------------------------------------------
-- A name is put into mail subjects and bodies (invitations go to any address an admin types), into every
-- page's header and the organization switcher. So it is one line that shows what it says: normalized
-- (NFC, every kind of space one plain space, trimmed), with no control, format, bidi-control or
-- default-ignorable character (zero-width joiners, variation selectors but the emoji/text one right after
-- a pictograph, tag characters, the Hangul fillers
-- U+115F, U+1160, U+3164, U+FFA0, the combining grapheme joiner), nor the blank-looking braille pattern
-- U+2800, at most 5 combining marks in a row (150 of them draw over the rows around the name), and not
-- blank once that is done. A line break would let an admin write a mail's body, a right-to-left
-- override or an invisible character would let one church's name pass for another's.
-- The configuration API applies the same rule first, to say what is wrong at the field
-- (supabase/functions/webhooks/organization_name.ts); tests/organizations_api_test.ts holds the two
-- equal over every code point.

-- NFC, each run of spaces (Unicode Zs) one U+0020, then trimmed of what JavaScript's trim() removes.
create function private.normalize_organization_name(name text) returns text
language sql immutable parallel safe strict
set search_path = ''
as $$
  select pg_catalog.btrim(
    pg_catalog.regexp_replace(normalize(name, nfc), '[\u0020\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+', ' ', 'g'),
    E' \t\n\u000b\f\r\u2028\u2029\ufeff')
$$;

-- What is wrong with a (normalized) name, or null: not_normalized, invisible_character, blank, too_long
-- (over 200 characters), combining_marks (more than 5 in a row). One function with its patterns inline:
-- a nested call of a function with its own search_path costs more than all the matching.
create function private.organization_name_problem(name text) returns text
language plpgsql immutable parallel safe
set search_path = ''
as $$
declare
  -- Unicode's combining marks (general category M) as the API's runtime knows them (\p{M}).
  marks constant text :=
      '\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1-\u05c2\u05c4-\u05c5\u05c7\u0610-\u061a' ||
      '\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7-\u06e8\u06ea-\u06ed\u0711\u0730-\u074a' ||
      '\u07a6-\u07b0\u07eb-\u07f3\u07fd\u0816-\u0819\u081b-\u0823\u0825-\u0827\u0829-\u082d' ||
      '\u0859-\u085b\u0897-\u089f\u08ca-\u08e1\u08e3-\u0903\u093a-\u093c\u093e-\u094f\u0951-\u0957' ||
      '\u0962-\u0963\u0981-\u0983\u09bc\u09be-\u09c4\u09c7-\u09c8\u09cb-\u09cd\u09d7\u09e2-\u09e3\u09fe' ||
      '\u0a01-\u0a03\u0a3c\u0a3e-\u0a42\u0a47-\u0a48\u0a4b-\u0a4d\u0a51\u0a70-\u0a71\u0a75\u0a81-\u0a83' ||
      '\u0abc\u0abe-\u0ac5\u0ac7-\u0ac9\u0acb-\u0acd\u0ae2-\u0ae3\u0afa-\u0aff\u0b01-\u0b03\u0b3c' ||
      '\u0b3e-\u0b44\u0b47-\u0b48\u0b4b-\u0b4d\u0b55-\u0b57\u0b62-\u0b63\u0b82\u0bbe-\u0bc2' ||
      '\u0bc6-\u0bc8\u0bca-\u0bcd\u0bd7\u0c00-\u0c04\u0c3c\u0c3e-\u0c44\u0c46-\u0c48\u0c4a-\u0c4d' ||
      '\u0c55-\u0c56\u0c62-\u0c63\u0c81-\u0c83\u0cbc\u0cbe-\u0cc4\u0cc6-\u0cc8\u0cca-\u0ccd' ||
      '\u0cd5-\u0cd6\u0ce2-\u0ce3\u0cf3\u0d00-\u0d03\u0d3b-\u0d3c\u0d3e-\u0d44\u0d46-\u0d48' ||
      '\u0d4a-\u0d4d\u0d57\u0d62-\u0d63\u0d81-\u0d83\u0dca\u0dcf-\u0dd4\u0dd6\u0dd8-\u0ddf\u0df2-\u0df3' ||
      '\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ece\u0f18-\u0f19\u0f35\u0f37\u0f39' ||
      '\u0f3e-\u0f3f\u0f71-\u0f84\u0f86-\u0f87\u0f8d-\u0f97\u0f99-\u0fbc\u0fc6\u102b-\u103e' ||
      '\u1056-\u1059\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d\u108f' ||
      '\u109a-\u109d\u135d-\u135f\u1712-\u1715\u1732-\u1734\u1752-\u1753\u1772-\u1773\u17b4-\u17d3' ||
      '\u17dd\u180b-\u180d\u180f\u1885-\u1886\u18a9\u1920-\u192b\u1930-\u193b\u1a17-\u1a1b\u1a55-\u1a5e' ||
      '\u1a60-\u1a7c\u1a7f\u1ab0-\u1ace\u1b00-\u1b04\u1b34-\u1b44\u1b6b-\u1b73\u1b80-\u1b82' ||
      '\u1ba1-\u1bad\u1be6-\u1bf3\u1c24-\u1c37\u1cd0-\u1cd2\u1cd4-\u1ce8\u1ced\u1cf4\u1cf7-\u1cf9' ||
      '\u1dc0-\u1dff\u20d0-\u20f0\u2cef-\u2cf1\u2d7f\u2de0-\u2dff\u302a-\u302f\u3099-\u309a' ||
      '\ua66f-\ua672\ua674-\ua67d\ua69e-\ua69f\ua6f0-\ua6f1\ua802\ua806\ua80b\ua823-\ua827\ua82c' ||
      '\ua880-\ua881\ua8b4-\ua8c5\ua8e0-\ua8f1\ua8ff\ua926-\ua92d\ua947-\ua953\ua980-\ua983' ||
      '\ua9b3-\ua9c0\ua9e5\uaa29-\uaa36\uaa43\uaa4c-\uaa4d\uaa7b-\uaa7d\uaab0\uaab2-\uaab4\uaab7-\uaab8' ||
      '\uaabe-\uaabf\uaac1\uaaeb-\uaaef\uaaf5-\uaaf6\uabe3-\uabea\uabec-\uabed\ufb1e\ufe00-\ufe0f' ||
      '\ufe20-\ufe2f\U000101fd\U000102e0\U00010376-\U0001037a\U00010a01-\U00010a03\U00010a05-\U00010a06' ||
      '\U00010a0c-\U00010a0f\U00010a38-\U00010a3a\U00010a3f\U00010ae5-\U00010ae6\U00010d24-\U00010d27' ||
      '\U00010d69-\U00010d6d\U00010eab-\U00010eac\U00010efc-\U00010eff\U00010f46-\U00010f50' ||
      '\U00010f82-\U00010f85\U00011000-\U00011002\U00011038-\U00011046\U00011070\U00011073-\U00011074' ||
      '\U0001107f-\U00011082\U000110b0-\U000110ba\U000110c2\U00011100-\U00011102\U00011127-\U00011134' ||
      '\U00011145-\U00011146\U00011173\U00011180-\U00011182\U000111b3-\U000111c0\U000111c9-\U000111cc' ||
      '\U000111ce-\U000111cf\U0001122c-\U00011237\U0001123e\U00011241\U000112df-\U000112ea' ||
      '\U00011300-\U00011303\U0001133b-\U0001133c\U0001133e-\U00011344\U00011347-\U00011348' ||
      '\U0001134b-\U0001134d\U00011357\U00011362-\U00011363\U00011366-\U0001136c\U00011370-\U00011374' ||
      '\U000113b8-\U000113c0\U000113c2\U000113c5\U000113c7-\U000113ca\U000113cc-\U000113d0\U000113d2' ||
      '\U000113e1-\U000113e2\U00011435-\U00011446\U0001145e\U000114b0-\U000114c3\U000115af-\U000115b5' ||
      '\U000115b8-\U000115c0\U000115dc-\U000115dd\U00011630-\U00011640\U000116ab-\U000116b7' ||
      '\U0001171d-\U0001172b\U0001182c-\U0001183a\U00011930-\U00011935\U00011937-\U00011938' ||
      '\U0001193b-\U0001193e\U00011940\U00011942-\U00011943\U000119d1-\U000119d7\U000119da-\U000119e0' ||
      '\U000119e4\U00011a01-\U00011a0a\U00011a33-\U00011a39\U00011a3b-\U00011a3e\U00011a47' ||
      '\U00011a51-\U00011a5b\U00011a8a-\U00011a99\U00011c2f-\U00011c36\U00011c38-\U00011c3f' ||
      '\U00011c92-\U00011ca7\U00011ca9-\U00011cb6\U00011d31-\U00011d36\U00011d3a\U00011d3c-\U00011d3d' ||
      '\U00011d3f-\U00011d45\U00011d47\U00011d8a-\U00011d8e\U00011d90-\U00011d91\U00011d93-\U00011d97' ||
      '\U00011ef3-\U00011ef6\U00011f00-\U00011f01\U00011f03\U00011f34-\U00011f3a\U00011f3e-\U00011f42' ||
      '\U00011f5a\U00013440\U00013447-\U00013455\U0001611e-\U0001612f\U00016af0-\U00016af4' ||
      '\U00016b30-\U00016b36\U00016f4f\U00016f51-\U00016f87\U00016f8f-\U00016f92\U00016fe4' ||
      '\U00016ff0-\U00016ff1\U0001bc9d-\U0001bc9e\U0001cf00-\U0001cf2d\U0001cf30-\U0001cf46' ||
      '\U0001d165-\U0001d169\U0001d16d-\U0001d172\U0001d17b-\U0001d182\U0001d185-\U0001d18b' ||
      '\U0001d1aa-\U0001d1ad\U0001d242-\U0001d244\U0001da00-\U0001da36\U0001da3b-\U0001da6c\U0001da75' ||
      '\U0001da84\U0001da9b-\U0001da9f\U0001daa1-\U0001daaf\U0001e000-\U0001e006\U0001e008-\U0001e018' ||
      '\U0001e01b-\U0001e021\U0001e023-\U0001e024\U0001e026-\U0001e02a\U0001e08f\U0001e130-\U0001e136' ||
      '\U0001e2ae\U0001e2ec-\U0001e2ef\U0001e4ec-\U0001e4ef\U0001e5ee-\U0001e5ef\U0001e8d0-\U0001e8d6' ||
      '\U0001e944-\U0001e94a\U000e0100-\U000e01ef';
  -- Pictographs (Extended_Pictographic): a variation selector right after one picks its emoji or text
  -- look ("✝️"); anywhere else it hides in the name.
  pictographs constant text :=
      '\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9-\u21aa\u231a-\u231b\u2328\u2388\u23cf' ||
      '\u23e9-\u23f3\u23f8-\u23fa\u24c2\u25aa-\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u2605\u2607-\u2612' ||
      '\u2614-\u2685\u2690-\u2705\u2708-\u2712\u2714\u2716\u271d\u2721\u2728\u2733-\u2734\u2744\u2747' ||
      '\u274c\u274e\u2753-\u2755\u2757\u2763-\u2767\u2795-\u2797\u27a1\u27b0\u27bf\u2934-\u2935' ||
      '\u2b05-\u2b07\u2b1b-\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001f0ff' ||
      '\U0001f10d-\U0001f10f\U0001f12f\U0001f16c-\U0001f171\U0001f17e-\U0001f17f\U0001f18e' ||
      '\U0001f191-\U0001f19a\U0001f1ad-\U0001f1e5\U0001f201-\U0001f20f\U0001f21a\U0001f22f' ||
      '\U0001f232-\U0001f23a\U0001f23c-\U0001f23f\U0001f249-\U0001f3fa\U0001f400-\U0001f53d' ||
      '\U0001f546-\U0001f64f\U0001f680-\U0001f6ff\U0001f774-\U0001f77f\U0001f7d5-\U0001f7ff' ||
      '\U0001f80c-\U0001f80f\U0001f848-\U0001f84f\U0001f85a-\U0001f85f\U0001f888-\U0001f88f' ||
      '\U0001f8ae-\U0001f8ff\U0001f90c-\U0001f93a\U0001f93c-\U0001f945\U0001f947-\U0001faff' ||
      '\U0001fc00-\U0001fffd';
begin
  return case
    when name is distinct from private.normalize_organization_name(name) then 'not_normalized'
    when name ~ ('[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2'
                 '\u115f-\u1160\u17b4-\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164'
                 '\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f'
                 '\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]') then 'invisible_character'
    when name ~ ('(^|[^' || pictographs || '])[\ufe0e\ufe0f]') then 'invisible_character'
    when name !~ ('[^ ' || marks || ']') then 'blank'
    when pg_catalog.length(name) > 200 then 'too_long'
    when name ~ ('[' || marks || ']{6}') then 'combining_marks'
  end;
end;
$$;

-- Organizations and memberships ---------------------------------------------------------------------
create table public.organizations (
  id uuid primary key default gen_random_uuid(),
  -- One line that shows what it says: private.organization_name_problem above (normalized on the way in
  -- by the trigger organizations_name below).
  name text not null constraint organizations_name_check check (private.organization_name_problem(name) is null),
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

-- Every write of a name stores it normalized (NFC, one kind of space), whoever writes it.
create function private.normalize_organization_name_on_write() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.name := private.normalize_organization_name(new.name);
  return new;
end;
$$;
create trigger organizations_name before insert or update of name on public.organizations
  for each row execute function private.normalize_organization_name_on_write();

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
