-- Cross-tenant attack matrix. Every table in `public` that belongs to an organization is probed through
-- both doors (docs/two-doors.md#two-doors-one-rule): the Data API, as PostgREST runs a request
-- (role `authenticated`), and the configuration API (role `config_api`), by:
--   * an admin of organization A aiming at organization B's rows,
--   * a staff member of A aiming at B,
--   * a user of A whose token claims B (a forged or stale organization claim), aiming at B,
--   * a member removed from A whose still-valid token claims A, aiming at A,
--   * an admin of A who signed out, with the token of the ended session, aiming at A,
--   * an anonymous caller (the Data API), aiming at A,
--   * organization API keys (the configuration API): another organization's, and a revoked one.
-- Each probe tries select, update, delete and insert; none may see or change anything. An admin of A
-- aiming at A is the control, through each door: it must see A's rows in every table that door serves,
-- and be refused the others, so the matrix is never vacuous. A tenant table added without seed rows here
-- fails the "seeded" check, so new tables cannot slip past the matrix.
begin;
select no_plan();
\set min_tables 27

create schema tenancy_probe;
grant usage on schema tenancy_probe to authenticated, anon;

-- Tenant tables and the column that names the tenant.
create view tenancy_probe.tenant_tables as
  select c.relname::text as tbl,
         case when c.relname = 'organizations' then 'id' else 'organization_id' end as org_col
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'public' and c.relkind = 'r'
    and (c.relname = 'organizations' or exists (
      select 1 from pg_attribute a
      where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped));
grant select on tenancy_probe.tenant_tables to authenticated, anon;

create table tenancy_probe.results (actor text, tbl text, probe text, got text);
grant insert on tenancy_probe.results to authenticated, anon;

-- One template row per (table, organization), captured as the database owner, so that a probe can try
-- to insert a copy of another tenant's row without being able to read it. Only A's and B's: a project's
-- database holds other organizations too.
create table tenancy_probe.templates (tbl text, org uuid, row_json jsonb);
grant select on tenancy_probe.templates to authenticated, anon;

-- People -----------------------------------------------------------------------------------------------
select tests.create_tenants('a1000000-0000-4000-8000-000000000000', 'b1000000-0000-4000-8000-000000000000',
                           'a2000000-0000-4000-8000-000000000001', 'a2000000-0000-4000-8000-000000000002',
                           'b2000000-0000-4000-8000-000000000001');
select tests.create_user('removed-a@example.org', 'a2000000-0000-4000-8000-000000000003');
-- An admin of A who signed out: their token still names the session that ended.
select tests.add_member(tests.create_user('signed-out-a@example.org', 'a2000000-0000-4000-8000-000000000004'),
                        'a1000000-0000-4000-8000-000000000000', 'admin');
create table tenancy_probe.ended (session uuid);
insert into tenancy_probe.ended select tests.session_of('a2000000-0000-4000-8000-000000000004');
select tests.sign_out('a2000000-0000-4000-8000-000000000004');
grant select on tenancy_probe.ended to authenticated, anon;
insert into public.user_active_organization values
  ('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000'),
  ('b2000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000000');
insert into public.platform_user_flags (user_id) values ('b2000000-0000-4000-8000-000000000001');

-- Seed: rows in every tenant table for one organization. Extend this when a migration adds a table.
create function tenancy_probe.seed(org uuid) returns void language plpgsql as $$
declare
  member uuid;
  sub uuid;
  wf uuid;
  account uuid;
  thread uuid;
  delivery uuid;
begin
  insert into public.organization_settings (organization_id, webhook_secret) values (org, 'whsec_' || org);
  insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (org, 'Ada', 'Lovelace', 'ada@example.org', '+44 (20) 7946-0000') returning id into member;
  insert into public.recurring_donations (organization_id, member_id, gateway_subscription_id, amount_minor, currency)
    values (org, member, 'sub_' || org, 5000, 'GBP') returning id into sub;
  insert into public.donations (organization_id, member_id, recurring_donation_id, amount_minor, currency, source, gateway_payment_id)
    values (org, member, sub, 5000, 'GBP', 'recurring', 'pay_' || org);
  insert into public.attendance (organization_id, member_id) values (org, member);
  insert into public.workflows (organization_id, name) values (org, 'Welcome') returning id into wf;
  insert into public.workflow_runs (organization_id, workflow_id, member_id) values (org, wf, member);
  insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash)
    values (org, 'Zapier', 'orgkey_abcdefg', encode(sha256(convert_to(org::text, 'utf8')), 'hex'));
  insert into public.organization_invitations (organization_id, email, role, token_hash)
    values (org, 'invitee@example.org', 'admin', encode(sha256(convert_to('invitation ' || org, 'utf8')), 'hex'));
  -- Outbound webhooks: an endpoint subscribed to member.created, so the member below raises an
  -- event and a delivery through the real triggers.
  perform tests.create_endpoint(org);
  insert into public.members (organization_id, first_name) values (org, 'Subscribed');
  select d.id into delivery from public.webhook_deliveries d where d.organization_id = org limit 1;
  insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at, response_status)
    values (org, delivery, 1, now(), 200);
  -- Log retention
  insert into public.organization_log_retention (organization_id, webhook_log_days) values (org, 30);
  -- Payment webhooks
  insert into public.donation_refunds (organization_id, donation_id, gateway_refund_id, gateway_payment_id, amount_minor, currency, status)
    select org, d.id, 'rfnd_' || org, d.gateway_payment_id, 100, 'GBP', 'processed'
    from public.donations d where d.organization_id = org limit 1;
  insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, signature_valid, status)
    values (org, 'checkout', 'charged', 'idem-' || org, '{"event":"charged"}', true, 'processed');
  -- WhatsApp (both organizations registered the same phone-number id: anyone may type any id)
  insert into public.messaging_accounts (organization_id, phone_number_id, display_phone_number)
    values (org, 'pn_shared_by_a_and_b', '+44 20 7946 0000') returning id into account;
  insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
    values (account, org, 'app-secret-' || org, 'verify-token-' || org);
  insert into public.whatsapp_conversations (organization_id, contact_phone, member_id, member_match)
    values (org, '442079460000', member, 'matched') returning id into thread;
  insert into public.whatsapp_messages (organization_id, conversation_id, account_id, provider_message_id, direction, type, text, status)
    values (org, thread, account, 'wamid.' || org, 'inbound', 'text', 'Hello', 'received');
  insert into public.whatsapp_message_receipts (organization_id, provider_message_id, status, occurred_at)
    values (org, 'wamid.out.' || org, 'delivered', now());
  -- Person erasure (the record of one; what it erased is no longer there)
  insert into public.member_erasures (organization_id, member_id, stage, finished_at, counts)
    values (org, gen_random_uuid(), 'done', now(), '{"members": 1}');
  -- Bulk retry: a finished job
  insert into public.webhook_bulk_retries (organization_id, filter, status, total, finished_at)
    values (org, '{}', 'done', 0, now());
  -- Platform console: an audit entry of a platform action on the organization
  insert into public.audit_log (organization_id, action, actor_kind, actor_email, reason)
    values (org, 'organization.resumed', 'platform_admin', 'ops@platform.example', 'checked');
