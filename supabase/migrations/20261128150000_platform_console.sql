-- The platform console: what platform administrators (public.platform_user_flags) may do across
-- organizations, each action recorded in the affected organization's audit log
-- (20261207170100_audit_log.sql). Platform administrators see every organization's health (counts and
-- times, never a payload body, a secret or a member), suspend and resume an organization; superadmins
-- also grant and revoke platform admin. The configuration API (`/webhooks/platform/...`) is the only caller: every
-- function here is granted to `config_api` alone, and decides by the caller's live flags and live
-- session, never by the token's is_platform_admin / is_superadmin claims.
--
-- Suspension itself is read where it takes effect: private.organization_suspensions and
-- private.claimed_organization_id() (20261122100000_tenancy.sql: nobody acts for a suspended
-- organization through either door), the access-token hook (lands no one in it), the dispatcher's claim
-- and housekeeping (20261122130200_outbound_webhook_dispatch.sql: its deliveries wait, due, and their
-- 24-hour windows do not run out), endpoint auto-disable and operator health, and the inbound pipeline
-- (supabase/functions/_shared/inbound/pipeline.ts: logged, then 503 so the provider sends it again).
-- See docs/platform-console.md

-- The audit log of every action here, and the recorder these functions call (private.platform_audit),
-- are defined with the rest of the audit log in 20261207170100_audit_log.sql.

-- Who is asking -----------------------------------------------------------------------------------------
-- The caller's platform role from the live flags, with a live session: 'superadmin' (who is also a
-- platform administrator), 'platform_admin', or null (everyone else, API keys included).
create function private.platform_role() returns text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  flags public.platform_user_flags;
begin
  if auth.uid() is null or not private.session_is_live() then
    return null;
  end if;
  select * into flags from public.platform_user_flags f where f.user_id = auth.uid();
  return case when flags.is_superadmin then 'superadmin' when flags.is_platform_admin then 'platform_admin' end;
end;
$$;

-- The caller's role if it is at least `needed`, else an error the API maps to 403.
create function private.require_platform_role(needed text) returns text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  held text := private.platform_role();
begin
  if held is null or (needed = 'superadmin' and held <> 'superadmin') then
    raise exception 'only % can do this', case needed when 'superadmin' then 'superadmins' else 'platform administrators' end
      using errcode = '42501', hint = needed || '_required';
  end if;
  return held;
end;
$$;

-- Whether the organization the caller's token (or API key) names is suspended, so the configuration
-- API can say so instead of a bare 403. The claim is one the server verified.
create function private.claimed_organization_is_suspended() returns boolean
language sql stable security definer
set search_path = ''
as $$
  select exists (select 1 from private.organization_suspensions s
                 where s.organization_id::text = auth.jwt() ->> 'organization_id')
$$;

-- For the organization switcher: whether an organization the caller belongs to is suspended.
create function private.membership_is_suspended(org uuid) returns boolean
language sql stable security definer
set search_path = ''
as $$
  select private.is_member(org)
     and exists (select 1 from private.organization_suspensions s where s.organization_id = org)
$$;

-- For a suspended organization's own admins: why, in the platform administrator's words (written for
-- them; the console says so). Staff, and everyone else, get null: they are told only that it is suspended.
create function private.membership_suspension_reason(org uuid) returns text
language sql stable security definer
set search_path = ''
as $$
  select s.reason
  from private.organization_suspensions s
  join public.profiles p on p.organization_id = s.organization_id
  where s.organization_id = org and p.user_id = private.live_user_id() and p.role = 'admin'
$$;

-- Health ------------------------------------------------------------------------------------------------
-- Organizations with their health, a page at a time in (name, id) order: optionally one organization,
-- those whose name contains `search`, or only the suspended ones. Each count reads a bounded number of
-- index entries of one organization, so a page costs the same whatever one tenant holds: open
-- deliveries are read at most private.platform_count_cap() per organization (from the partial index of
-- open ones, through its endpoints), inbound rows likewise. That holds only on indexes read in order
-- with their LIMIT, so sequential and bitmap scans are off here (with one tenant holding most of a
-- table the statistics say every organization does, and each count read the whole table: 3.5 s a page
-- of 51 ordinary organizations in scripts/bench/platform_console.ts), and JIT too (it compiled for
-- 280 ms to run a few ms). Nothing here returns a payload, a body, a secret, a member or an e-mail of
-- the organization's people.
create function private.platform_count_cap() returns integer
language sql immutable
set search_path = ''
as $$ select 1000 $$;

