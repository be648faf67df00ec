-- The platform console's SQL: who may call it (live flags and a live session, never the token's claim
-- alone), what a suspension does to both doors, the access-token hook and the dispatcher, what resuming
-- gives back, and who reads the audit log. Counts only rows of the organizations made here.
begin;
select plan(56);

-- Church P (to be suspended) with an admin, a staff member and an API key; Church Q with its admin, who
-- is also staff of P (so the hook has somewhere else to land him); a platform admin, a superadmin and an
-- ordinary user with a forged is_platform_admin claim. Each person has a live session.
select tests.create_organization('Church P', 'c5000000-0000-4000-8000-0000000000aa');
select tests.create_organization('Church Q', 'c5000000-0000-4000-8000-0000000000bb');
select tests.add_member(tests.create_user('admin-p@example.org', 'c5000000-0000-4000-8000-000000000001'),
  'c5000000-0000-4000-8000-0000000000aa', 'admin', now() - interval '2 days');
select tests.add_member(tests.create_user('staff-p@example.org', 'c5000000-0000-4000-8000-000000000002'),
  'c5000000-0000-4000-8000-0000000000aa', 'staff');
select tests.add_member(tests.create_user('admin-q@example.org', 'c5000000-0000-4000-8000-000000000003'),
  'c5000000-0000-4000-8000-0000000000bb', 'admin');
select tests.add_member('c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-0000000000bb', 'staff',
  now() - interval '1 day');
select tests.create_user('platform@example.org', 'c5000000-0000-4000-8000-000000000004');
select tests.create_user('super@example.org', 'c5000000-0000-4000-8000-000000000005');
select tests.create_user('forger@example.org', 'c5000000-0000-4000-8000-000000000006');
insert into public.platform_user_flags (user_id, is_platform_admin, is_superadmin) values
  ('c5000000-0000-4000-8000-000000000004', true, false),
  ('c5000000-0000-4000-8000-000000000005', true, true);
insert into auth.sessions (id, user_id, created_at, updated_at)
select ('c5500000-0000-4000-8000-00000000000' || n)::uuid, ('c5000000-0000-4000-8000-00000000000' || n)::uuid, now(), now()
from generate_series(1, 6) n;
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash) values
  ('c5000000-0000-4000-8000-0000000000ce', 'c5000000-0000-4000-8000-0000000000aa', 'Zapier', 'orgkey_platform',
   encode(sha256('platform console key'::bytea), 'hex'));
insert into public.organization_settings (organization_id, webhook_secret)
  values ('c5000000-0000-4000-8000-0000000000aa', 'whsec_checkout_SECRET_OF_P');
insert into public.webhook_endpoints (id, organization_id, url, events, secret) values
  ('c5000000-0000-4000-8000-0000000000e1', 'c5000000-0000-4000-8000-0000000000aa', 'https://p.example.org/h',
   array['member.created'], 'ENDPOINT-SECRET-OF-P-0123456789abcdef');
insert into public.members (organization_id, first_name, email)
  values ('c5000000-0000-4000-8000-0000000000aa', 'Private', 'private.member@example.org');
insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, signature_valid, status, error)
  values ('c5000000-0000-4000-8000-0000000000aa', 'checkout', 'charged', 'platform-failed', '{"card":"PAYLOAD_BODY_OF_P"}',
          true, 'failed', 'boom');

-- `n` = the session's number: user ...00n, session ...00n. The configuration API's role, as it runs.
create function pg_temp.api_as(n integer, org uuid default null, extra jsonb default '{}') returns void language sql as $$
  select tests.set_claims('config_api', jsonb_strip_nulls(jsonb_build_object(
    'sub', 'c5000000-0000-4000-8000-00000000000' || n, 'role', 'authenticated',
    'session_id', 'c5500000-0000-4000-8000-00000000000' || n, 'organization_id', org)) || extra) $$;
create function pg_temp.api_key_as(org uuid) returns void language sql as $$
  select tests.set_claims('config_api', jsonb_build_object('role', 'authenticated',
    'api_key_id', 'c5000000-0000-4000-8000-0000000000ce', 'organization_id', org)) $$;

-- Who may use the console ---------------------------------------------------------------------------------
select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select * from private.platform_organizations(null, null, false, null, null, 50) $$,
  '42501', 'only platform administrators can do this', 'an organization''s admin cannot list organizations');
