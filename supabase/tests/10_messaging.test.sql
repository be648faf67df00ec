-- WhatsApp messaging tables: tenancy (members of the active organization read their own threads only),
-- secrets nobody but the server reads, composite keys that keep references inside one organization,
-- one thread per contact, forward-only receipts and receipts that arrive before their message.
begin;
select plan(30);

-- Two organizations, each with an admin and a staff member, an account, a member and a thread.
select tests.create_tenants('0a000000-0000-4000-8000-000000000000', '0b000000-0000-4000-8000-000000000000',
                           'a0000000-0000-4000-8000-00000000000a', 'a0000000-0000-4000-8000-00000000000b', 'b0000000-0000-4000-8000-00000000000a');
insert into public.messaging_accounts (id, organization_id, phone_number_id, display_phone_number) values
  ('ac000000-0000-4000-8000-00000000000a', '0a000000-0000-4000-8000-000000000000', 'pnid-a', '15550000001'),
  ('ac000000-0000-4000-8000-00000000000b', '0b000000-0000-4000-8000-000000000000', 'pnid-b', '15550000002');
insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token) values
  ('ac000000-0000-4000-8000-00000000000a', '0a000000-0000-4000-8000-000000000000', 'app-secret-a', 'verify-token-a'),
  ('ac000000-0000-4000-8000-00000000000b', '0b000000-0000-4000-8000-000000000000', 'app-secret-b', 'verify-token-b');
insert into public.members (id, organization_id, first_name, primary_phone) values
  ('11000000-0000-4000-8000-00000000000a', '0a000000-0000-4000-8000-000000000000', 'Ann', '+1 (555) 123-4567'),
  ('11000000-0000-4000-8000-00000000000b', '0b000000-0000-4000-8000-000000000000', 'Ben', '1-555-123-4567'),
  ('11000000-0000-4000-8000-00000000000c', '0a000000-0000-4000-8000-000000000000', 'Cat', null);

select is(
  (select private.whatsapp_apply_webhook(
    jsonb_build_array(jsonb_build_object(
      'organization_id', '0a000000-0000-4000-8000-000000000000', 'account_id', 'ac000000-0000-4000-8000-00000000000a',
      'provider_message_id', 'wamid.A1', 'phone', '15551234567', 'name', 'Ann', 'sent_at', '2026-11-22T10:00:00Z',
      'type', 'text', 'text', 'hello A', 'raw', '{}'::jsonb),
    jsonb_build_object(
      'organization_id', '0b000000-0000-4000-8000-000000000000', 'account_id', 'ac000000-0000-4000-8000-00000000000b',
      'provider_message_id', 'wamid.A1', 'phone', '15551234567', 'name', 'Ben', 'sent_at', '2026-11-22T10:00:01Z',
      'type', 'text', 'text', 'hello B', 'raw', '{}'::jsonb)),
    '[]'::jsonb) -> 'messages'),
  '{"stored": 2, "duplicates": 0}'::jsonb,
  'the same provider message id is unique per organization, not globally');
select is(
  (select array_agg(member_id order by organization_id) from public.whatsapp_conversations),
  array['11000000-0000-4000-8000-00000000000a', '11000000-0000-4000-8000-00000000000b']::uuid[],
  'each thread is matched to the member of its own organization only');

-- Tenancy --------------------------------------------------------------------------------------------
select tests.act_as('a0000000-0000-4000-8000-00000000000b', '0a000000-0000-4000-8000-000000000000');
select is((select array_agg(text) from public.whatsapp_messages), array['hello A'], 'staff read their organization''s messages only');
select is((select count(*)::int from public.whatsapp_conversations), 1, 'staff read their organization''s threads only');
select is((select array_agg(phone_number_id) from public.messaging_accounts), array['pnid-a'], 'staff see their organization''s numbers');
select throws_ok('select app_secret from public.messaging_account_secrets', '42501', null, 'staff cannot read secrets');
select throws_ok(
  $$select public.set_messaging_account_secrets('ac000000-0000-4000-8000-00000000000a', 'new-secret-x', 'new-token-x')$$,
  '42501', null, 'staff cannot set secrets');
