-- The custom access-token hook, called the way Supabase Auth calls it (as supabase_auth_admin, with
-- the documented event shape), and the active-organization switch.
begin;
select plan(27);

-- People and organizations -------------------------------------------------------------------------
select tests.add_member(tests.create_user('two-orgs@example.org', '00000000-0000-4000-8000-00000000000a'),
  tests.create_organization('Second Church', '10000000-0000-4000-8000-000000000002'), 'staff', now() - interval '2 days');
select tests.add_member('00000000-0000-4000-8000-00000000000a',
  tests.create_organization('First Church', '10000000-0000-4000-8000-000000000001'), 'admin', now() - interval '1 day');
select tests.add_member(tests.create_user('platform@example.org', '00000000-0000-4000-8000-00000000000c'),
  tests.create_organization('Third Church', '10000000-0000-4000-8000-000000000003'));
select tests.create_user('no-profile@example.org', '00000000-0000-4000-8000-00000000000b');
insert into public.platform_user_flags (user_id, is_platform_admin, is_superadmin)
  values ('00000000-0000-4000-8000-00000000000c', true, true);

-- The hook is called with Supabase's documented input for a user (tests.hook_event, tests.token_claims).
-- pgTAP lives in `extensions`; let the hook's role call it for the duration of this test.
grant usage on schema extensions to supabase_auth_admin;

-- Everything below calls the hook as Supabase Auth does.
select tests.can_become('supabase_auth_admin') as hook_role \gset
\if :hook_role
set local role supabase_auth_admin;

select is(tests.token_claims('00000000-0000-4000-8000-00000000000a') ->> 'organization_id', '10000000-0000-4000-8000-000000000002',
  'password sign-in without a remembered choice: the oldest membership');

select ok(tests.token_claims('00000000-0000-4000-8000-00000000000a') @> (tests.hook_event('00000000-0000-4000-8000-00000000000a') -> 'claims'),
  'every claim GoTrue put in is returned unchanged');

select is(
  (select array_agg(k order by k) from jsonb_object_keys(tests.token_claims('00000000-0000-4000-8000-00000000000a')) k
   where k in ('iss','aud','exp','iat','sub','role','aal','session_id','email','phone','is_anonymous')),
  array['aal','aud','email','exp','iat','is_anonymous','iss','phone','role','session_id','sub'],
  'all required claims are present');

select is((select array_agg(k order by k) from jsonb_object_keys(public.custom_access_token_hook(tests.hook_event('00000000-0000-4000-8000-00000000000a'))) k),
  array['claims'], 'the hook returns {claims} and nothing else');

select is(tests.token_claims('00000000-0000-4000-8000-00000000000a') -> 'is_platform_admin', 'false'::jsonb,
  'is_platform_admin is false for an ordinary user');

\else
select skip('needs SET ROLE supabase_auth_admin, which hosted postgres may not do: runs on the local test cluster', 5);
\endif

-- The user picks Second -> First.
select tests.act_as('00000000-0000-4000-8000-00000000000a', '10000000-0000-4000-8000-000000000002');
select is(public.set_active_organization('10000000-0000-4000-8000-000000000001'),
  '10000000-0000-4000-8000-000000000001'::uuid, 'a member may make an organization active');
select throws_ok(
  $$ select public.set_active_organization('10000000-0000-4000-8000-000000000003') $$,
  '42501', 'not a member of organization 10000000-0000-4000-8000-000000000003',
  'a non-member cannot make an organization active');
select throws_ok($$ select public.set_active_organization(null) $$, '42501', null, 'null is refused');
select throws_ok(
  $$ insert into public.user_active_organization values ('00000000-0000-4000-8000-00000000000a', '10000000-0000-4000-8000-000000000003') $$,
  '42501', null, 'the remembered choice cannot be written directly');
select throws_ok(
  $$ insert into public.platform_user_flags (user_id, is_platform_admin) values ('00000000-0000-4000-8000-00000000000a', true) $$,
  '42501', null, 'users cannot grant themselves platform flags');
select throws_ok(
  $$ update public.platform_user_flags set is_superadmin = true $$,
  '42501', null, 'users cannot change platform flags');