select throws_ok($$ select private.platform_suspend_organization('c5000000-0000-4000-8000-0000000000bb', 'x') $$,
  '42501', 'only platform administrators can do this', 'nor suspend one');
select pg_temp.api_as(6, null, '{"is_platform_admin": true, "is_superadmin": true}');
select throws_ok($$ select * from private.platform_organizations(null, null, false, null, null, 50) $$,
  '42501', 'only platform administrators can do this', 'a token claiming is_platform_admin without the flag is refused');
select pg_temp.api_key_as('c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select * from private.platform_organizations(null, null, false, null, null, 50) $$,
  '42501', 'only platform administrators can do this', 'an API key is refused');
select tests.set_claims('config_api', '{"sub": "c5000000-0000-4000-8000-000000000004", "role": "authenticated", "session_id": "c5500000-0000-4000-8000-0000000000ff"}');
select throws_ok($$ select * from private.platform_organizations(null, null, false, null, null, 50) $$,
  '42501', 'only platform administrators can do this', 'a platform admin whose session has ended is refused');
select tests.act_as('c5000000-0000-4000-8000-000000000004', null);
select throws_ok($$ select * from private.platform_organizations(null, null, false, null, null, 50) $$,
  '42501', null, 'the Data API''s role cannot call the console''s functions at all');
select tests.act_as_anon();
select throws_ok($$ select private.platform_role() $$, '42501', null, 'nor can anon');

select pg_temp.api_as(4);
select is(private.platform_role(), 'platform_admin', 'a platform admin with a live session is one');
select is((select array_agg(name order by name) from private.platform_organizations(null, 'Church ', false, null, null, 200)
           where id in ('c5000000-0000-4000-8000-0000000000aa', 'c5000000-0000-4000-8000-0000000000bb')),
  array['Church P', 'Church Q'], 'the platform admin lists organizations across tenants');
select is((select row(people, endpoints, deliveries_open, inbound_failed_24h)::text
           from private.platform_organizations('c5000000-0000-4000-8000-0000000000aa', null, false, null, null, 1)),
  '(2,1,1,1)', 'with their health: people, endpoints, open deliveries, inbound failures');
select ok((select to_jsonb(o)::text !~ '(SECRET|PAYLOAD_BODY|private\.member)'
           from private.platform_organizations('c5000000-0000-4000-8000-0000000000aa', null, false, null, null, 1) o),
  'never a secret, a payload body or a member');
select is((select count(*)::int from public.members), 0, 'and a platform admin reads no organization''s rows');
select throws_ok($$ select private.platform_grant_admin('forger@example.org') $$,
  '42501', 'only superadmins can do this', 'a platform admin cannot grant platform admin');

-- Suspending -------------------------------------------------------------------------------------------
-- Outbound work of P before: a retrying delivery whose window has 4 hours left, and a new one.
select tests.clear_act_as();
select tests.create_due_deliveries('c5000000-0000-4000-8000-0000000000aa', 'c5000000-0000-4000-8000-0000000000e1', 1,
  '1 minute', '{"kind": "retrying"}');
update public.webhook_deliveries set status = 'retrying', attempt_count = 3, first_attempt_at = now() - interval '20 hours'
 where organization_id = 'c5000000-0000-4000-8000-0000000000aa' and endpoint_id = 'c5000000-0000-4000-8000-0000000000e1'
   and event_id in (select id from public.webhook_events where payload ->> 'kind' = 'retrying');

select pg_temp.api_as(4);
select lives_ok($$ select private.platform_suspend_organization('c5000000-0000-4000-8000-0000000000aa', 'Unpaid invoice') $$,
  'the platform admin suspends P');
select throws_ok($$ select private.platform_suspend_organization('c5000000-0000-4000-8000-0000000000aa', 'again') $$,
  '55000', 'the organization is already suspended', 'twice is refused');
select is((select suspension_reason from private.platform_organizations('c5000000-0000-4000-8000-0000000000aa', null, true, null, null, 1)),
  'Unpaid invoice', 'the suspended filter finds it, with the reason');

select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.members) + (select count(*)::int from public.webhook_endpoints)
          + (select count(*)::int from public.organization_settings), 0,
  'the admin of P reads nothing of P through the configuration API''s role');
select ok(private.claimed_organization_is_suspended(), 'and the API can tell him why');
select is(private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa'), 'Unpaid invoice',
  'in the platform administrator''s words, written for him');