create function private.platform_organizations(only_id uuid, search text, suspended_only boolean,
                                               after_name text, after_id uuid, max_rows integer)
returns table (
  id uuid, name text, created_at timestamptz, people integer,
  suspended_at timestamptz, suspension_reason text, suspended_by_email text,
  endpoints integer, endpoints_failing integer, deliveries_open integer, deliveries_failing integer,
  inbound_failed_24h integer, inbound_refused_24h integer, inbound_waiting integer,
  last_activity_at timestamptz
)
language plpgsql stable security definer
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
set jit = off
as $$
begin
  perform private.require_platform_role('platform_admin');
  return query
  with page as materialized (
    select o.id, o.name, o.created_at, s.suspended_at, s.reason, s.suspended_by
    from public.organizations o
    left join private.organization_suspensions s on s.organization_id = o.id
    where (only_id is null or o.id = only_id)
      and (search is null or strpos(lower(o.name), lower(search)) > 0)
      and (not coalesce(suspended_only, false) or s.organization_id is not null)
      and (after_name is null or (o.name, o.id) > (after_name, after_id))
    order by o.name, o.id
    limit greatest(least(max_rows, 200), 1)
  )
  select p.id, p.name, p.created_at,
         (select count(*)::integer from public.profiles pr where pr.organization_id = p.id),
         p.suspended_at, p.reason,
         (select u.email::text from auth.users u where u.id = p.suspended_by),
         ep.endpoints, ep.failing, dl.open, dl.failing, ib.failed, ib.refused, ib.waiting,
         greatest(ep.last_attempt_at, ib.last_received_at,
                  (select max(ev.created_at) from public.webhook_events ev where ev.organization_id = p.id),
                  (select max(m.created_at) from public.members m where m.organization_id = p.id))
  from page p
  cross join lateral (
    -- At most private.webhook_max_endpoints() endpoints, each health row by primary key.
    select count(*) filter (where e.enabled)::integer as endpoints,
           count(*) filter (where e.enabled and h.last_outcome = 'failed')::integer as failing,
           max(h.last_attempt_at) as last_attempt_at
    from public.webhook_endpoints e
    left join public.webhook_endpoint_health h on h.endpoint_id = e.id
    where e.organization_id = p.id
  ) ep
  cross join lateral (
    select count(*)::integer as open, count(*) filter (where x.status = 'retrying')::integer as failing
    from (
      select d.status from public.webhook_deliveries d
      where d.endpoint_id = any (array(select e.id from public.webhook_endpoints e where e.organization_id = p.id))
        and d.status = any (private.webhook_open_states())
      limit private.platform_count_cap()
    ) x
  ) dl
  cross join lateral (
    select (select count(*)::integer from (
              select from public.inbound_webhook_log l
              where l.organization_id = p.id and l.status = 'failed'
                and l.received_at > now() - interval '24 hours'
              limit private.platform_count_cap()) f) as failed,
           (select coalesce(sum(l.deliveries), 0)::integer from public.inbound_webhook_log l
              where l.organization_id = p.id and l.signature_valid is not true and l.status = 'unverified'
                and l.received_at > now() - interval '24 hours') as refused,
           (select count(*)::integer from (
              select from public.inbound_webhook_log l
              where l.organization_id = p.id and l.status = 'received'
              limit private.platform_count_cap()) w) as waiting,
           (select max(l.received_at) from public.inbound_webhook_log l where l.organization_id = p.id)
             as last_received_at
  ) ib
  order by p.name, p.id;
end;
$$;

