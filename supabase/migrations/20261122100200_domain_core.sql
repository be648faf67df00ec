-- The church domain records that the integration layer reads and writes: members, donations (one-off
-- and recurring), attendance and workflows. Every row belongs to one organization; every table is
-- under the tenancy policies at the end of this file.
--
-- Text columns have sane maximum lengths, refused at write with the constraint's name in the error
-- (`members_first_name_length`...): any staff member may write these rows, and every row travels in
-- outbound webhook bodies; a 10 MiB name would otherwise be a 20 MiB body (row and delta) sent to
-- every subscribed endpoint. Values from providers are validated shorter than these before they are
-- written (inbound webhooks: 100 characters for provider ids).

-- Members ---------------------------------------------------------------------------------------------
create table public.members (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  first_name text not null default '' constraint members_first_name_length check (length(first_name) <= 200),
  last_name text not null default '' constraint members_last_name_length check (length(last_name) <= 200),
  email text constraint members_email_length check (length(email) <= 320),
  primary_phone text constraint members_primary_phone_length check (length(primary_phone) <= 64),
  -- Digits only, no leading '+': what inbound WhatsApp sender numbers are matched against. Derived by
  -- the database so no writer can let it drift from primary_phone.
  primary_phone_normalized text generated always as (
    nullif(regexp_replace(coalesce(primary_phone, ''), '[^0-9]', '', 'g'), '')
  ) stored,
  status text not null default 'active' check (status in ('visitor', 'active', 'inactive', 'lost')),
  source text not null default 'manual' check (source in ('manual', 'bulk', 'visitor_form', 'import', 'api')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Target of the composite foreign keys below, which keep every reference inside one organization.
  unique (organization_id, id)
);
create index members_organization_id_idx on public.members (organization_id, created_at);
create index members_phone_idx on public.members (organization_id, primary_phone_normalized)
  where primary_phone_normalized is not null;

-- Recurring donations (subscriptions at the checkout provider) ------------------------------------------
create table public.recurring_donations (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  member_id uuid,
  gateway_subscription_id text not null
    constraint recurring_donations_gateway_subscription_id_length check (length(gateway_subscription_id) <= 255),
  status text not null default 'pending',
  amount_minor bigint check (amount_minor is null or amount_minor >= 0),
  currency text check (currency is null or currency ~ '^[A-Z]{3}$'),
  interval text constraint recurring_donations_interval_length check (length(interval) <= 64),
  -- The members the row concerns ("Who a row concerns", end of 20261122100200_domain_core.sql).
  member_ids uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (organization_id, gateway_subscription_id),
  unique (organization_id, id),
  foreign key (organization_id, member_id) references public.members (organization_id, id)
    on delete set null (member_id)
);
create index recurring_donations_member_idx on public.recurring_donations (member_id);

-- Donations (manual entries, online one-off payments and recurring charges) ------------------------------
create table public.donations (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  member_id uuid,
  recurring_donation_id uuid,
  amount_minor bigint not null check (amount_minor > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  source text not null default 'manual' check (source in ('manual', 'online', 'recurring')),
  gateway_payment_id text
    constraint donations_gateway_payment_id_length check (length(gateway_payment_id) <= 255),
  donated_at timestamptz not null default now(),
  -- The members the row concerns ("Who a row concerns", end of 20261122100200_domain_core.sql).
  member_ids uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  -- A provider payment is recorded once per organization, whatever retries or replays bring.
  unique (organization_id, gateway_payment_id),
  foreign key (organization_id, member_id) references public.members (organization_id, id)
    on delete set null (member_id),
  foreign key (organization_id, recurring_donation_id)
    references public.recurring_donations (organization_id, id) on delete set null (recurring_donation_id)
);
create index donations_organization_idx on public.donations (organization_id, donated_at);
create index donations_member_idx on public.donations (member_id);
create index donations_recurring_idx on public.donations (recurring_donation_id);

-- Attendance ---------------------------------------------------------------------------------------------
create table public.attendance (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  member_id uuid not null,
  service_date date not null default current_date,
  service_name text constraint attendance_service_name_length check (length(service_name) <= 200),
  created_at timestamptz not null default now(),
  foreign key (organization_id, member_id) references public.members (organization_id, id) on delete cascade
);
create index attendance_organization_idx on public.attendance (organization_id, service_date);
create index attendance_member_idx on public.attendance (member_id);

-- Workflows ----------------------------------------------------------------------------------------------
create table public.workflows (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  name text not null constraint workflows_name_length check (length(name) <= 200),
  created_at timestamptz not null default now(),
  unique (organization_id, id)
);
create index workflows_organization_idx on public.workflows (organization_id);

create table public.workflow_runs (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  workflow_id uuid not null,
  member_id uuid,
  -- 'completed' and 'failed' are the finished states.
  status text not null default 'running' check (status in ('running', 'completed', 'failed', 'cancelled')),
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  foreign key (organization_id, workflow_id) references public.workflows (organization_id, id) on delete cascade,
  foreign key (organization_id, member_id) references public.members (organization_id, id)
    on delete set null (member_id)
);
create index workflow_runs_organization_idx on public.workflow_runs (organization_id, started_at);
create index workflow_runs_workflow_idx on public.workflow_runs (workflow_id);

-- A row's organization never changes: moving a row between tenants would leak it.
create function private.forbid_organization_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.organization_id is distinct from old.organization_id then
    raise exception 'organization_id cannot change' using errcode = '42501';
  end if;
  return new;
end;
$$;

create function private.touch_updated_at() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;

-- A tenant table's triggers: `<table>_fixed_org`, and with `touch` `<table>_touch` (its updated_at).
-- Later migrations give their tenant tables the same.
create function private.create_tenant_triggers(tbl text, touch boolean default false) returns void
language plpgsql
set search_path = ''
as $$
begin
  execute format('create trigger %I before update of organization_id on public.%I
                    for each row execute function private.forbid_organization_change()', tbl || '_fixed_org', tbl);
  if touch then
    execute format('create trigger %I before update on public.%I
                      for each row execute function private.touch_updated_at()', tbl || '_touch', tbl);
  end if;
end;
$$;
revoke all on function private.create_tenant_triggers(text, boolean) from public, authenticated, service_role;

select private.create_tenant_triggers(t, t in ('members', 'recurring_donations'))
from unnest(array['members', 'recurring_donations', 'donations', 'attendance', 'workflows', 'workflow_runs']) t;

-- Row-level security --------------------------------------------------------------------------------
-- Two doors (docs/two-doors.md#two-doors-one-rule): the browser reaches these tables through
-- Supabase's Data API as `authenticated`, the settings area through the configuration API as
-- `config_api` (a member of authenticated, which PostgREST cannot become). The helpers below give a
-- table its policies for one of them.

-- One policy for `door`: rows of the organization `organization_of()` names (evaluated once per
-- statement, as an initPlan), checked on what a caller reads or deletes (using) and on what they write
-- (with check). Every organization_of() helper knows the caller only while their session is live.
create function private.create_organization_policy(name text, tbl text, cmd text, organization_of regproc,
                                                   door text default 'authenticated')
returns void
language plpgsql
set search_path = ''
as $$
declare
  pinned text := format('organization_id = (select %s())', organization_of);
begin
  if door not in ('authenticated', 'config_api') then
    raise exception 'a policy is for the Data API (authenticated) or the configuration API (config_api), not %', door;
  end if;
  execute format('create policy %I on public.%I for %s to %I', name, tbl, cmd, door)
    || case when cmd <> 'insert' then format(' using (%s)', pinned) else '' end
    || case when cmd in ('insert', 'update') then format(' with check (%s)', pinned) else '' end;
end;
$$;

-- The day-to-day records the wider church app reads and writes through the Data API: members of the
-- active organization read and write its rows (`<table>_<command>`); deleting people and money records
-- is for admins. Grants `commands` on the table to authenticated (so to the configuration API too) and
-- nothing to anon. Later migrations give their day-to-day tables the same four policies, and their
-- read-only ones the select policy alone.
create function private.create_tenant_policies(tbl text, commands text[] default '{select,insert,update,delete}')
returns void
language plpgsql
set search_path = ''
as $$
declare
  cmd text;
begin
  execute format('alter table public.%I enable row level security', tbl);
  execute format('revoke all on public.%I from anon, authenticated', tbl);
  execute format('grant %s on public.%I to authenticated', array_to_string(commands, ', '), tbl);
  foreach cmd in array commands loop
    perform private.create_organization_policy(tbl || '_' || cmd, tbl, cmd,
      (case cmd when 'delete' then 'private.admin_organization_id' else 'private.active_organization_id' end)::regproc);
  end loop;
end;
$$;

-- The settings area's tables, for the configuration API alone: row-level security on, and a policy
-- `<table>_admin_<command>` to config_api for each command, holding rows to the organization `admin_of`
-- names: private.admin_organization_id() (admins of the active organization), or for the webhook
-- settings private.webhook_admin_organization_id() (their API keys too). Grants stay with each table
-- (several keep columns back: secrets, hashes, server-set fields); the Data API gets none.
create function private.create_admin_policies(
  tbl text, commands text[], admin_of regproc default 'private.admin_organization_id'
) returns void
language plpgsql
set search_path = ''
as $$
begin
  execute format('alter table public.%I enable row level security', tbl);
  perform private.create_organization_policy(tbl || '_admin_' || cmd, tbl, cmd, admin_of, 'config_api')
  from unnest(commands) cmd;
end;
$$;
revoke all on function private.create_organization_policy(text, text, text, regproc, text),
  private.create_tenant_policies(text, text[]), private.create_admin_policies(text, text[], regproc)
  from public, authenticated, service_role;

select private.create_tenant_policies(t)
from unnest(array['members', 'recurring_donations', 'donations', 'attendance', 'workflows', 'workflow_runs']) t;

-- Who a row concerns ----------------------------------------------------------------------------------
-- Every row that holds a person's data records, when it is written, which members it concerns: its
-- `member_ids` (sorted, no duplicates). Erasing a member follows these links
-- (20261125110000_person_erasure.sql), never a search of text that staff or a provider can plant. A
-- row linked to the erased member alone is theirs and goes; a row linked to someone else too is kept
-- for them. Links only grow: a later edit (staff re-linking a donation or a WhatsApp thread to another
-- member) adds the new member and keeps the old, so no edit can hand one person's rows to another
-- person's erasure. Only a running erasure removes a link, and only the member it erases.
-- See docs/configuration-api.md#erasing-a-person

-- The member whose erasure is running in this transaction (private.erasure_step sets it, as the server),
-- or null. Users (PostgREST's roles, the configuration API's) never count as the erasure, whatever
-- they set.
create function private.erasing_member() returns uuid
language sql stable
set search_path = ''
as $$
  select case when coalesce(current_setting('role', true), 'none') not in ('anon', 'authenticated', 'config_api')
              then nullif(current_setting('private.erasing_member', true), '')::uuid end
$$;

-- Only the server writes links: a user's write (the Data API's roles, the configuration API's) that
-- sets `member_ids` to anything but what the row has is refused, so staff cannot plant a member's id on a
-- row they may write (an unlinked thread, a donation) for that member's erasure to take. Linking a row
-- to a member is setting its member_id, which the triggers below turn into a link. Only the user's own
-- statement is checked (trigger depth 1): a message's trigger carrying its links to its thread is ours.
create function private.refuse_user_links(before uuid[], after uuid[]) returns void
language plpgsql stable
set search_path = ''
as $$
begin
  if coalesce(current_setting('role', true), 'none') in ('anon', 'authenticated', 'config_api')
     and pg_trigger_depth() <= 1 and after is distinct from coalesce(before, '{}') then
    raise exception 'member_ids is set by the server; link a row to a member through its member_id'
      using errcode = '42501';
  end if;
end;
$$;

-- `links` with `additions`, sorted and without duplicates or nulls.
create function private.member_links_add(links uuid[], additions uuid[]) returns uuid[]
language sql immutable parallel safe
set search_path = ''
as $$
  select coalesce(array_agg(distinct x order by x), '{}')
  from unnest(coalesce(links, '{}') || coalesce(additions, '{}')) x
  where x is not null
$$;

-- `links` grown by those of `wanted` that are members of the organization now: a writer may link a
-- row to a member (as setting its member_id does), never to an id that is no member's (an erased one).
-- Runs on every write of a linked row: nothing new (the usual case) costs no query, and the new ones
-- are looked up by primary key.
create function private.member_links_grow(org uuid, links uuid[], wanted uuid[]) returns uuid[]
language plpgsql stable
set search_path = ''
as $$
declare
  fresh uuid[] := array(select x from unnest(wanted) x where x is not null and x <> all (coalesce(links, '{}')));
begin
  if cardinality(fresh) = 0 then
    return coalesce(links, '{}');
  end if;
  return private.member_links_add(links, array(
    select m.id from public.members m where m.id = any (fresh) and m.organization_id = org));
end;
$$;

-- The links of a row with a `member_id` (donations, recurring donations, WhatsApp threads): whatever
-- it had, plus its member now, plus any member the writer added. During an erasure the one change is
-- the erased member leaving the links. Security definer: staff write these rows, and need no privilege
-- on the helpers.
create function private.link_member_id() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  erasing uuid := private.erasing_member();
begin
  if tg_op = 'UPDATE' and erasing is not null then
    new.member_ids := array_remove(old.member_ids, erasing);
    return new;
  end if;
  perform private.refuse_user_links(case when tg_op = 'UPDATE' then old.member_ids end, new.member_ids);
  new.member_ids := private.member_links_grow(new.organization_id,
    case when tg_op = 'UPDATE' then old.member_ids else '{}' end, new.member_ids || new.member_id);
  return new;
end;
$$;
-- The links of a row addressed to an e-mail address (a mail, an invitation; the column is the
-- trigger's argument): the organization's members with that address when it is written.
create function private.link_member_email() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  address text := lower(trim(to_jsonb(new) ->> tg_argv[0]));
begin
  new.member_ids := private.member_links_add('{}', array(
    select m.id from public.members m
     where m.organization_id = new.organization_id and lower(trim(m.email)) = address));
  return new;
end;
$$;
revoke all on function private.erasing_member(), private.refuse_user_links(uuid[], uuid[]),
  private.member_links_add(uuid[], uuid[]),
  private.member_links_grow(uuid, uuid[], uuid[]), private.link_member_id(), private.link_member_email()
  from public, anon, authenticated;

create trigger donations_member_links before insert or update of member_id, member_ids on public.donations
  for each row execute function private.link_member_id();
create trigger recurring_donations_member_links
  before insert or update of member_id, member_ids on public.recurring_donations
  for each row execute function private.link_member_id();
create index donations_member_links_idx on public.donations using gin (member_ids) where member_ids <> '{}';
create index recurring_donations_member_links_idx on public.recurring_donations using gin (member_ids)
  where member_ids <> '{}';
-- Mails and invitations are linked to the members with their address when they are written.
create index members_email_idx on public.members (organization_id, lower(trim(email))) where email is not null;