end;
$$;
select tenancy_probe.seed('a1000000-0000-4000-8000-000000000000');
select tenancy_probe.seed('b1000000-0000-4000-8000-000000000000');

do $$
declare t record;
begin
  for t in select * from tenancy_probe.tenant_tables loop
    execute format(
      'insert into tenancy_probe.templates select %L, %I, to_jsonb(x) from public.%I x where %I in (%L, %L)',
      t.tbl, t.org_col, t.tbl, t.org_col,
      'a1000000-0000-4000-8000-000000000000', 'b1000000-0000-4000-8000-000000000000');
  end loop;
end;
$$;

-- Every tenant table is covered by the seed, in both organizations.
select ok(
  (select count(distinct org) from tenancy_probe.templates m where m.tbl = t.tbl) = 2,
  format('matrix seeds %s in both organizations', t.tbl))
from tenancy_probe.tenant_tables t order by t.tbl;

-- The probe: runs as whatever role and claims are current, records what each attempt achieved (the
-- number of rows it reached, or `error <sqlstate>`), for the probes asked for.
create function tenancy_probe.probe(actor text, target uuid, probes text[] default '{select,update,delete,insert}')
returns void language plpgsql as $$
declare
  t record;
  p record;
  n bigint;
  cols text;
  template jsonb;