select throws_ok(
  $$insert into public.messaging_accounts (organization_id, phone_number_id) values ('0a000000-0000-4000-8000-000000000000', 'pnid-new')$$,
  '42501', null, 'staff cannot add accounts');
select throws_ok(
  $$insert into public.whatsapp_message_receipts (organization_id, provider_message_id, status, occurred_at)
    values ('0a000000-0000-4000-8000-000000000000', 'wamid.X', 'read', now())$$,
  '42501', null, 'receipts are written by the server only');
select throws_ok(
  $$select private.whatsapp_apply_webhook('[]'::jsonb, '[]'::jsonb)$$,
  '42501', null, 'users cannot call the server''s apply function');
select lives_ok(
  $$update public.whatsapp_conversations set member_id = null, member_match = 'manual'$$,
  'staff may relink a thread of their organization');
-- Only the server writes who a row concerns: staff planting the id of a member the thread never concerned
-- (Cat) on it, its messages or a donation would hand those rows to that member's erasure.
select throws_ok(
  $$update public.whatsapp_conversations set member_ids = array['11000000-0000-4000-8000-00000000000c']::uuid[]$$,
  '42501', null, 'staff cannot plant a member in an unlinked thread''s links');
select throws_ok(
  $$update public.whatsapp_messages set member_ids = array['11000000-0000-4000-8000-00000000000c']::uuid[]$$,
  '42501', null, 'nor in its messages''');
select throws_ok(
  $$insert into public.donations (organization_id, amount_minor, currency, member_ids)
    values ('0a000000-0000-4000-8000-000000000000', 100, 'GBP', array['11000000-0000-4000-8000-00000000000c']::uuid[])$$,
  '42501', null, 'nor in a donation''s');
-- Judged as the server, who sees both organizations' threads (staff of A could not see B's anyway).
select tests.clear_act_as();
select is((select array_agg(organization_id::text || ' ' || member_match || ' ' || (member_id is null)::text
                            order by organization_id) from public.whatsapp_conversations
           where organization_id in ('0a000000-0000-4000-8000-000000000000', '0b000000-0000-4000-8000-000000000000')),
  array['0a000000-0000-4000-8000-000000000000 manual true', '0b000000-0000-4000-8000-000000000000 matched false'],
  '... and only threads of their organization are touched: B''s thread keeps its member');

-- Admin of A: manages accounts and rotates secrets, still cannot read them back.
select tests.act_as_config_api('a0000000-0000-4000-8000-00000000000a', '0a000000-0000-4000-8000-000000000000');
select lives_ok(
  $$select public.set_messaging_account_secrets('ac000000-0000-4000-8000-00000000000a', 'rotated-secret-a', 'rotated-token-a')$$,
  'an admin rotates the secrets of their account');
select throws_ok(
  $$select public.set_messaging_account_secrets('ac000000-0000-4000-8000-00000000000b', 'stolen-secret', 'stolen-token')$$,
  '42501', null, 'but not of another organization''s account');
select throws_ok('select verify_token from public.messaging_account_secrets', '42501', null, 'admins cannot read secrets either');

-- A claimed organization the user does not belong to gives nothing.
select tests.act_as('a0000000-0000-4000-8000-00000000000a', '0b000000-0000-4000-8000-000000000000');
select is((select count(*)::int from public.whatsapp_messages), 0, 'a claim for a foreign organization reads nothing');
select tests.clear_act_as();

select tests.act_as_anon();
select throws_ok('select * from public.whatsapp_messages', '42501', null, 'anon cannot read messages');
select tests.clear_act_as();

select is(
  (select app_secret || ' ' || verify_token from public.messaging_account_secrets
   where account_id = 'ac000000-0000-4000-8000-00000000000a'),
  'rotated-secret-a rotated-token-a', 'the rotation was stored');
