-- Two doors, one rule (docs/two-doors.md#two-doors-one-rule). The attacks as they were shown
-- against a hosted project, performed as PostgREST performs a request (`authenticated` with the token's
-- claims in request.jwt.claims, inside one transaction) and as the configuration API does (`config_api`):
--   1. a signed-out (or stolen) admin token read endpoint signing secrets, made itself a permanent API
--      key and invited an admin through the Data API; a signed-out staff token read and wrote members;
--   2. an admin about to be removed invited themselves as admin and accepted after the removal;
-- and the acceptance: a signed-out session's token changes and reads nothing through either door from
-- its next statement on.
begin;
select no_plan();

select tests.create_tenants('d6000000-0000-4000-8000-00000000000a', 'd6000000-0000-4000-8000-00000000000b',
                           'd6100000-0000-4000-8000-000000000001', 'd6100000-0000-4000-8000-000000000002',
                           'd6100000-0000-4000-8000-000000000003');
select tests.add_member(tests.create_user('second-admin-a@example.org', 'd6100000-0000-4000-8000-000000000004'),
                        'd6000000-0000-4000-8000-00000000000a', 'admin');
select tests.create_endpoint('d6000000-0000-4000-8000-00000000000a', 'd6200000-0000-4000-8000-000000000001');
insert into public.members (id, organization_id, first_name, email) values
  ('d6300000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-00000000000a', 'Ada', 'ada@example.org');
insert into public.donations (organization_id, member_id, amount_minor, currency)
  values ('d6000000-0000-4000-8000-00000000000a', 'd6300000-0000-4000-8000-000000000001', 500, 'GBP');
insert into public.whatsapp_conversations (id, organization_id, contact_phone)
  values ('d6400000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-00000000000a', '447700900001');
insert into public.whatsapp_messages (organization_id, conversation_id, provider_message_id, direction, type, text, status)
  values ('d6000000-0000-4000-8000-00000000000a', 'd6400000-0000-4000-8000-000000000001', 'wamid.d6', 'inbound', 'text',
          'Hello', 'received');
insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, signature_valid, status)
  values ('d6000000-0000-4000-8000-00000000000a', 'checkout', 'charged', 'idem-d6', '{"email":"ada@example.org"}', true,
          'processed');

create temp table delivery as
  select id as delivery from public.webhook_deliveries where endpoint_id = 'd6200000-0000-4000-8000-000000000001' limit 1;
grant select on delivery to authenticated;

-- The sessions, as signing in makes them; then the admin and the staff member sign out. Their tokens
-- (valid for up to an hour) keep naming the ended sessions.
create temp table tokens (who text primary key, session uuid);
grant select on tokens to authenticated, anon;
insert into tokens values
  ('admin', tests.session_of('d6100000-0000-4000-8000-000000000001')),
  ('staff', tests.session_of('d6100000-0000-4000-8000-000000000002'));
select tests.sign_out('d6100000-0000-4000-8000-000000000001');
select tests.sign_out('d6100000-0000-4000-8000-000000000002');
create function pg_temp.signed_out(who text, door text default 'Data API') returns void language sql as $$
  select case door when 'Data API' then tests.act_as(u, 'd6000000-0000-4000-8000-00000000000a', t.session)
                   else tests.act_as_config_api(u, 'd6000000-0000-4000-8000-00000000000a', t.session) end
  from tokens t, lateral (select case who when 'admin' then 'd6100000-0000-4000-8000-000000000001'::uuid
                                          else 'd6100000-0000-4000-8000-000000000002'::uuid end) x (u)
  where t.who = signed_out.who $$;

-- 1. A signed-out admin's token, through the Data API ----------------------------------------------------
select pg_temp.signed_out('admin');
select throws_ok($$ select secret from public.webhook_endpoints $$, '42501', null,
  'signed-out admin, Data API: endpoint signing secrets are not readable');
