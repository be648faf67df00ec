-- Memberships are consented to. The attack as reported: an admin of A enrolls a
-- member of B with a 1970 created_at, the hook then lands the victim in A. Now: no user writes a
-- membership row, an admin invites, only the invitee's acceptance creates the membership (with
-- server-set columns), a member can leave, the last admin cannot, and nothing A does moves the victim.
begin;
select no_plan();

select tests.create_organization('Church A', 'c1000000-0000-4000-8000-00000000000a');
select tests.create_organization('Church B', 'c1000000-0000-4000-8000-00000000000b');
-- (memberships a day old: inside this one transaction now() never moves, and the hook orders by time)
select tests.add_member(tests.create_user(email, id::uuid), organization_id::uuid, role, now() - interval '1 day')
from (values ('admin-a@example.org', 'c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a', 'admin'),
             ('staff-a@example.org', 'c2000000-0000-4000-8000-00000000000b', 'c1000000-0000-4000-8000-00000000000a', 'staff'),
             ('admin-b@example.org', 'c2000000-0000-4000-8000-0000000000b1', 'c1000000-0000-4000-8000-00000000000b', 'admin'),
             ('victim@example.org', 'c2000000-0000-4000-8000-0000000000f0', 'c1000000-0000-4000-8000-00000000000b', 'staff'))
  v (email, id, organization_id, role);
select tests.create_user('bystander@example.org', 'c2000000-0000-4000-8000-0000000000f1');

create table pg_temp.kept (name text primary key, value text);
grant all on pg_temp.kept to authenticated;

-- Where the victim's next token lands: the organization the hook puts in the claims (tests.token_claims).
select is(tests.token_claims('c2000000-0000-4000-8000-0000000000f0') ->> 'organization_id', 'c1000000-0000-4000-8000-00000000000b',
  'before: the victim lands in B');

-- The attack as performed ----------------------------------------------------------------------------
select tests.act_as('c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a');
select throws_ok($$ insert into public.profiles (user_id, organization_id, role, created_at)
  values ('c2000000-0000-4000-8000-0000000000f0', 'c1000000-0000-4000-8000-00000000000a', 'staff', '1970-01-01') $$,
  '42501', null, 'admin of A cannot enroll a member of B (insert into profiles)');
select throws_ok($$ insert into public.profiles (user_id, organization_id, role)
  values ('c2000000-0000-4000-8000-0000000000f0', 'c1000000-0000-4000-8000-00000000000a', 'staff') $$,
  '42501', null, 'not even without created_at');
select throws_ok($$ update public.profiles set created_at = '1970-01-01' $$,
  '42501', null, 'admin of A cannot back-date memberships of A (created_at is server-set)');
select throws_ok($$ update public.profiles set user_id = 'c2000000-0000-4000-8000-0000000000f0'
  where user_id = 'c2000000-0000-4000-8000-00000000000b' $$,
  '42501', null, 'admin of A cannot hand a member''s row to the victim');
select throws_ok($$ update public.organizations set created_at = '1970-01-01' $$,
  '42501', null, 'an organization''s created_at is server-set too');
select tests.clear_act_as();
select is(tests.token_claims('c2000000-0000-4000-8000-0000000000f0') ->> 'organization_id', 'c1000000-0000-4000-8000-00000000000b',
  'after the attack: the victim still lands in B');