select is(
  (select verify_token_sha256 from public.messaging_account_secrets
   where account_id = 'ac000000-0000-4000-8000-00000000000a'),
  sha256('rotated-token-a'::text::bytea), 'the verify token digest follows the token');

-- Integrity ------------------------------------------------------------------------------------------
select throws_ok(
  $$insert into public.whatsapp_messages (organization_id, conversation_id, provider_message_id, direction, type, status)
    select '0b000000-0000-4000-8000-000000000000', id, 'wamid.cross', 'inbound', 'text', 'received'
    from public.whatsapp_conversations where organization_id = '0a000000-0000-4000-8000-000000000000'$$,
  '23503', null, 'a message cannot point at another organization''s thread');
select throws_ok(
  $$insert into public.whatsapp_conversations (organization_id, contact_phone)
    values ('0a000000-0000-4000-8000-000000000000', '15551234567')$$,
  '23505', null, 'one thread per organization and contact number');
select throws_ok(
  $$update public.whatsapp_messages set organization_id = '0b000000-0000-4000-8000-000000000000'
    where organization_id = '0a000000-0000-4000-8000-000000000000'$$,
  '42501', null, 'a message never moves to another organization');

-- Receipts ---------------------------------------------------------------------------------------------
-- "read" arrives before the outbound message is recorded, then a late "sent".
select is(
  (select private.whatsapp_apply_webhook('[]'::jsonb, jsonb_build_array(
    jsonb_build_object('organization_id', '0a000000-0000-4000-8000-000000000000', 'provider_message_id', 'wamid.OUT',
      'status', 'read', 'occurred_at', '2026-11-22T10:05:00Z', 'recipient_phone', '15551234567')))
   -> 'receipts'),
  '{"applied": 0, "waiting": 1, "duplicates": 0}'::jsonb, 'a receipt for an unknown message waits');
insert into public.whatsapp_messages (organization_id, conversation_id, provider_message_id, direction, type, status)
select organization_id, id, 'wamid.OUT', 'outbound', 'text', 'pending'
from public.whatsapp_conversations where organization_id = '0a000000-0000-4000-8000-000000000000';
select is((select status from public.whatsapp_messages where provider_message_id = 'wamid.OUT'), 'read',
  'recording the message applies the waiting receipt');
select is(
  (select private.whatsapp_apply_webhook('[]'::jsonb, jsonb_build_array(
    jsonb_build_object('organization_id', '0a000000-0000-4000-8000-000000000000', 'provider_message_id', 'wamid.OUT',
      'status', 'sent', 'occurred_at', '2026-11-22T10:04:00Z'),
    jsonb_build_object('organization_id', '0a000000-0000-4000-8000-000000000000', 'provider_message_id', 'wamid.OUT',
      'status', 'read', 'occurred_at', '2026-11-22T10:05:00Z')))
   -> 'receipts')
  || jsonb_build_object('status', (select status from public.whatsapp_messages where provider_message_id = 'wamid.OUT')),
  '{"applied": 1, "waiting": 0, "duplicates": 1, "status": "read"}'::jsonb,
  'a late "sent" is recorded but does not move "read" back; a repeated "read" is a duplicate');

-- Receipts whose message never arrives are dropped after the retention period; history stays.
select private.whatsapp_apply_webhook('[]'::jsonb, jsonb_build_array(
  jsonb_build_object('organization_id', '0a000000-0000-4000-8000-000000000000', 'provider_message_id', 'wamid.NEVER',
    'status', 'delivered', 'occurred_at', '2026-11-22T10:06:00Z')));
update public.whatsapp_message_receipts set received_at = now() - interval '31 days';
select is(private.whatsapp_drop_orphan_receipts(), 1, 'one receipt waited longer than 30 days for a message that never came');
select is(
  (select array_agg(provider_message_id order by provider_message_id, status) from public.whatsapp_message_receipts),
  array['wamid.OUT', 'wamid.OUT'], 'the receipts of a stored message are its history and stay');

select * from finish();
rollback;