select throws_ok($$ insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
  values ('d6000000-0000-4000-8000-00000000000a', 'mine', 'orgkey_attack', encode(sha256('attacker key'::bytea), 'hex'),
          'd6100000-0000-4000-8000-000000000001') $$, '42501', null,
  'signed-out admin, Data API: cannot make an API key of a chosen hash');
select throws_ok($$ select public.create_invitation('attacker@example.org', 'admin') $$, '42501', null,
  'signed-out admin, Data API: cannot invite an admin');
select is((select count(*)::int from public.members) + (select count(*)::int from public.donations)
          + (select count(*)::int from public.whatsapp_messages) + (select count(*)::int from public.profiles), 0,
  'signed-out admin, Data API: reads no members, donations, messages or people');
select throws_ok($$ select count(*) from public.inbound_webhook_log $$, '42501', null,
  'signed-out admin, Data API: inbound payloads are not the Data API''s');
select throws_ok($$ select public.set_active_organization('d6000000-0000-4000-8000-00000000000a') $$, '42501', null,
  'signed-out admin, Data API: cannot even switch organizations');
select tests.clear_act_as();
select is((select count(*)::int from private.authenticate_api_key(encode(sha256('attacker key'::bytea), 'hex'))), 0,
  'no key of the attacker''s choosing authenticates');

-- ... and through the configuration API: nothing either.
select pg_temp.signed_out('admin', 'configuration API');
select is(private.webhook_admin_organization_id(), null, 'signed-out admin, configuration API: may configure nothing');
select is((select count(*)::int from public.webhook_endpoints) + (select count(*)::int from public.members)
          + (select count(*)::int from public.inbound_webhook_log) + (select count(*)::int from public.organization_api_keys), 0,
  'signed-out admin, configuration API: reads no endpoints, members, payloads or keys');
select throws_ok($$ insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
  values ('d6000000-0000-4000-8000-00000000000a', 'mine', 'orgkey_attack', encode(sha256('attacker key 2'::bytea), 'hex'),
          'd6100000-0000-4000-8000-000000000001') $$, '42501', null,
  'signed-out admin, configuration API: cannot make an API key');
select throws_ok($$ select public.create_invitation('attacker@example.org', 'admin') $$, '42501', null,
  'signed-out admin, configuration API: cannot invite');
select throws_ok($$ select public.webhook_rotate_secret('d6200000-0000-4000-8000-000000000001') $$, '42501', null,
  'signed-out admin, configuration API: cannot rotate (and so read) a signing secret');
select tests.clear_act_as();

-- A signed-out staff member's token reads and writes no day-to-day record.
select pg_temp.signed_out('staff');
select is((select count(*)::int from public.members) + (select count(*)::int from public.donations)
          + (select count(*)::int from public.whatsapp_messages), 0,
  'signed-out staff, Data API: reads no members, donations or messages');
select throws_ok($$ insert into public.members (organization_id, first_name)
  values ('d6000000-0000-4000-8000-00000000000a', 'Planted') $$, '42501', null,
  'signed-out staff, Data API: cannot add a member');
with u as (update public.members set first_name = 'Changed' returning 1)
  select is(count(*)::int, 0, 'signed-out staff, Data API: changes no member') from u;
select tests.clear_act_as();
select is((select first_name from public.members where id = 'd6300000-0000-4000-8000-000000000001'), 'Ada',
  'the member is untouched');

-- A live admin: the Data API still serves none of the settings area, and no door shows a secret.
select tests.act_as('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a');
select ok((select count(*) from public.members) >= 1, 'control: a live admin reads members through the Data API');
select throws_ok($$ select count(*) from public.webhook_endpoints $$, '42501', null,
  'live admin, Data API: endpoints are the settings area''s');
select throws_ok($$ select count(*) from public.organization_api_keys $$, '42501', null,
  'live admin, Data API: API keys are the settings area''s');