select pg_temp.api_as(2, 'c5000000-0000-4000-8000-0000000000aa');
select is(private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa'), null,
  'P''s staff is told only that it is suspended');
select pg_temp.api_as(3, 'c5000000-0000-4000-8000-0000000000bb');
select is(private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa'), null,
  'Q''s admin, no member of P, learns nothing');
select tests.set_claims('config_api', '{"sub": "c5000000-0000-4000-8000-000000000001", "role": "authenticated", "session_id": "c5500000-0000-4000-8000-0000000000ff"}');
select is(private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa'), null,
  'nor P''s admin once his session has ended');
select tests.act_as('c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa') $$,
  '42501', null, 'the Data API''s role cannot ask');
select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ insert into public.members (organization_id, first_name) values ('c5000000-0000-4000-8000-0000000000aa', 'x') $$,
  '42501', null, 'nor writes');
select tests.act_as('c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.members), 0, 'nor through the Data API''s role');
select throws_ok($$ select public.set_active_organization('c5000000-0000-4000-8000-0000000000aa') $$,
  '55000', 'organization c5000000-0000-4000-8000-0000000000aa is suspended', 'nor can he switch to it');
select pg_temp.api_key_as('c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.webhook_endpoints), 0, 'P''s API key reaches nothing');
select tests.clear_act_as();
select is(tests.token_claims('c5000000-0000-4000-8000-000000000001') ->> 'organization_id',
  'c5000000-0000-4000-8000-0000000000bb', 'the hook lands P''s admin in his other organization');
select ok(not (tests.token_claims('c5000000-0000-4000-8000-000000000002') ? 'organization_id'),
  'and P''s staff, who has no other, in none');
insert into public.user_active_organization values ('c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-0000000000aa')
  on conflict (user_id) do update set organization_id = excluded.organization_id;
select is(tests.token_claims('c5000000-0000-4000-8000-000000000001') ->> 'organization_id',
  'c5000000-0000-4000-8000-0000000000bb', 'even when P is the organization he chose last');

-- Outbound waits: P's deliveries are not claimed, stay open past their window, are not alerted on.
select is((select count(*)::int from private.webhook_claim(1000, 100000000, 16, 1000, 40) c
           join public.webhook_deliveries d on d.id = c.delivery_id
           where d.organization_id = 'c5000000-0000-4000-8000-0000000000aa'), 0,
  'the dispatcher claims nothing of a suspended organization');
-- Two days later (time travel: the suspension is moved back, as is the delivery's first attempt).
update private.organization_suspensions set suspended_at = now() - interval '2 days'
 where organization_id = 'c5000000-0000-4000-8000-0000000000aa';
update public.webhook_deliveries set first_attempt_at = now() - interval '2 days 20 hours', next_attempt_at = now() - interval '47 hours'
 where organization_id = 'c5000000-0000-4000-8000-0000000000aa' and status = 'retrying';
update public.webhook_deliveries set next_attempt_at = now() - interval '1 day', created_at = now() - interval '1 day'
 where organization_id = 'c5000000-0000-4000-8000-0000000000aa' and status = 'pending';
select private.webhook_housekeeping();
select is((select array_agg(status order by status) from public.webhook_deliveries
           where organization_id = 'c5000000-0000-4000-8000-0000000000aa'),
  array['pending', 'retrying'], 'housekeeping fails none of them though their windows have run out');
select ok((public.webhook_operator_health() -> 'queue' ->> 'held_suspended')::int >= 2,
  'operator health counts them as held');
select ok(not exists (
  select from jsonb_array_elements(public.webhook_operator_health() -> 'alerts') a
  where a ->> 'code' = 'queue_behind'
    and not exists (select from public.webhook_deliveries d
                    where d.status in ('pending', 'retrying') and d.next_attempt_at < now() - interval '5 minutes'
                      and d.organization_id <> 'c5000000-0000-4000-8000-0000000000aa')),
  'and raises no queue_behind alert for them');

-- Resuming ------------------------------------------------------------------------------------------------
select pg_temp.api_as(4);
select lives_ok($$ select private.platform_resume_organization('c5000000-0000-4000-8000-0000000000aa', 'Paid') $$,
  'the platform admin resumes P');
select throws_ok($$ select private.platform_resume_organization('c5000000-0000-4000-8000-0000000000aa', 'again') $$,
  '55000', 'the organization is not suspended', 'twice is refused');
select tests.clear_act_as();
select is((select first_attempt_at from public.webhook_deliveries
           where organization_id = 'c5000000-0000-4000-8000-0000000000aa' and status = 'retrying'),
  now() - interval '20 hours', 'the retrying delivery''s window gets its 2 suspended days back (4 hours left)');
select is((select array_agg(next_attempt_at order by status) from public.webhook_deliveries
           where organization_id = 'c5000000-0000-4000-8000-0000000000aa'),
  array[now(), now()], 'and both are due at once');
select private.webhook_housekeeping();
select is((select count(*)::int from private.webhook_claim(1000, 100000000, 16, 1000, 40) c
           join public.webhook_deliveries d on d.id = c.delivery_id
           where d.organization_id = 'c5000000-0000-4000-8000-0000000000aa'), 2,
  'housekeeping leaves them open and the dispatcher claims both');
select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.members), 1, 'P''s admin reads P again');
select is(private.membership_suspension_reason('c5000000-0000-4000-8000-0000000000aa'), null,
  'and is given no reason any more');
select tests.clear_act_as();
select is(tests.token_claims('c5000000-0000-4000-8000-000000000001') ->> 'organization_id',
  'c5000000-0000-4000-8000-0000000000aa', 'and the hook lands him where he chose');

-- The audit log ----------------------------------------------------------------------------------------
select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select is((select array_agg(action || ': ' || reason || ' by ' || actor_email order by created_at, action desc)
           from public.audit_log where action in ('organization.suspended', 'organization.resumed')),
  array['organization.suspended: Unpaid invoice by platform@example.org', 'organization.resumed: Paid by platform@example.org'],
  'P''s admin reads both entries, with the reasons and who');
select is((select (details ->> 'suspended_seconds')::int from public.audit_log where action = 'organization.resumed'),
  172800, 'the resumption says how long it lasted');
select pg_temp.api_as(2, 'c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.audit_log), 0, 'P''s staff reads none');
select pg_temp.api_as(3, 'c5000000-0000-4000-8000-0000000000bb');
select is((select count(*)::int from public.audit_log where organization_id <> 'c5000000-0000-4000-8000-0000000000bb'),
  0, 'Q''s admin reads none of P''s');
select pg_temp.api_key_as('c5000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.audit_log), 0, 'P''s API key reads none');
select tests.act_as('c5000000-0000-4000-8000-000000000001', 'c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select count(*) from public.audit_log $$, '42501', null,
  'the Data API''s role has no access to the audit log at all');
select pg_temp.api_as(1, 'c5000000-0000-4000-8000-0000000000aa');
select throws_ok($$ delete from public.audit_log $$, '42501', null, 'an admin cannot delete entries');

-- Platform administrators ---------------------------------------------------------------------------------
select pg_temp.api_as(5);
select is(private.platform_grant_admin('FORGER@example.org'), 'c5000000-0000-4000-8000-000000000006'::uuid,
  'a superadmin grants platform admin by e-mail');
select throws_ok($$ select private.platform_grant_admin('nobody-here@example.org') $$, 'P0002',
  'no account has the e-mail address nobody-here@example.org', 'an unknown address is named');
select throws_ok($$ select private.platform_revoke_admin('c5000000-0000-4000-8000-000000000005') $$, '55000', null,
  'a superadmin cannot be revoked through the console');
select lives_ok($$ select private.platform_revoke_admin('c5000000-0000-4000-8000-000000000006') $$,
  'a superadmin revokes platform admin');
select is((select array_agg(action || ' ' || subject_email order by created_at, action) from private.platform_audit_entries(null, null, null, 200)
           where subject_email = 'forger@example.org'),
  array['platform_admin.granted forger@example.org', 'platform_admin.revoked forger@example.org'],
  'both are in the platform''s audit log');
select tests.clear_act_as();
select is(private.operator_set_superadmin('forger@example.org'), 'c5000000-0000-4000-8000-000000000006'::uuid,
  'the operator''s command makes a superadmin');
select is((select row(is_platform_admin, is_superadmin)::text from public.platform_user_flags
           where user_id = 'c5000000-0000-4000-8000-000000000006'), '(t,t)', 'with both flags');

select * from finish();
rollback;
