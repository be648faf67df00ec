-- Settings > People in SQL (20261128130000_people.sql) and the per-address mail limit
-- (20261125100000_mail_outbox.sql). The people functions answer the configuration API's role only, for
-- an admin of the active organization with a live session, at once after any change of membership;
-- they are probed as an attacker would: through the Data API's roles, as another organization's admin,
-- as staff, as a removed member, with a signed-out session, as an API key. The last admin stays.
begin;
select no_plan();

select tests.can_become('config_api') as config_api \gset
\if :config_api

-- People: A has two admins and a staff member, B one admin; a removed member of A still has a session.
select tests.create_organization('People A', 'a6000000-0000-4000-8000-00000000000a');
select tests.create_organization('People B', 'a6000000-0000-4000-8000-00000000000b');
select tests.add_member(tests.create_user(email, id::uuid), org::uuid, role, now() - interval '3 days')
from (values ('people-admin-a@example.org', 'a6100000-0000-4000-8000-0000000000a1', 'a6000000-0000-4000-8000-00000000000a', 'admin'),
             ('people-staff-a@example.org', 'a6100000-0000-4000-8000-0000000000a2', 'a6000000-0000-4000-8000-00000000000a', 'staff'),
             ('people-second-a@example.org', 'a6100000-0000-4000-8000-0000000000a4', 'a6000000-0000-4000-8000-00000000000a', 'admin'),
             ('people-admin-b@example.org', 'a6100000-0000-4000-8000-0000000000b1', 'a6000000-0000-4000-8000-00000000000b', 'admin'))
  v (email, id, org, role);
select tests.create_user('people-removed-a@example.org', 'a6100000-0000-4000-8000-0000000000a3');
update auth.users set last_sign_in_at = now() - interval '2 hours' where id = 'a6100000-0000-4000-8000-0000000000a2';
-- One live session per person (session id = user id with a 5 in front), as signing in makes.
insert into auth.sessions (id, user_id, created_at, updated_at, aal)
  select ('a65' || substr(id::text, 4))::uuid, id, now(), now(), 'aal1' from auth.users
   where id::text like 'a6100000-%';
insert into public.user_active_organization values
  ('a6100000-0000-4000-8000-0000000000a2', 'a6000000-0000-4000-8000-00000000000a');

-- A request of the configuration API (or, with role authenticated, the Data API) for a user.
create function pg_temp.act(who text, org text, as_role text default 'config_api') returns void
language sql as $$
  select tests.set_claims(as_role, jsonb_build_object('sub', 'a6100000-0000-4000-8000-0000000000' || who,
    'role', 'authenticated', 'aud', 'authenticated', 'organization_id', 'a6000000-0000-4000-8000-00000000000' || org,
    'session_id', 'a6500000-0000-4000-8000-0000000000' || who)) $$;
-- What a statement raises: its SQLSTATE, hint and detail.
create function pg_temp.raised(statement text) returns text
language plpgsql as $$
declare
  state text;
  hint text;
  detail text;
begin
  execute statement;
  return 'nothing';
exception when others then
  get stacked diagnostics state = returned_sqlstate, hint = pg_exception_hint, detail = pg_exception_detail;
  return concat_ws(' ', state, nullif(hint, ''), nullif(detail, ''));
end $$;
create temp table membership as
  select p.user_id, p.id from public.profiles p where p.user_id::text like 'a6100000-%';
grant select on membership to public;

-- Only the configuration API's door ---------------------------------------------------------------------
select pg_temp.act('a1', 'a', 'authenticated');
select throws_ok($$ select * from private.organization_people() $$, '42501', null,
  'the Data API''s role cannot list people (the functions are the configuration API''s)');