select throws_ok($$ select public.create_invitation('someone@example.org', 'staff') $$, '42501', null,
  'live admin, Data API: invitations are the settings area''s');
select throws_ok(format($$ select public.webhook_redeliver(%L) $$, (select delivery from delivery)), '42501', null,
  'live admin, Data API: webhook operations are the settings area''s');
select throws_ok($$ select public.erase_member('d6300000-0000-4000-8000-000000000001') $$, '42501', null,
  'live admin, Data API: erasure is the settings area''s');
select throws_ok($$ update public.profiles set role = 'staff' where user_id = 'd6100000-0000-4000-8000-000000000002' $$,
  '42501', null, 'live admin, Data API: roles are changed in the settings area');
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a');
select is((select count(*)::int from public.webhook_endpoints), 1, 'control: a live admin reads endpoints through the configuration API');
select throws_ok($$ select secret from public.webhook_endpoints $$, '42501', null,
  'live admin, configuration API: the signing secret is write-only');
select throws_ok($$ select previous_secret from public.webhook_endpoints $$, '42501', null,
  'live admin, configuration API: the previous signing secret too');
select throws_ok($$ select key_hash from public.organization_api_keys $$, '42501', null,
  'live admin, configuration API: API key hashes are not readable');
select throws_ok($$ select token_hash from public.organization_invitations $$, '42501', null,
  'live admin, configuration API: invitation token hashes are not readable');
select throws_ok($$ select payments_webhook_secret from public.organization_settings $$, '42501', null,
  'live admin, configuration API: inbound provider secrets are write-only');
select throws_ok($$ select app_secret from public.messaging_account_secrets $$, '42501', null,
  'live admin, configuration API: WhatsApp secrets are not readable');
select tests.clear_act_as();

-- Acceptance: within one request of the sign-out. The same token reads members, then its session ends
-- (Supabase Auth deletes it), and the token's next statement reads and changes nothing, through either door.
select tests.act_as('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a');
select ok((select count(*) from public.members) >= 1, 'before the sign-out: the token reads members');
select tests.clear_act_as();
insert into tokens values ('second admin', tests.session_of('d6100000-0000-4000-8000-000000000004'));
select tests.sign_out('d6100000-0000-4000-8000-000000000004');
select tests.act_as('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a',
                    (select session from tokens where who = 'second admin'));
select is((select count(*)::int from public.members), 0, 'the next statement after the sign-out: nothing (Data API)');
with u as (update public.members set first_name = 'Late' returning 1)
  select is(count(*)::int, 0, 'and changes nothing (Data API)') from u;
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a',
                               (select session from tokens where who = 'second admin'));
select is((select count(*)::int from public.webhook_endpoints) + (select count(*)::int from public.members), 0,
  'nothing through the configuration API either');
select is(private.session_is_live(), false, 'the configuration API tells it apart (401 session_not_found)');
select tests.clear_act_as();

