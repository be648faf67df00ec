-- The custom access-token hook, called the way Supabase Auth calls it (as supabase_auth_admin, with
-- the documented event shape), and the active-organization switch.
begin;
select plan(27);

-- People and organizations -------------------------------------------------------------------------
select tests.create_user('two-orgs@example.org', '00000000-0000-4000-8000-00000000000a');
select tests.create_user('no-profile@example.org', '00000000-0000-4000-8000-00000000000b');
select tests.create_user('platform@example.org', '00000000-0000-4000-8000-00000000000c');
select tests.create_organization('First Church', '10000000-0000-4000-8000-000000000001');
select tests.create_organization('Second Church', '10000000-0000-4000-8000-000000000002');
select tests.create_organization('Third Church', '10000000-0000-4000-8000-000000000003');
insert into public.profiles (user_id, organization_id, role, created_at) values
  ('00000000-0000-4000-8000-00000000000a', '10000000-0000-4000-8000-000000000002', 'staff', now() - interval '2 days'),
  ('00000000-0000-4000-8000-00000000000a', '10000000-0000-4000-8000-000000000001', 'admin', now() - interval '1 day'),
  ('00000000-0000-4000-8000-00000000000c', '10000000-0000-4000-8000-000000000003', 'staff', now());
insert into public.platform_user_flags (user_id, is_platform_admin, is_superadmin)
  values ('00000000-0000-4000-8000-00000000000c', true, true);

-- Supabase's documented hook input for a user: claims as GoTrue builds them.
create function pg_temp.event(uid text, method text, extra jsonb default '{}') returns jsonb language sql as $$
  select jsonb_build_object(
    'user_id', uid,
    'authentication_method', method,
    'claims', jsonb_build_object(
      'iss', 'http://127.0.0.1:54321/auth/v1', 'aud', 'authenticated',
      'exp', 1795000000, 'iat', 1794996400, 'sub', uid, 'email', 'x@example.org', 'phone', '',
      'app_metadata', '{"provider":"email","providers":["email"]}'::jsonb, 'user_metadata', '{}'::jsonb,
      'role', 'authenticated', 'aal', 'aal1',
      'amr', jsonb_build_array(jsonb_build_object('method', method, 'timestamp', 1794996400)),
      'session_id', '5b1a5b1a-0000-4000-8000-000000000001', 'is_anonymous', false) || extra)
$$;
grant execute on function pg_temp.event(text, text, jsonb) to supabase_auth_admin;
-- pgTAP lives in `extensions`; let the hook's role call it for the duration of this test.
grant usage on schema extensions to supabase_auth_admin;

-- Everything below calls the hook as Supabase Auth does.
select tests.can_become('supabase_auth_admin') as hook_role \gset
\if :hook_role
set local role supabase_auth_admin;

select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password'))
    -> 'claims' ->> 'organization_id',
  '10000000-0000-4000-8000-000000000002',
  'password sign-in without a remembered choice: the oldest membership');

select ok(
  (public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password')) -> 'claims')
    @> (pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password') -> 'claims'),
  'every claim GoTrue put in is returned unchanged');

select is(
  (select array_agg(k order by k) from jsonb_object_keys(
    public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password')) -> 'claims') k
   where k in ('iss','aud','exp','iat','sub','role','aal','session_id','email','phone','is_anonymous')),
  array['aal','aud','email','exp','iat','is_anonymous','iss','phone','role','session_id','sub'],
  'all required claims are present');

select is(
  (select array_agg(k order by k) from jsonb_object_keys(
    public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password'))) k),
  array['claims'],
  'the hook returns {claims} and nothing else');

select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'password')) -> 'claims'
    -> 'is_platform_admin',
  'false'::jsonb, 'is_platform_admin is false for an ordinary user');

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
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'token_refresh'))
    -> 'claims' ->> 'organization_id',
  '10000000-0000-4000-8000-000000000001',
  'token refresh after switching: the remembered organization');

-- A forged organization_id in the incoming claims never survives.
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'token_refresh',
    '{"organization_id":"10000000-0000-4000-8000-000000000003"}')) -> 'claims' ->> 'organization_id',
  '10000000-0000-4000-8000-000000000001',
  'an organization_id already in the claims is replaced by the real one');
select tests.clear_act_as();

-- Removed from the remembered organization: back to the oldest remaining membership.
delete from public.profiles
  where user_id = '00000000-0000-4000-8000-00000000000a' and organization_id = '10000000-0000-4000-8000-000000000001';
set local role supabase_auth_admin;
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'token_refresh'))
    -> 'claims' ->> 'organization_id',
  '10000000-0000-4000-8000-000000000002',
  'removed from the remembered organization: falls back to a current membership');
select tests.clear_act_as();

delete from public.profiles where user_id = '00000000-0000-4000-8000-00000000000a';
set local role supabase_auth_admin;
select ok(
  not (public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000a', 'token_refresh',
    '{"organization_id":"10000000-0000-4000-8000-000000000002"}')) -> 'claims' ? 'organization_id'),
  'removed from every organization: no organization_id, even if the old token had one');

select ok(
  not (public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000b', 'password')) -> 'claims'
    ? 'organization_id'),
  'no profile: no organization_id claim');
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000b', 'password')) -> 'claims'
    ->> 'sub',
  '00000000-0000-4000-8000-00000000000b', 'no profile: sign-in still succeeds with the claims intact');

select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000c', 'password')) -> 'claims'
    -> 'is_platform_admin', 'true'::jsonb, 'platform admin flag from platform_user_flags');
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000c', 'password')) -> 'claims'
    -> 'is_superadmin', 'true'::jsonb, 'superadmin flag from platform_user_flags');
select is(
  public.custom_access_token_hook(pg_temp.event('00000000-0000-4000-8000-00000000000b', 'password',
    '{"user_metadata":{"is_superadmin":true},"is_superadmin":true}')) -> 'claims' -> 'is_superadmin',
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
