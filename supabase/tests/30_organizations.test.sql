-- Organizations a church makes itself (20261128120000_organizations.sql): what a name, a time zone and a
-- contact address may be (the table's checks), who may create one (a signed-in person with a live
-- session, through the configuration API's role only, five a day) and change one (its admins), and the
-- attacks: the Data API's roles, a signed-out session, staff, another organization's admin.
begin;
select no_plan();

select tests.create_tenants('d1000000-0000-4000-8000-00000000000a', 'd1000000-0000-4000-8000-00000000000b',
  'd2000000-0000-4000-8000-0000000000a1', 'd2000000-0000-4000-8000-0000000000a2',
  'd2000000-0000-4000-8000-0000000000b1');
select tests.create_user('founder@example.org', 'd2000000-0000-4000-8000-0000000000f1');
insert into auth.sessions (id, user_id, created_at, updated_at)
values ('d3000000-0000-4000-8000-0000000000f1', 'd2000000-0000-4000-8000-0000000000f1', now(), now()),
       ('d3000000-0000-4000-8000-0000000000a1', 'd2000000-0000-4000-8000-0000000000a1', now(), now()),
       ('d3000000-0000-4000-8000-0000000000a2', 'd2000000-0000-4000-8000-0000000000a2', now(), now()),
       ('d3000000-0000-4000-8000-0000000000b1', 'd2000000-0000-4000-8000-0000000000b1', now(), now());

-- A request of the configuration API for a user (its role, the token's claims with a session).
create function pg_temp.api_as(user_id uuid, session_id uuid, organization_id uuid default null) returns void
language sql as $$ select tests.set_claims('config_api', jsonb_strip_nulls(jsonb_build_object(
  'sub', user_id, 'role', 'authenticated', 'aud', 'authenticated', 'session_id', session_id,
  'organization_id', organization_id))) $$;

-- Names: one line, no control, bidi-control or invisible characters ---------------------------------
select throws_ok(format('insert into public.organizations (name) values (%L)', 'Grace' || chr(c) || 'Chapel'),
  '23514', null, format('a name with U+%s is refused', lpad(to_hex(c), 4, '0')))
from unnest(array[x'0a'::int, x'1b'::int, x'7f'::int, x'85'::int, x'ad'::int, x'61c'::int, x'180e'::int,
  x'200b'::int, x'200c'::int, x'200d'::int, x'200e'::int, x'200f'::int, x'2028'::int, x'2029'::int,
  x'202a'::int, x'202e'::int, x'2060'::int, x'2064'::int, x'2066'::int, x'2069'::int, x'206f'::int,
  x'feff'::int, x'fff9'::int, x'fffb'::int]) c;
select lives_ok(format('insert into public.organizations (name) values (%L)', n), format('the name %s is accepted', n))
from unnest(array['Église Saint-Étienne', 'كنيسة النعمة', '恩典教会', 'Grace Chapel ✝️', 'St. Mary''s (Leeds)']) n;
select throws_ok($$ insert into public.organizations (name) values ('   ') $$, '23514', null, 'a blank name is refused');
select throws_ok(format('insert into public.organizations (name) values (%L)', repeat('x', 201)), '23514', null,
  'a name over 200 characters is refused');

-- Time zones and contact addresses ---------------------------------------------------------------------
select lives_ok($$ insert into public.organizations (name, time_zone) values ('tz ok', 'America/Sao_Paulo') $$,
  'an IANA time zone is accepted');
select throws_ok(format('insert into public.organizations (name, time_zone) values (''tz'', %L)', tz), '23514', null,
  format('the time zone %L is refused', tz))
from unnest(array['Mars/Olympus_Mons', 'EST+5', '', 'UTC; drop table x', '<+03>-3']) tz;
select throws_ok(format('insert into public.organizations (name, contact_email) values (''c'', %L)', e), '23514', null,
  format('the contact address %L is refused', e))
from unnest(array['no-at-sign', 'Upper@Example.org', 'a@b', 'a b@example.org']) e;

-- Creating -----------------------------------------------------------------------------------------------
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000f1', 'd3000000-0000-4000-8000-0000000000f1');
select is((private.create_organization('  Founders Church ', 'Europe/London', 'Office@Founders.example') - 'id' - 'created_at'),
  '{"name": "Founders Church", "time_zone": "Europe/London", "contact_email": "office@founders.example", "role": "admin"}'::jsonb,
  'a person with no membership creates an organization (name trimmed, address lower-cased)');
select tests.clear_act_as();
select results_eq($$ select p.role, o.created_by, s.organization_id is not null
  from public.organizations o join public.profiles p on p.organization_id = o.id
  left join public.organization_settings s on s.organization_id = o.id
  where o.name = 'Founders Church' and o.created_by = 'd2000000-0000-4000-8000-0000000000f1' $$,
  $$ values ('admin', 'd2000000-0000-4000-8000-0000000000f1'::uuid, true) $$,
  'the creator is its admin, recorded as its creator, and it has its settings row');
select is((select count(*)::int from public.user_active_organization where user_id = 'd2000000-0000-4000-8000-0000000000f1'), 0,
  'creating does not switch the caller''s active organization');

select pg_temp.api_as('d2000000-0000-4000-8000-0000000000f1', 'd3000000-0000-4000-8000-0000000000f1');
select throws_ok($$ select private.create_organization('founders church') $$, '23505', null,
  'a name the caller''s organizations already have (any case) is refused');
select tests.clear_act_as();
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000b1', 'd3000000-0000-4000-8000-0000000000b1');
select lives_ok($$ select private.create_organization('Founders Church') $$,
  'someone else may call theirs Founders Church too (names are not unique across the platform)');
select tests.clear_act_as();

-- Five a day: the sixth is refused, and says when the next may be created.
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000f1', 'd3000000-0000-4000-8000-0000000000f1');
select lives_ok(format('select private.create_organization(%L)', 'Plant ' || g), format('organization %s of the day', g + 1))
from generate_series(1, 4) g;
select throws_ok($$ select private.create_organization('Plant 5') $$, '54000', null, 'the sixth in 24 hours is refused');
select tests.clear_act_as();
update public.organizations set created_at = now() - interval '25 hours'
where created_by = 'd2000000-0000-4000-8000-0000000000f1' and name = 'Founders Church';
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000f1', 'd3000000-0000-4000-8000-0000000000f1');
select lives_ok($$ select private.create_organization('Plant 5') $$, 'once the oldest is a day old, another may be made');
select tests.clear_act_as();

-- Who may not create: the Data API's roles, a token without a live session ------------------------------
select tests.act_as('d2000000-0000-4000-8000-0000000000f1', null);
select throws_ok($$ select private.create_organization('Via Data API') $$, '42501', null,
  'authenticated (the Data API) cannot call it');
select tests.act_as_anon();
select throws_ok($$ select private.create_organization('Anonymous') $$, '42501', null, 'anon cannot call it');
select tests.set_claims('config_api', '{"sub": "d2000000-0000-4000-8000-0000000000f1", "role": "authenticated"}');
select throws_ok($$ select private.create_organization('No session') $$, '42501', null,
  'a token that names no session cannot create');
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000f1', 'd3000000-0000-4000-8000-00000000dead');
select throws_ok($$ select private.create_organization('Signed out') $$, '42501', null,
  'a signed-out session (no longer in auth.sessions) cannot create');
select tests.clear_act_as();

-- Changing -------------------------------------------------------------------------------------------------
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000a1', 'd3000000-0000-4000-8000-0000000000a1',
  'd1000000-0000-4000-8000-00000000000a');
select is(private.update_organization('{"name": "Church A Renamed", "time_zone": "Asia/Kolkata", "contact_email": "Hi@A.example"}') - 'created_at',
  '{"id": "d1000000-0000-4000-8000-00000000000a", "name": "Church A Renamed", "time_zone": "Asia/Kolkata", "contact_email": "hi@a.example"}'::jsonb,
  'an admin changes name, time zone and contact address of the active organization');
select is(private.update_organization('{"contact_email": null}') ->> 'contact_email', null, 'null clears the contact address');
select is(private.update_organization('{}') ->> 'name', 'Church A Renamed', 'keys left out stay as they are');
select throws_ok($$ select private.update_organization('{"time_zone": "Nowhere/Land"}') $$, '23514', null,
  'an unknown time zone is refused');
select throws_ok(format('select private.update_organization(%L)', jsonb_build_object('name', 'A' || chr(x'202e'::int) || 'dlrow')),
  '23514', null, 'a right-to-left override in a new name is refused');
select tests.clear_act_as();
select tests.add_member('d2000000-0000-4000-8000-0000000000a1', (select id from public.organizations where name = 'Plant 1' and created_by = 'd2000000-0000-4000-8000-0000000000f1'), 'admin');
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000a1', 'd3000000-0000-4000-8000-0000000000a1',
  'd1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.update_organization('{"name": "plant 1"}') $$, '23505', null,
  'renaming to the name of another of the admin''s organizations is refused');
select tests.clear_act_as();

select pg_temp.api_as('d2000000-0000-4000-8000-0000000000a2', 'd3000000-0000-4000-8000-0000000000a2',
  'd1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.update_organization('{"name": "Staff was here"}') $$, '42501', null,
  'staff cannot change the organization');
select tests.clear_act_as();
select pg_temp.api_as('d2000000-0000-4000-8000-0000000000b1', 'd3000000-0000-4000-8000-0000000000b1',
  'd1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.update_organization('{"name": "B was here"}') $$, '42501', null,
  'an admin of B claiming A in the token cannot change A');
select tests.clear_act_as();
select tests.act_as('d2000000-0000-4000-8000-0000000000a1', 'd1000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.update_organization('{"name": "Data API"}') $$, '42501', null,
  'authenticated (the Data API) cannot call update_organization');
select tests.clear_act_as();
select is((select name from public.organizations where id = 'd1000000-0000-4000-8000-00000000000a'), 'Church A Renamed',
  'none of the refused changes landed');

select * from finish();
rollback;