-- A session past its not_after (Supabase Auth's time-boxed sessions) is over too.
select tests.session_of('d6100000-0000-4000-8000-000000000003');
update auth.sessions set not_after = now() - interval '1 second'
 where user_id = 'd6100000-0000-4000-8000-000000000003';
select tests.act_as('d6100000-0000-4000-8000-000000000003', 'd6000000-0000-4000-8000-00000000000b',
                    (select id from auth.sessions where user_id = 'd6100000-0000-4000-8000-000000000003' limit 1));
select is((select count(*)::int from public.organizations), 0, 'a session past its not_after sees nothing');
select tests.clear_act_as();
-- A token naming another user's live session is no session of its bearer's.
select tests.act_as('d6100000-0000-4000-8000-000000000003', 'd6000000-0000-4000-8000-00000000000b',
                    tests.session_of('d6100000-0000-4000-8000-000000000001'));
select is((select count(*)::int from public.organizations), 0, 'a token naming another user''s session sees nothing');
select tests.clear_act_as();

-- 2. Authority ends everywhere: an admin about to be removed keeps no way back -------------------------------
select tests.add_member(tests.create_user('leaving-admin@example.org', 'd6100000-0000-4000-8000-000000000005'),
                        'd6000000-0000-4000-8000-00000000000a', 'admin');
select tests.create_user('their-other-account@example.org', 'd6100000-0000-4000-8000-000000000006');
create temp table kept (name text primary key, value text);
grant all on kept to authenticated;
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000005', 'd6000000-0000-4000-8000-00000000000a');
insert into kept select 'way back', public.create_invitation('their-other-account@example.org', 'admin') ->> 'token';
insert into kept select 'bystander', public.create_invitation('new-staff@example.org', 'staff') ->> 'token';
select tests.clear_act_as();
select tests.add_member(tests.create_user('demoted-admin@example.org', 'd6100000-0000-4000-8000-000000000007'),
                        'd6000000-0000-4000-8000-00000000000a', 'admin');
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000007', 'd6000000-0000-4000-8000-00000000000a');
insert into kept select 'demoted', public.create_invitation('demoted-friend@example.org', 'admin') ->> 'token';
select tests.clear_act_as();
-- Another admin removes the first and demotes the second, through the configuration API; that admin's
-- own invitation stays open.
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a',
                               tests.session_of('d6100000-0000-4000-8000-000000000004'));
select lives_ok($$ select public.create_invitation('stays-open@example.org', 'staff') $$, 'control: the remaining admin invites');
delete from public.profiles where user_id = 'd6100000-0000-4000-8000-000000000005';
update public.profiles set role = 'staff' where user_id = 'd6100000-0000-4000-8000-000000000007';
select is(
  array(select email || ': ' || coalesce(revoked_reason, 'open') from public.organization_invitations
        where email in ('their-other-account@example.org', 'new-staff@example.org', 'demoted-friend@example.org',
                        'stays-open@example.org')
        order by email),
  array['demoted-friend@example.org: its inviter is no longer an administrator',
        'new-staff@example.org: its inviter is no longer an administrator',
        'stays-open@example.org: open',
        'their-other-account@example.org: its inviter is no longer an administrator'],
  'removing or demoting an admin withdraws every open invitation they issued, saying why, and no one else''s');
select tests.clear_act_as();
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000006', null);
select throws_ok(format($$ select public.accept_invitation(%L) $$, (select value from kept where name = 'way back')),
  'P0002', null, 'the removed admin''s own invitation no longer brings them back');
select tests.clear_act_as();
select is((select count(*)::int from public.profiles where user_id = 'd6100000-0000-4000-8000-000000000006'), 0,
  'and no membership was made');
-- Leaving ends them as well.
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000004', 'd6000000-0000-4000-8000-00000000000a');
select lives_ok($$ select public.create_invitation('after-leaving@example.org', 'staff') $$, 'control: a live admin invites');
select lives_ok($$ select public.leave_organization('d6000000-0000-4000-8000-00000000000a') $$, 'and then leaves');
select tests.clear_act_as();
select is((select revoked_reason from public.organization_invitations where email = 'after-leaving@example.org'),
  'its inviter is no longer an administrator', 'leaving withdraws the invitations one issued');
-- An inviter whose account is deleted: their open invitations end with it.
select tests.act_as_config_api('d6100000-0000-4000-8000-000000000001', 'd6000000-0000-4000-8000-00000000000a');
select lives_ok($$ select public.create_invitation('orphaned@example.org', 'admin') $$, 'an admin invites');
select tests.clear_act_as();
delete from auth.users where id = 'd6100000-0000-4000-8000-000000000001';
select is((select revoked_at is not null from public.organization_invitations where email = 'orphaned@example.org'), true,
  'an invitation whose inviter''s account is deleted is withdrawn');

select * from finish();
rollback;
