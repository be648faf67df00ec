-- Inbound connections (20261128140000_inbound_connections.sql): the configuration API's functions that
-- set provider secrets and register WhatsApp numbers. Only config_api may call them (never the Data
-- API's roles); each acts for a live session of an admin of the active organization only; no secret or
-- verify token is ever returned; a number another organization holds registers exactly as a free one.
begin;
select plan(37);

select tests.create_tenants('c0a00000-0000-4000-8000-000000000000', 'c0b00000-0000-4000-8000-000000000000',
                           'c1a00000-0000-4000-8000-00000000000a', 'c1a00000-0000-4000-8000-00000000000b',
                           'c1b00000-0000-4000-8000-00000000000a');
select tests.create_user('removed-c@example.org', 'c1a00000-0000-4000-8000-00000000000c');
-- A live session for each person (the configuration API refuses a token whose session has ended).
insert into auth.sessions (id, user_id, created_at, updated_at, aal)
select ('c5' || substr(u::text, 3))::uuid, u, now(), now(), 'aal1'
from unnest(array['c1a00000-0000-4000-8000-00000000000a', 'c1a00000-0000-4000-8000-00000000000b',
                  'c1b00000-0000-4000-8000-00000000000a', 'c1a00000-0000-4000-8000-00000000000c']::uuid[]) u;

-- A request of the configuration API: role config_api, the caller's claims with their session.
create function pg_temp.as_api(user_id uuid, org uuid, session_ended boolean default false) returns void
language sql as $$
  select tests.set_claims('config_api', jsonb_build_object(
    'sub', user_id, 'role', 'authenticated', 'aud', 'authenticated', 'organization_id', org,
    'session_id', case when session_ended then gen_random_uuid() else ('c5' || substr(user_id::text, 3))::uuid end)) $$;
grant execute on function pg_temp.as_api(uuid, uuid, boolean) to public;

-- Who may call them at all ----------------------------------------------------------------------------
select ok(not has_function_privilege(r, f, 'execute'), format('%s cannot call %s', r, f))
from unnest(array['anon', 'authenticated']) r,
     unnest(array['private.inbound_secrets()', 'private.set_inbound_secret(text,text)', 'private.whatsapp_numbers()',
                  'private.register_whatsapp_number(text,text,text,text)',
                  'private.update_whatsapp_number(uuid,text,boolean,text)',
                  'private.set_whatsapp_verify_token(uuid,text)', 'private.delete_whatsapp_number(uuid)']) f;

-- The admin of A ------------------------------------------------------------------------------------------
select pg_temp.as_api('c1a00000-0000-4000-8000-00000000000a', 'c0a00000-0000-4000-8000-000000000000');
select is((select row(secret_set, secret_last4)::text from private.set_inbound_secret('checkout', 'a-checkout-secret-0001')),
  '(t,0001)', 'the admin sets the checkout secret and sees its last four characters');
select throws_ok($$ select private.set_inbound_secret('checkout', 'short') $$, '22023', null,
  'a secret under 16 characters is refused');
select throws_ok($$ select private.set_inbound_secret('whatsapp', 'a-checkout-secret-0001') $$, '22023', null,
  'an unknown provider is refused');
select lives_ok($$ select private.register_whatsapp_number('shared-pnid-c', '+1 555 0100', 'app-secret-of-a-0001', 'verify-token-of-a-01') $$,
  'the admin registers a number');
select throws_ok($$ select private.register_whatsapp_number('shared-pnid-c', null, 'app-secret-of-a-0001', 'verify-token-of-a-02') $$,
  '23505', null, 'the same number twice in one organization is refused');
select is((select array_agg(phone_number_id || ' ' || app_secret_last4) from private.whatsapp_numbers()),
  array['shared-pnid-c 0001'], 'the admin lists its numbers, with the app secret''s last four characters only');
select throws_ok($$ select app_secret from public.messaging_account_secrets $$, '42501', null,
  'config_api cannot read the secrets table');

-- Signed out, staff, removed, API key: nothing -------------------------------------------------------------
select pg_temp.as_api('c1a00000-0000-4000-8000-00000000000a', 'c0a00000-0000-4000-8000-000000000000', true);
select throws_ok($$ select * from private.whatsapp_numbers() $$, '42501', null, 'a signed-out session lists nothing');
select throws_ok($$ select private.set_inbound_secret('checkout', 'signed-out-secret-0001') $$, '42501', null,
  'a signed-out session sets no secret');
select pg_temp.as_api('c1a00000-0000-4000-8000-00000000000b', 'c0a00000-0000-4000-8000-000000000000');
select throws_ok($$ select * from private.inbound_secrets() $$, '42501', null, 'staff see no secret state');
select throws_ok($$ select private.register_whatsapp_number('pnid-staff', null, 'app-secret-staff-001', 'verify-token-staff-1') $$,
  '42501', null, 'staff register no number');
select pg_temp.as_api('c1a00000-0000-4000-8000-00000000000c', 'c0a00000-0000-4000-8000-000000000000');
select throws_ok($$ select * from private.whatsapp_numbers() $$, '42501', null,
  'a user who is not (or no longer) a member lists nothing');
select tests.set_claims('config_api', jsonb_build_object('role', 'authenticated',
  'api_key_id', gen_random_uuid(), 'organization_id', 'c0a00000-0000-4000-8000-000000000000'));
select throws_ok($$ select * from private.whatsapp_numbers() $$, '42501', null, 'an API key lists nothing');

-- The admin of B: the same number, answered as any free one; A's number out of reach ----------------------
select pg_temp.as_api('c1b00000-0000-4000-8000-00000000000a', 'c0b00000-0000-4000-8000-000000000000');
select lives_ok($$ select private.register_whatsapp_number('shared-pnid-c', null, 'app-secret-of-b-0001', 'verify-token-of-b-01') $$,
  'another organization registers the number A holds, as it would a free one');
select is((select array_agg(row(phone_number_id, verified_at, handshake_at)::text) from private.whatsapp_numbers()),
  array['(shared-pnid-c,,)'], 'B sees its own registration only, pending');
select throws_ok(format($$ select private.update_whatsapp_number(%L, null, false, 'b-takes-over-secret-01') $$,
    (select id from public.messaging_accounts where organization_id = 'c0a00000-0000-4000-8000-000000000000')),
  'P0002', null, 'B cannot change A''s number');
select throws_ok(format($$ select private.set_whatsapp_verify_token(%L, 'b-takes-over-token-01') $$,
    (select id from public.messaging_accounts where organization_id = 'c0a00000-0000-4000-8000-000000000000')),
  'P0002', null, 'B cannot replace A''s verify token');
select throws_ok(format($$ select private.delete_whatsapp_number(%L) $$,
    (select id from public.messaging_accounts where organization_id = 'c0a00000-0000-4000-8000-000000000000')),
  'P0002', null, 'B cannot remove A''s number');
select is((select secret_set from private.inbound_secrets() where provider = 'checkout'), false,
  'B does not see A''s checkout secret as its own');
select tests.clear_act_as();

-- Judged as the server --------------------------------------------------------------------------------------
select is((select count(*)::int from public.messaging_accounts where phone_number_id = 'shared-pnid-c'), 2,
  'both registrations exist');
select is((select app_secret from public.messaging_account_secrets s join public.messaging_accounts a on a.id = s.account_id
           where a.organization_id = 'c0a00000-0000-4000-8000-000000000000'), 'app-secret-of-a-0001',
  'A''s app secret is untouched');
select is((select webhook_secret from public.organization_settings where organization_id = 'c0a00000-0000-4000-8000-000000000000'),
  'a-checkout-secret-0001', 'A''s checkout secret is what A set');
select ok((select webhook_secret_set_at is not null from public.organization_settings
           where organization_id = 'c0a00000-0000-4000-8000-000000000000'), 'setting a secret stamps when');
select * from finish();
rollback;