select throws_ok($$ select private.set_member_role((select id from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2'), 'admin') $$,
  '42501', null, 'nor change a role');
select throws_ok($$ select private.remove_member((select id from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2')) $$,
  '42501', null, 'nor remove a member');
select throws_ok($$ select private.mail_recipient_next_at(null, 'invitation', 'x@example.org') $$, '42501', null,
  'nor read what was mailed to an address');
select tests.act_as_anon();
select throws_ok($$ select * from private.organization_people() $$, '42501', null, 'anonymous callers neither');

-- Listing -------------------------------------------------------------------------------------------------
select pg_temp.act('a1', 'a');
select is(current_user::text, 'config_api', 'acting as the configuration API');
select results_eq($$ select email, role, joined_at = now() - interval '3 days', last_sign_in_at
                     from private.organization_people() $$,
  $$ values ('people-admin-a@example.org', 'admin', true, null::timestamptz),
            ('people-second-a@example.org', 'admin', true, null),
            ('people-staff-a@example.org', 'staff', true, now() - interval '2 hours') $$,
  'an admin lists their organization''s people: admins first, with joined date and last sign-in');
select is((select count(*)::int from private.organization_people(2)), 2, 'at most as many as asked for');
select is((select email from private.organization_person((select id from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2'))),
  'people-staff-a@example.org', 'and one of them by membership id');

-- Attackers ---------------------------------------------------------------------------------------------
select pg_temp.act('b1', 'b');
select is(array(select email from private.organization_people()), array['people-admin-b@example.org'],
  'the admin of B sees only B''s people');
select is(pg_temp.raised(format('select private.organization_person(%L)', id)), 'P0002',
  'the admin of B cannot read a member of A (answered as an unknown id)')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(pg_temp.raised(format('select private.set_member_role(%L, %L)', id, 'admin')), 'P0002',
  'nor change their role') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), 'P0002',
  'nor remove them') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select pg_temp.act('a1', 'b');
select is(pg_temp.raised('select private.organization_people()'), '42501',
  'an admin of A whose token claims B gets nothing of B');

select pg_temp.act('a2', 'a');
select is(pg_temp.raised('select private.organization_people()'), '42501', 'staff cannot list people');
select is(pg_temp.raised(format('select private.set_member_role(%L, %L)', id, 'admin')), '42501',
  'staff cannot make themselves admin') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), '42501',
  'staff cannot remove an admin') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a1';

select pg_temp.act('a3', 'a');
select is(pg_temp.raised('select private.organization_people()'), '42501',
  'a removed member with a live session and a token naming A gets nothing');

select tests.set_claims('config_api', jsonb_build_object('role', 'authenticated',
  'api_key_id', gen_random_uuid(), 'organization_id', 'a6000000-0000-4000-8000-00000000000a'));
select is(pg_temp.raised('select private.organization_people()'), '42501', 'an API key cannot manage people');

select tests.clear_act_as();
delete from auth.sessions where id = 'a6500000-0000-4000-8000-0000000000a4';
select pg_temp.act('a4', 'a');
select is(pg_temp.raised('select private.organization_people()'), '42501',
  'a signed-out admin''s token (its session ended) can do nothing, within the hour of the token');
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), '42501',
  'not even remove another admin') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a1';
select tests.clear_act_as();
insert into auth.sessions (id, user_id, created_at, updated_at, aal)
  values ('a6500000-0000-4000-8000-0000000000a4', 'a6100000-0000-4000-8000-0000000000a4', now(), now(), 'aal1');

-- Changing roles, taking effect at the next request --------------------------------------------------
select pg_temp.act('a1', 'a');
select is(pg_temp.raised(format('select private.set_member_role(%L, %L)', id, 'owner')), '22023',
  'an unknown role is refused') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select lives_ok(format('select private.set_member_role(%L, %L)', id, 'admin'), 'an admin makes staff an admin')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select pg_temp.act('a2', 'a');
select is((select count(*)::int from private.organization_people()), 3, 'who can manage people at their next request');
select lives_ok(format('select private.set_member_role(%L, %L)', id, 'staff'), 'an admin makes an admin staff')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a4';
select pg_temp.act('a4', 'a');
select is(pg_temp.raised('select private.organization_people()'), '42501',
  'and the demoted admin can no longer, at their next request');
select pg_temp.act('a1', 'a');
select lives_ok(format('select private.set_member_role(%L, %L)', id, 'staff'), 'an admin steps down while another admin remains')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a1';
select pg_temp.act('a2', 'a');
select is(pg_temp.raised(format('select private.set_member_role(%L, %L)', id, 'staff')), '55000 Make another member an admin first.',
  'the last admin cannot be demoted') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), '55000 Make another member an admin first.',
  'nor removed') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select lives_ok(format('select private.set_member_role(%L, %L)', id, 'admin'), 'the last admin may stay admin (no change)')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';

-- Removing ----------------------------------------------------------------------------------------------
select tests.clear_act_as();
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash, created_by)
  values ('a6600000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-00000000000a', 'Zapier', 'orgkey_people',
          encode(sha256('people api key'::bytea), 'hex'), 'a6100000-0000-4000-8000-0000000000a2');