select throws_ok(
  $$ select public.custom_access_token_hook('{}'::jsonb) $$,
  '42501', null, 'authenticated cannot execute the hook');
select tests.clear_act_as();

\if :hook_role
set local role supabase_auth_admin;
select is(tests.token_claims('00000000-0000-4000-8000-00000000000a', 'token_refresh') ->> 'organization_id', '10000000-0000-4000-8000-000000000001',
  'token refresh after switching: the remembered organization');

-- A forged organization_id in the incoming claims never survives.
select is(tests.token_claims('00000000-0000-4000-8000-00000000000a', 'token_refresh', '{"organization_id":"10000000-0000-4000-8000-000000000003"}')
            ->> 'organization_id',
  '10000000-0000-4000-8000-000000000001', 'an organization_id already in the claims is replaced by the real one');
select tests.clear_act_as();

-- Removed from the remembered organization: back to the oldest remaining membership.
delete from public.profiles
  where user_id = '00000000-0000-4000-8000-00000000000a' and organization_id = '10000000-0000-4000-8000-000000000001';
set local role supabase_auth_admin;
select is(tests.token_claims('00000000-0000-4000-8000-00000000000a', 'token_refresh') ->> 'organization_id', '10000000-0000-4000-8000-000000000002',
  'removed from the remembered organization: falls back to a current membership');
select tests.clear_act_as();

delete from public.profiles where user_id = '00000000-0000-4000-8000-00000000000a';
set local role supabase_auth_admin;
select ok(not tests.token_claims('00000000-0000-4000-8000-00000000000a', 'token_refresh', '{"organization_id":"10000000-0000-4000-8000-000000000002"}')
             ? 'organization_id',
  'removed from every organization: no organization_id, even if the old token had one');

select ok(not tests.token_claims('00000000-0000-4000-8000-00000000000b') ? 'organization_id', 'no profile: no organization_id claim');
select is(tests.token_claims('00000000-0000-4000-8000-00000000000b') ->> 'sub', '00000000-0000-4000-8000-00000000000b',
  'no profile: sign-in still succeeds with the claims intact');

select is(tests.token_claims('00000000-0000-4000-8000-00000000000c') -> 'is_platform_admin', 'true'::jsonb, 'platform admin flag from platform_user_flags');
select is(tests.token_claims('00000000-0000-4000-8000-00000000000c') -> 'is_superadmin', 'true'::jsonb, 'superadmin flag from platform_user_flags');
select is(tests.token_claims('00000000-0000-4000-8000-00000000000b', 'password', '{"user_metadata":{"is_superadmin":true},"is_superadmin":true}')
            -> 'is_superadmin',
  'false'::jsonb, 'a superadmin flag smuggled into the claims or user_metadata is ignored');

-- Missing or broken data never fails a sign-in.
select is(public.custom_access_token_hook('{}'::jsonb), '{"claims":{"is_superadmin":false,"is_platform_admin":false}}'::jsonb,
  'an empty event still returns claims');
select is(
  public.custom_access_token_hook('{"user_id":"not-a-uuid","claims":{"sub":"x"}}'::jsonb) -> 'claims' ->> 'sub', 'x',
  'a malformed user_id does not raise');
select is(
  public.custom_access_token_hook('{"user_id":"00000000-0000-4000-8000-0000000000ff","claims":null}'::jsonb) -> 'claims'
    -> 'is_platform_admin', 'false'::jsonb,
  'an unknown user with null claims does not raise');
select tests.clear_act_as();

\else
select skip('needs SET ROLE supabase_auth_admin, which hosted postgres may not do: runs on the local test cluster', 12);
\endif

-- Grants and definition.
select ok(not has_function_privilege('anon', 'public.custom_access_token_hook(jsonb)', 'execute'),
  'anon cannot execute the hook');
select ok(not has_function_privilege('authenticated', 'public.custom_access_token_hook(jsonb)', 'execute')
  and has_function_privilege('supabase_auth_admin', 'public.custom_access_token_hook(jsonb)', 'execute'),
  'only supabase_auth_admin executes the hook');
select is((select provolatile from pg_proc where oid = 'public.custom_access_token_hook(jsonb)'::regprocedure), 's',
  'the hook is stable');

select * from finish();
rollback;