-- Invitations (the settings area's: through the configuration API) ----------------------------------------
select tests.act_as_config_api('c2000000-0000-4000-8000-00000000000b', 'c1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select public.create_invitation('victim@example.org', 'staff') $$,
  '42501', null, 'staff cannot invite');
select tests.act_as_config_api('c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select public.create_invitation('not an address', 'staff') $$, '22023', null, 'a malformed address is refused');
select throws_ok($$ select public.create_invitation('victim@example.org', 'owner') $$, '22023', null, 'an unknown role is refused');
select throws_ok($$ select public.create_invitation('Staff-A@example.org', 'staff') $$, '23505', null,
  'an address that is already a member is refused');
insert into pg_temp.kept select 'first', public.create_invitation('Victim@Example.org', 'admin') ->> 'token';
-- (a minute later: an address gets one invitation mail a minute, and this transaction's clock stands still)
select tests.clear_act_as();
update private.mail_outbox set created_at = created_at - interval '1 minute' where recipient = 'victim@example.org';
select tests.act_as_config_api('c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a');
insert into pg_temp.kept select 'victim', public.create_invitation('victim@example.org', 'staff') ->> 'token';
select matches((select value from pg_temp.kept where name = 'victim'), '^inv_[0-9a-f]{64}$', 'the admin gets a token');
select is((select count(*)::int from public.organization_invitations where revoked_at is null and accepted_at is null), 1,
  'inviting the address again replaces the open invitation');
select is((select array[email, role, invited_by::text] from public.organization_invitations where revoked_at is null),
  array['victim@example.org', 'staff', 'c2000000-0000-4000-8000-00000000000a'],
  'the admin reads the invitation: address (lower-cased), role, who invited');
select throws_ok($$ select token_hash from public.organization_invitations $$, '42501', null,
  'nobody reads token hashes');
select throws_ok($$ insert into public.organization_invitations (organization_id, email, role, token_hash)
  values ('c1000000-0000-4000-8000-00000000000a', 'x@example.org', 'admin', repeat('a', 64)) $$,
  '42501', null, 'invitations are not written directly');
select throws_ok($$ update public.organization_invitations set created_at = '1970-01-01', expires_at = 'infinity' $$,
  '42501', null, 'an invitation''s server-set columns are not writable');
select tests.clear_act_as();
select is(tests.token_claims('c2000000-0000-4000-8000-0000000000f0') ->> 'organization_id', 'c1000000-0000-4000-8000-00000000000b',
  'an open invitation changes nothing for the victim');

-- Admin of B sees none of A's invitations, cannot revoke them.
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000b1', 'c1000000-0000-4000-8000-00000000000b');
select is((select count(*)::int from public.organization_invitations), 0, 'admin of B sees no invitation of A');
select throws_ok(format($$ select public.revoke_invitation(%L) $$,
  (select id from public.organization_invitations where email = 'victim@example.org' and revoked_at is null)),
  'P0002', null, 'admin of B cannot revoke A''s invitation (answered like an unknown id)');

-- The first (replaced) token no longer works; an invitation is taken with its token, never by address.
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000f1', null);
select throws_ok(format($$ select public.accept_invitation(token => %L) $$, (select value from pg_temp.kept where name = 'first')),
  'P0002', null, 'a replaced invitation''s token is dead');
select is((select count(*)::int from pg_proc where proname in ('my_invitations', 'confirmed_email')), 0,
  'nothing lists or accepts invitations by the caller''s e-mail address (sign-up can confirm any address)');

-- The invitation page asks before anyone signs in: the configuration API, with no user, may preview;
-- the Data API (anon, or a signed-in non-member) reaches neither the preview nor the rows.
select tests.clear_act_as();
update public.profiles set display_name = 'Pastor Ann' where user_id = 'c2000000-0000-4000-8000-00000000000a';
select tests.set_claims('config_api', '{"role": "anon"}');
select is((select array[organization_name, invited_by, role, email] from public.preview_invitation((select value from pg_temp.kept where name = 'victim'))),
  array['Church A', 'Pastor Ann', 'staff', 'victim@example.org'], 'signed out, the configuration API previews: church, inviter''s name, role, address');
select tests.clear_act_as();
select is((select array_agg(a order by a) from unnest(
           (select proargnames from pg_proc where oid = 'public.preview_invitation'::regproc)) a
           where a not in ('token')),
  array['email', 'expires_at', 'invited_by', 'organization_name', 'role'], 'the preview answers these five, no id');
select hasnt_column('public', 'organization_invitations', 'token', 'no token is stored, only its SHA-256 (token_hash)');
select tests.act_as_anon();
select throws_ok($$ select public.preview_invitation('inv_guess') $$, '42501', null, 'the Data API (anon) cannot preview');
select throws_ok($$ select count(*) from public.organization_invitations $$, '42501', null, 'nor read invitations');
select tests.act_as('c2000000-0000-4000-8000-0000000000f1', null);
select throws_ok($$ select public.preview_invitation('inv_guess') $$, '42501', null, 'nor a signed-in non-member');
select throws_ok($$ select count(*) from public.organization_invitations $$, '42501', null, 'who reads no invitation either');
select tests.clear_act_as();

-- The victim, holding the link, sees what the invitation is for and accepts it.
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000f0', 'c1000000-0000-4000-8000-00000000000b');
select is((select array[organization_name, role, email] from public.preview_invitation((select value from pg_temp.kept where name = 'victim'))),
  array['Church A', 'staff', 'victim@example.org'], 'the invitee sees the organization''s name, the role and the address');
select throws_ok($$ select public.preview_invitation('inv_guess') $$, 'P0002', null, 'a guessed token shows nothing');
select is(public.accept_invitation(token => (select value from pg_temp.kept where name = 'victim')) ->> 'organization_id',
  'c1000000-0000-4000-8000-00000000000a', 'the invitee accepts with the token');
select throws_ok(format($$ select public.accept_invitation(token => %L) $$, (select value from pg_temp.kept where name = 'victim')),
  'P0002', null, 'an accepted invitation cannot be used again');
select tests.clear_act_as();
select is((select array[role, (created_at > now() - interval '1 minute')::text] from public.profiles
  where user_id = 'c2000000-0000-4000-8000-0000000000f0' and organization_id = 'c1000000-0000-4000-8000-00000000000a'),
  array['staff', 'true'], 'the membership has the invited role and the server''s time');
select is(tests.token_claims('c2000000-0000-4000-8000-0000000000f0') ->> 'organization_id', 'c1000000-0000-4000-8000-00000000000b',
  'even after accepting, the victim still lands in B (their older membership)');

-- Token acceptance; expiry.
select tests.act_as_config_api('c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a');
insert into pg_temp.kept select 'bystander', public.create_invitation('bystander@example.org', 'admin') ->> 'token';
insert into pg_temp.kept select 'expiring', public.create_invitation('expiring@example.org', 'staff') ->> 'token';
select tests.clear_act_as();
update public.organization_invitations set expires_at = now() - interval '1 second' where email = 'expiring@example.org';
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000f1', null);
select throws_ok(format($$ select public.accept_invitation(token => %L) $$, (select value from pg_temp.kept where name = 'expiring')),
  'P0002', null, 'an expired invitation cannot be accepted');
select throws_ok($$ select public.accept_invitation(token => 'inv_guess') $$, 'P0002', null, 'a guessed token is refused');
select is(public.accept_invitation(token => (select value from pg_temp.kept where name = 'bystander')) ->> 'role', 'admin',
  'the invitee accepts with the token, getting the invited role');
select tests.clear_act_as();

-- Leaving; the last admin stays.
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000f0', 'c1000000-0000-4000-8000-00000000000a');
select lives_ok($$ select public.leave_organization('c1000000-0000-4000-8000-00000000000a') $$, 'the victim leaves A');
select is((select count(*)::int from public.profiles where user_id = 'c2000000-0000-4000-8000-0000000000f0'
  and organization_id = 'c1000000-0000-4000-8000-00000000000a'), 0, 'and is no longer a member of A');
select throws_ok($$ select public.leave_organization('c1000000-0000-4000-8000-00000000000a') $$, 'P0002', null,
  'leaving an organization one is not in answers not found');
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000b1', 'c1000000-0000-4000-8000-00000000000b');
select throws_ok($$ select public.leave_organization('c1000000-0000-4000-8000-00000000000b') $$, '55000', null,
  'the last admin of B cannot leave');
select throws_ok($$ update public.profiles set role = 'staff' where user_id = (select auth.uid()) $$, '55000', null,
  'the last admin of B cannot demote themselves');
select throws_ok($$ delete from public.profiles where user_id = (select auth.uid()) $$, '55000', null,
  'the last admin of B cannot delete their own membership');
select tests.act_as_config_api('c2000000-0000-4000-8000-00000000000a', 'c1000000-0000-4000-8000-00000000000a');
select lives_ok($$ select public.leave_organization('c1000000-0000-4000-8000-00000000000a') $$,
  'an admin of A leaves while another admin (the bystander) remains');
select tests.act_as_config_api('c2000000-0000-4000-8000-0000000000f1', 'c1000000-0000-4000-8000-00000000000a');
with d as (delete from public.profiles where user_id = 'c2000000-0000-4000-8000-00000000000b' returning 1)
  select is(count(*)::int, 1, 'control: an admin still removes a staff member') from d;
select tests.clear_act_as();
select lives_ok($$ delete from public.organizations where id = 'c1000000-0000-4000-8000-00000000000b' $$,
  'the server can still delete an organization with its last admin');

select * from finish();
rollback;