-- An endpoint a2 made, sending A's data to a URL of their own, and one made with their key.
insert into public.webhook_endpoints (id, organization_id, url, events, created_by, created_by_api_key_id) values
  ('a6800000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-00000000000a', 'https://people-a2.example/own',
   '{member.created}', 'a6100000-0000-4000-8000-0000000000a2', null),
  ('a6800000-0000-4000-8000-000000000002', 'a6000000-0000-4000-8000-00000000000a', 'https://people-a2.example/zap',
   '{member.created}', null, 'a6600000-0000-4000-8000-000000000001');
select pg_temp.act('a2', 'a');
select lives_ok(format('select private.set_member_role(%L, %L)', id, 'admin'), 'staff made admin again')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a1';
select pg_temp.act('a1', 'a');
select is((select array_agg(e.url order by e.url) from private.member_endpoints(m.id) e), array[
  'https://people-a2.example/own', 'https://people-a2.example/zap'], 'the endpoints removing them would disable')
  from membership m where m.user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(private.remove_member(id), 2, 'an admin removes another admin: their two endpoints are disabled')
  from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select tests.clear_act_as();
select is((select count(*)::int from public.profiles where user_id = 'a6100000-0000-4000-8000-0000000000a2'), 0,
  'the membership is gone');
select is((select count(*)::int from public.user_active_organization where user_id = 'a6100000-0000-4000-8000-0000000000a2'), 0,
  'and the remembered choice of the organization');
select isnt((select revoked_at from public.organization_api_keys where id = 'a6600000-0000-4000-8000-000000000001'), null,
  'the API key the removed admin made is revoked');
select is((select array_agg(enabled::text || ': ' || disabled_reason order by id) from public.webhook_endpoints
            where id::text like 'a6800000-%'),
  array_fill('false: its creator, people-staff-a@example.org, was removed from the organization by people-admin-a@example.org'::text,
             array[2]),
  'the endpoints they made, themselves or with their key, are disabled, saying why and who');
select pg_temp.act('a2', 'a');
select is(pg_temp.raised('select private.organization_people()'), '42501', 'the removed admin can do nothing at their next request');
select pg_temp.act('a2', 'a', 'authenticated');
select is((select count(*)::int from public.profiles where organization_id = 'a6000000-0000-4000-8000-00000000000a'), 0,
  'and through the Data API sees none of A''s people');
select pg_temp.act('a1', 'a');
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), 'P0002',
  'removing them again: not found') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a2';
select is(pg_temp.raised(format('select private.remove_member(%L)', id)), '55000 Make another member an admin first.',
  'the last admin cannot remove themselves') from membership where user_id = 'a6100000-0000-4000-8000-0000000000a1';
-- An organization deleted with its people: their endpoints go with it, nothing is disabled on the way.
select tests.clear_act_as();
select tests.create_organization('People Gone', 'a6000000-0000-4000-8000-00000000000c');
select tests.add_member(tests.create_user('people-gone@example.org', 'a6100000-0000-4000-8000-0000000000c1'),
                        'a6000000-0000-4000-8000-00000000000c', 'admin', now() - interval '3 days');
insert into public.webhook_endpoints (organization_id, url, events, created_by) values
  ('a6000000-0000-4000-8000-00000000000c', 'https://people-gone.example/hook', '{member.created}',
   'a6100000-0000-4000-8000-0000000000c1');
select lives_ok($$ delete from public.organizations where id = 'a6000000-0000-4000-8000-00000000000c' $$,
  'deleting an organization whose admin made an endpoint');

-- Mails to one address -------------------------------------------------------------------------------------
select tests.clear_act_as();
select pg_temp.act('a1', 'a');
select is(private.invitation_mail_available_at('people-new@example.org'), null, 'a first invitation mail can go now');
select lives_ok($$ select public.create_invitation('people-new@example.org', 'staff') $$, 'an admin invites an address');
select is(private.invitation_mail_available_at('People-New@example.org'), now() + interval '1 minute',
  'the next invitation mail to it can go a minute later');