begin
  for t in select * from tenancy_probe.tenant_tables loop
    for p in select * from (values ('select', 'select from public.%1$I where %2$I = $1'),
                                   ('update', 'update public.%1$I set %2$I = %2$I where %2$I = $1'),
                                   ('delete', 'delete from public.%1$I where %2$I = $1')) v (probe, statement)
             where v.probe = any (probes) loop
      begin
        execute format(p.statement, t.tbl, t.org_col) using target;
        get diagnostics n = row_count;
        insert into tenancy_probe.results values (actor, t.tbl, p.probe, n::text);
      exception when others then
        insert into tenancy_probe.results values (actor, t.tbl, p.probe, 'error ' || sqlstate);
      end;
    end loop;
    continue when not 'insert' = any (probes);
    begin
      select string_agg(quote_ident(a.attname), ', ') into cols
      from pg_attribute a
      where a.attrelid = format('public.%I', t.tbl)::regclass and a.attnum > 0 and not a.attisdropped
        and a.attgenerated = '' and a.attidentity = '';
      select m.row_json || case when m.row_json ? 'id' and t.tbl <> 'organizations'
                                then jsonb_build_object('id', gen_random_uuid()) else '{}' end
        into template
      from tenancy_probe.templates m where m.tbl = t.tbl and m.org = target limit 1;
      execute format('insert into public.%I (%s) select %s from jsonb_populate_record(null::public.%I, $1)',
        t.tbl, cols, cols, t.tbl) using template;
      insert into tenancy_probe.results values (actor, t.tbl, 'insert', 'inserted');
    exception when others then
      insert into tenancy_probe.results values (actor, t.tbl, 'insert', 'error ' || sqlstate);
    end;
  end loop;
end;
$$;
grant execute on function tenancy_probe.probe(text, uuid, text[]) to authenticated, anon;

-- Attackers ---------------------------------------------------------------------------------------------
-- A user's token through one door: the Data API (`authenticated`) or the configuration API (`config_api`).
create function tenancy_probe.as_user(door text, user_id uuid, org uuid, session uuid default null) returns void
language sql as $$
  select case door when 'Data API' then tests.act_as(user_id, org, session)
                   else tests.act_as_config_api(user_id, org, session) end $$;
grant execute on function tenancy_probe.as_user(text, uuid, uuid, uuid) to authenticated, anon;

do $$
declare
  door text;
  ended uuid := (select session from tenancy_probe.ended);