-- How many organizations there are, and how many are suspended (the console's heading).
create function private.platform_organization_totals() returns table (organizations integer, suspended integer)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  perform private.require_platform_role('platform_admin');
  return query select (select count(*)::integer from public.organizations),
                      (select count(*)::integer from private.organization_suspensions);
end;
$$;

-- Suspend and resume --------------------------------------------------------------------------------------
-- Suspends an organization, saying why: from the next request on nobody acts for it (deliveries in
-- flight finish; their results are recorded). Returns the audit entry's id.
create function private.platform_suspend_organization(org uuid, reason text) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  open_deliveries integer;
begin
  perform private.require_platform_role('platform_admin');
  -- The organization's row lock orders a suspension against a resumption of the same organization.
  perform 1 from public.organizations o where o.id = org for update;
  if not found then
    raise exception 'no such organization' using errcode = 'P0002';
  end if;
  insert into private.organization_suspensions (organization_id, suspended_by, reason)
  values (org, auth.uid(), trim(reason))
  on conflict (organization_id) do nothing;
  if not found then
    raise exception 'the organization is already suspended' using errcode = '55000', hint = 'already_suspended';
  end if;
  select count(*) into open_deliveries from (
    select from public.webhook_deliveries d
    where d.endpoint_id = any (array(select e.id from public.webhook_endpoints e where e.organization_id = org))
      and d.status = any (private.webhook_open_states())
    limit private.platform_count_cap()) x;
  return private.platform_audit(org, 'organization.suspended', reason,
                                jsonb_build_object('deliveries_open', open_deliveries));
end;
$$;

-- Resumes an organization. Its open deliveries get back the time they spent suspended: a delivery's
-- 24-hour window (from its first attempt, or from when it became due) moves on by that time, so only
-- the time it was allowed to be tried counts; what was due, or became due, while suspended is due now;
-- an endpoint's "failing for 5 days" clock moves on likewise. Then the dispatcher is woken. Inbound
-- payloads the receivers logged meanwhile are applied by the providers' own retries (answered 503 until
-- now), or replayed from Payment webhooks. Returns the audit entry's id.
create function private.platform_resume_organization(org uuid, reason text) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  since timestamptz;
  paused interval;
  endpoint_ids uuid[];
  released integer;
begin
  perform private.require_platform_role('platform_admin');
  perform 1 from public.organizations o where o.id = org for update;
  if not found then
    raise exception 'no such organization' using errcode = 'P0002';
  end if;
  delete from private.organization_suspensions s where s.organization_id = org returning s.suspended_at into since;
  if not found then
    raise exception 'the organization is not suspended' using errcode = '55000', hint = 'not_suspended';
  end if;
  paused := greatest(now() - since, interval '0');
  -- Through the endpoints, on the partial index of open deliveries: never the organization's history.
  endpoint_ids := array(select e.id from public.webhook_endpoints e where e.organization_id = org);
  update public.webhook_deliveries d
     set next_attempt_at = least(d.next_attempt_at + paused, now()),
         first_attempt_at = d.first_attempt_at + greatest(now() - greatest(since, d.first_attempt_at), interval '0')
   where d.endpoint_id = any (endpoint_ids) and d.status = any (private.webhook_open_states());
  get diagnostics released = row_count;
  update public.webhook_endpoint_health h
     set failing_since = h.failing_since + paused
   where h.endpoint_id = any (endpoint_ids) and h.failing_since is not null;
  if released > 0 then
    perform pg_notify('webhook_deliveries', 'resume');
    -- Hosted: start a run now rather than at the next minute. A failing wake-up never fails the resume.
    begin
      perform private.webhook_wake_dispatcher(interval '0');
    exception when others then
      raise warning 'platform resume: dispatcher wake-up failed: %', sqlerrm;
    end;
  end if;
  return private.platform_audit(org, 'organization.resumed', reason,
                                jsonb_build_object('suspended_seconds', floor(extract(epoch from paused)),
                                                   'deliveries_released', released));
end;
$$;

-- Platform administrators -------------------------------------------------------------------------------
create function private.platform_admins() returns table (
  user_id uuid, email text, is_superadmin boolean, since timestamptz, last_sign_in_at timestamptz
)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  perform private.require_platform_role('platform_admin');
  return query
  select f.user_id, u.email::text, f.is_superadmin, f.updated_at, u.last_sign_in_at
  from public.platform_user_flags f join auth.users u on u.id = f.user_id
  where f.is_platform_admin or f.is_superadmin
  order by f.is_superadmin desc, lower(u.email), f.user_id;
end;
$$;

-- The account with this e-mail address (case-insensitive), or an error naming the field.
create function private.platform_user_by_email(address text) returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  found_ids uuid[];
begin
  found_ids := array(select u.id from auth.users u
                     where lower(u.email) = lower(trim(address)) and u.deleted_at is null limit 2);
  if cardinality(found_ids) = 0 then
    raise exception 'no account has the e-mail address %', trim(address)
      using errcode = 'P0002', hint = 'email', detail = 'The person signs up first.';
  elsif cardinality(found_ids) > 1 then
    raise exception 'more than one account has the e-mail address %', trim(address)
      using errcode = '22023', hint = 'email';
  end if;
  return found_ids[1];