select is(pg_temp.raised($$ select public.create_invitation('people-new@example.org', 'admin') $$),
  '54000 recipient_limit ' || to_char((now() + interval '1 minute') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'inviting it again at once is refused, saying when it can go');
select is((select array_agg(role) from public.organization_invitations
            where email = 'people-new@example.org' and revoked_at is null), array['staff'],
  'and the open invitation stays as it was');
-- Four more, each a minute after the last (the clock of this transaction stands still: move the mails).
do $$
begin
  for i in 1 .. 4 loop
    perform set_config('role', 'none', true);
    update private.mail_outbox set created_at = created_at - interval '2 minutes' where recipient = 'people-new@example.org';
    perform set_config('role', 'config_api', true);
    perform public.create_invitation('people-new@example.org', 'staff');
  end loop;
end $$;
select tests.clear_act_as();
update private.mail_outbox set created_at = created_at - interval '2 minutes' where recipient = 'people-new@example.org';
select min(created_at) + interval '24 hours' as sixth_at from private.mail_outbox where recipient = 'people-new@example.org' \gset
select pg_temp.act('a1', 'a');
select is(private.invitation_mail_available_at('people-new@example.org'), :'sixth_at'::timestamptz,
  'five invitation mails to one address in a day: the sixth waits until the first is a day old');
select matches(pg_temp.raised($$ select public.create_invitation('people-new@example.org', 'staff') $$),
  '^54000 recipient_limit ', 'and is refused until then');

-- From many organizations: ten established ones (a day old or more) a day to one address, and apart
-- from them three new ones, so organizations made in minutes cannot use up a church's invitation.
select tests.clear_act_as();
select tests.create_organization('People Spam ' || g, ('a6700000-0000-4000-8000-0000000000' || lpad(g::text, 2, '0'))::uuid)
  from generate_series(1, 16) g;
update public.organizations set created_at = now() - interval '30 days'
 where id in (select ('a6700000-0000-4000-8000-0000000000' || lpad(g::text, 2, '0'))::uuid from generate_series(1, 11) g);
select is((select count(private.mail_enqueue(('a6700000-0000-4000-8000-0000000000' || lpad(g::text, 2, '0'))::uuid,
                                             'invitation', 'people-throwaway@example.org', '{}'))::int
             from generate_series(12, 14) g), 3, 'three new organizations invite one person');
select matches(pg_temp.raised($$ select private.mail_enqueue('a6700000-0000-4000-8000-000000000015', 'invitation',
                                                              'people-throwaway@example.org', '{}') $$),
  '^54000 recipient_limit ', 'a fourth new organization''s invitation to them waits');
select isnt(private.mail_enqueue('a6700000-0000-4000-8000-000000000001', 'invitation', 'people-throwaway@example.org',
                                 '{}'), null, 'an established church''s invitation to them goes all the same');
select is((select count(private.mail_enqueue(('a6700000-0000-4000-8000-0000000000' || lpad(g::text, 2, '0'))::uuid,
                                             'invitation', 'people-stranger@example.org', '{}'))::int
             from generate_series(1, 10) g), 10, 'ten established organizations invite one stranger');
select is(pg_temp.raised($$ select private.mail_enqueue('a6700000-0000-4000-8000-000000000011', 'invitation',
                                                         'people-stranger@example.org', '{}') $$),
  '54000 recipient_limit ' || to_char((now() + interval '24 hours') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'an eleventh established organization''s invitation to them waits a day');
select is((select count(private.mail_enqueue('a6700000-0000-4000-8000-000000000016', 'invitation',
                                             'people-young-' || g || '@example.org', '{}'))::int
             from generate_series(1, 50) g), 50, 'a new organization sends fifty invitations in its first day');
select is(pg_temp.raised($$ select private.mail_enqueue('a6700000-0000-4000-8000-000000000016', 'invitation',
                                                         'people-young-51@example.org', '{}') $$),
  '54000 young_organization', 'and no fifty-first');

-- Notices: twenty a day to one address, whatever invitations it got.
select is((select count(private.mail_enqueue('a6000000-0000-4000-8000-00000000000a', 'endpoint_failing',
                                             'people-stranger@example.org', '{}', 'people-notice-' || g))::int
             from generate_series(1, 20) g), 20, 'twenty notices go to one address in a day, beside its invitations');
select is(private.mail_enqueue('a6000000-0000-4000-8000-00000000000a', 'endpoint_failing', 'people-stranger@example.org',
                               '{}', 'people-notice-21'), null, 'the twenty-first does not');
select is((select status || ': ' || last_error from private.mail_outbox where dedupe_key = 'people-notice-21'),
  'failed: not sent: this address was sent 20 notices in the last 24 hours',
  'it is recorded as not sent, with the reason');
update private.mail_outbox set status = 'cancelled', next_attempt_at = null
 where recipient = 'people-stranger@example.org' and dedupe_key = 'people-notice-20';
select isnt(private.mail_enqueue('a6000000-0000-4000-8000-00000000000a', 'endpoint_failing', 'people-stranger@example.org',
                                 '{}', 'people-notice-22'), null, 'a cancelled mail (never sent) does not count');

\else
select skip('the test role cannot become config_api here', 1);
\endif

select * from finish();
rollback;