begin
  foreach door in array array['Data API', 'configuration API'] loop
    perform tenancy_probe.as_user(door, 'a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.probe(door || ': admin of A -> B', 'b1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.as_user(door, 'a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.probe(door || ': staff of A -> B', 'b1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.as_user(door, 'a2000000-0000-4000-8000-000000000001', 'b1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.probe(door || ': admin of A claiming B -> B', 'b1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.as_user(door, 'a2000000-0000-4000-8000-000000000003', 'a1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.probe(door || ': removed member of A -> A', 'a1000000-0000-4000-8000-000000000000');
    perform tenancy_probe.as_user(door, 'a2000000-0000-4000-8000-000000000004', 'a1000000-0000-4000-8000-000000000000', ended);
    perform tenancy_probe.probe(door || ': signed-out admin of A -> A', 'a1000000-0000-4000-8000-000000000000');
    perform tests.clear_act_as();
  end loop;
end;
$$;
select tests.act_as_anon();
select tenancy_probe.probe('Data API: anon -> A', 'a1000000-0000-4000-8000-000000000000');
select tests.clear_act_as();

-- Organization API keys (the configuration API only): B's key aimed at A (claiming B, and claiming A),
-- and A's own key once revoked.
select tests.act_as_api_key((select id from public.organization_api_keys where organization_id = 'b1000000-0000-4000-8000-000000000000'),
  'b1000000-0000-4000-8000-000000000000');
select tenancy_probe.probe('configuration API: API key of B -> A', 'a1000000-0000-4000-8000-000000000000');
select tests.clear_act_as();
select tests.act_as_api_key((select id from public.organization_api_keys where organization_id = 'b1000000-0000-4000-8000-000000000000'),
  'a1000000-0000-4000-8000-000000000000');
select tenancy_probe.probe('configuration API: API key of B claiming A -> A', 'a1000000-0000-4000-8000-000000000000');
select tests.clear_act_as();
-- (a second key of A, revoked: revocation is final, so A's first key stays live for the checks below)
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash, revoked_at)
  values ('a5000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000', 'Old Zapier', 'orgkey_revoked',
          encode(sha256('revoked key of A'::bytea), 'hex'), now());
select tests.act_as_api_key('a5000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
select tenancy_probe.probe('configuration API: revoked API key of A -> A', 'a1000000-0000-4000-8000-000000000000');
select tests.clear_act_as();

-- Control: the admin of A acting on A through each door reads every table that door serves (run after
-- the attacks, which must not have disturbed A's rows either).
select tests.act_as('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
select tenancy_probe.probe('control (authenticated): admin of A -> A', 'a1000000-0000-4000-8000-000000000000', '{select}');
select tests.act_as_config_api('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
select tenancy_probe.probe('control (config_api): admin of A -> A', 'a1000000-0000-4000-8000-000000000000', '{select}');
select tests.clear_act_as();

select ok(r.got in ('0', 'error 42501'), format('%s: %s %s sees/changes nothing (got %s)', r.actor, r.probe, r.tbl, r.got))
from tenancy_probe.results r
where r.actor not like 'control%' and r.probe <> 'insert'
order by r.actor, r.tbl, r.probe;

select is(r.got, 'error 42501', format('%s: insert into %s is refused', r.actor, r.tbl))
from tenancy_probe.results r
where r.actor not like 'control%' and r.probe = 'insert'
order by r.actor, r.tbl;

-- Each door serves the tables its role may read (the Data API's are the day-to-day records, the
-- configuration API's those and the settings area's); tables only the server may read (secrets) are
-- served by neither.
select ok(
  case when has_any_column_privilege(substring(r.actor from '\((\w+)\)'), format('public.%I', r.tbl), 'select')
       then r.got ~ '^[0-9]+$' and r.got::int >= 1
       else r.got = 'error 42501' end,
  format('%s: sees its own %s rows, unless that door does not serve it (%s)', r.actor, r.tbl, r.got))
from tenancy_probe.results r
where r.actor like 'control%'
order by r.actor, r.tbl;
select is(
  array(select r.tbl from tenancy_probe.results r
        where r.actor like 'control (authenticated)%' and r.got ~ '^[0-9]+$' order by 1),
  array['attendance', 'donation_refunds', 'donations', 'members', 'messaging_accounts', 'organizations', 'profiles',
        'recurring_donations', 'user_active_organization', 'whatsapp_conversations', 'whatsapp_message_receipts',
        'whatsapp_messages', 'workflow_runs', 'workflows'],
  'the Data API serves exactly the day-to-day tenant tables (docs/two-doors.md#two-doors-one-rule)');
select is(
  (select count(*)::int from tenancy_probe.results r
   where r.actor like 'control (config_api)%' and r.got ~ '^[0-9]+$'),
  (select count(*)::int - 1 from tenancy_probe.tenant_tables),
  'the configuration API serves every tenant table but the secrets table');

-- Nothing of B changed through any of it: every B row is still exactly what it was before the attacks.
create function tenancy_probe.rows_now(tbl text, org_col text, org uuid) returns setof jsonb
language plpgsql as $$
begin
  return query execute format('select to_jsonb(x) from public.%I x where %I = $1', tbl, org_col) using org;
end;
$$;
select is(
  array(select r::text from tenancy_probe.rows_now(t.tbl, t.org_col, 'b1000000-0000-4000-8000-000000000000') r order by 1),
  array(select m.row_json::text from tenancy_probe.templates m
        where m.tbl = t.tbl and m.org = 'b1000000-0000-4000-8000-000000000000' order by 1),
  format('B''s %s rows are unchanged', t.tbl))
from tenancy_probe.tenant_tables t order by t.tbl;

-- Role-specific rules inside one organization ----------------------------------------------------------
select tests.act_as_config_api('a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000');
select is((select count(*)::int from public.organization_settings), 0, 'staff cannot read the settings');
with u as (update public.organization_settings set webhook_secret = 'mine' returning 1)
  select is(count(*)::int, 0, 'staff cannot change webhook_secret') from u;
select tests.act_as('a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000');
with d as (delete from public.members returning 1)
  select is(count(*)::int, 0, 'staff cannot delete members') from d;
select throws_ok($$ insert into public.profiles (user_id, organization_id, role)
  values ('a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000', 'admin') $$,
  '42501', null, 'staff cannot add profiles (or promote themselves)');
select tests.act_as_config_api('a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000');
with u as (update public.profiles set role = 'admin' where user_id = (select auth.uid()) returning 1)
  select is(count(*)::int, 0, 'staff cannot promote themselves') from u;
select tests.act_as('a2000000-0000-4000-8000-000000000002', 'a1000000-0000-4000-8000-000000000000');
select ok((select count(*) from public.members) >= 1, 'staff reads members of A');

select tests.act_as_config_api('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
select throws_ok($$ select webhook_secret from public.organization_settings $$, '42501', null,
  'not even the admin of A reads A''s webhook_secret back (write-only)');
select is((select count(*)::int from public.organization_settings), 1, 'control: the admin of A sees A''s settings row');
select tests.act_as('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
select is((select count(*)::int from public.user_active_organization where user_id <> (select auth.uid())), 0,
  'another user''s remembered organization is invisible');
select is((select count(*)::int from public.platform_user_flags), 0, 'another user''s platform flags are invisible');
select is((select count(*)::int from public.profiles where organization_id = 'b1000000-0000-4000-8000-000000000000'), 0,
  'profiles of B are invisible');
select throws_ok($$ update public.members set organization_id = 'b1000000-0000-4000-8000-000000000000' $$,
  '42501', null, 'a row cannot be moved to another organization');
select lives_ok($$ insert into public.donations (organization_id, member_id, amount_minor, currency)
  select 'a1000000-0000-4000-8000-000000000000', m.id, 100, 'GBP' from public.members m limit 1 $$,
  'control: a donation for A''s own member is accepted');
select tests.clear_act_as();
-- A live API key of A configures A's webhooks and reads nothing else of A.
select tests.act_as_api_key((select id from public.organization_api_keys where organization_id = 'a1000000-0000-4000-8000-000000000000' and revoked_at is null),
  'a1000000-0000-4000-8000-000000000000');
select ok((select count(*) from public.webhook_endpoints) >= 1 and (select count(*) from public.webhook_deliveries) >= 1,
  'a live API key of A sees A''s endpoints and deliveries');
select is((select count(*)::int from public.members) + (select count(*)::int from public.donations)
  + (select count(*)::int from public.inbound_webhook_log) + (select count(*)::int from public.organization_settings), 0,
  'an API key reads no members, donations, payment log or settings');
select tests.act_as('a2000000-0000-4000-8000-000000000001', 'a1000000-0000-4000-8000-000000000000');
-- A's donation may not point at B's member even when the writer knows B's member id.
select throws_ok(format($$ insert into public.donations (organization_id, member_id, amount_minor, currency)
  values ('a1000000-0000-4000-8000-000000000000', %L, 100, 'GBP') $$,
  (select (row_json ->> 'id') from tenancy_probe.templates where tbl = 'members' and org = 'b1000000-0000-4000-8000-000000000000' limit 1)),
  '23503', null, 'a reference to another organization''s member is refused');
select tests.clear_act_as();

-- A floor under the catalogue query: a view that found no tables would probe nothing and pass.
select ok((select count(*) from tenancy_probe.tenant_tables) >= :min_tables,
          format('the matrix covers every tenant table, at least %s', :min_tables));
select diag(format('tenancy matrix: %s probes over %s tables', (select count(*) from tenancy_probe.results),
                   (select count(*) from tenancy_probe.tenant_tables)));

select * from finish();
rollback;