end;
$$;

-- A superadmin makes a person a platform administrator (by the e-mail of their account).
create function private.platform_grant_admin(address text) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  target uuid;
begin
  perform private.require_platform_role('superadmin');
  target := private.platform_user_by_email(address);
  insert into public.platform_user_flags as f (user_id, is_platform_admin) values (target, true)
  on conflict (user_id) do update set is_platform_admin = true, updated_at = now()
    where not f.is_platform_admin and not f.is_superadmin;
  if not found then
    raise exception 'that person is already a platform administrator'
      using errcode = '55000', hint = 'already_platform_admin';
  end if;
  perform private.platform_audit(null, 'platform_admin.granted', null, '{}', target);
  return target;
end;
$$;

-- A superadmin ends a platform administrator's rights (at their next request: flags are read live).
-- Superadmins are made and unmade by an operator only (scripts/platform-admin.ts), so no superadmin can
-- lock the others out.
create function private.platform_revoke_admin(target uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  perform private.require_platform_role('superadmin');
  if exists (select 1 from public.platform_user_flags f where f.user_id = target and f.is_superadmin) then
    raise exception 'a superadmin''s rights are changed by an operator (docs/operations.md)'
      using errcode = '55000', hint = 'superadmin';
  end if;
  update public.platform_user_flags f set is_platform_admin = false, updated_at = now()
   where f.user_id = target and f.is_platform_admin;
  if not found then
    raise exception 'no such platform administrator' using errcode = 'P0002';
  end if;
  perform private.platform_audit(null, 'platform_admin.revoked', null, '{}', target);
end;
$$;

-- The operator's command --------------------------------------------------------------------------------
-- Makes (or with `remove`, unmakes) the account with this e-mail a superadmin and platform
-- administrator: the first administrator of a hosted project, made by whoever holds the database
-- connection (scripts/platform-admin.ts, `npm run platform:superadmin`). No user role may call it.
create function private.operator_set_superadmin(address text, remove boolean default false) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  target uuid := private.platform_user_by_email(address);
  changed boolean;
begin
  insert into public.platform_user_flags as f (user_id, is_platform_admin, is_superadmin)
  values (target, not remove, not remove)
  on conflict (user_id) do update set is_platform_admin = not remove, is_superadmin = not remove, updated_at = now()
    where f.is_superadmin = remove
  returning true into changed;
  if coalesce(changed, false) then
    -- The operator has no account here: recorded as the database role that ran the command.
    perform private.audit_record(null, case when remove then 'superadmin.revoked' else 'superadmin.granted' end,
                                 'person', target::text, null, null, subject => target, as_kind => 'operator');
  end if;
  return target;
end;
$$;

revoke all on function private.platform_role(), private.require_platform_role(text),
  private.claimed_organization_is_suspended(), private.membership_is_suspended(uuid),
  private.membership_suspension_reason(uuid), private.platform_count_cap(),
  private.platform_organizations(uuid, text, boolean, text, uuid, integer), private.platform_organization_totals(),
  private.platform_suspend_organization(uuid, text),
  private.platform_resume_organization(uuid, text), private.platform_admins(), private.platform_user_by_email(text),
  private.platform_grant_admin(text), private.platform_revoke_admin(uuid), private.operator_set_superadmin(text, boolean)
  from public, anon, authenticated;
grant execute on function private.platform_role(), private.claimed_organization_is_suspended(),
  private.membership_is_suspended(uuid), private.membership_suspension_reason(uuid),
  private.platform_organizations(uuid, text, boolean, text, uuid, integer), private.platform_organization_totals(),
  private.platform_suspend_organization(uuid, text), private.platform_resume_organization(uuid, text),
  private.platform_admins(), private.platform_grant_admin(text), private.platform_revoke_admin(uuid)
  to config_api;
-- public.set_active_organization (security invoker) asks it for the Data API's callers too: whether an
-- organization they belong to is suspended tells them nothing they may not know.
grant execute on function private.membership_is_suspended(uuid) to authenticated;
