-- Payment webhook schema: the subscription states, refund arithmetic and the log's tenancy, checked in
-- the database itself (the HTTP behaviour is in tests/*_webhook_test.ts).
begin;
select plan(23);

-- Two organizations, each with an admin and a staff member.
select tests.create_tenants('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000b1',
                           '00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-00000000000c');
insert into public.organization_settings (organization_id, webhook_secret) values
  ('00000000-0000-4000-8000-0000000000a1', 'secret-a'),
  ('00000000-0000-4000-8000-0000000000b1', 'secret-b');
insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid, status)
values ('00000000-0000-4000-8000-0000000000a1', 'checkout', 'k1', '{"event":"created"}', true, 'processed');
-- A WhatsApp row of A: in the one log, but not part of the payment log's contract view.
insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid, status)
values ('00000000-0000-4000-8000-0000000000a1', 'whatsapp', 'wamid.1', '{"entry":[]}', true, 'processed');

select throws_ok(
  $$insert into public.recurring_donations (organization_id, gateway_subscription_id, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'sub_x', 'exploded')$$,
  '23514', null, 'recurring_donations.status only takes the designed states');

select throws_ok(
  $$insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'checkout', 'k1', '{}', true, 'received')$$,
  '23505', null, 'one verified delivery per organization, provider and key');
select lives_ok(
  $$insert into public.inbound_webhook_log (organization_id, provider, signature_valid, status, error)
    values ('00000000-0000-4000-8000-0000000000a1', 'checkout', false, 'unverified', 'signature mismatch')$$,
  'an unverified delivery is counted without a key');
select throws_ok(
  $$insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'checkout', 'k1', '{"event":"forged"}', false, 'unverified')$$,
  '23514', null, 'an unverified row keeps nothing its sender chose (body, event, key, headers)');
insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, body_sha256, signature_valid, status)
values ('00000000-0000-4000-8000-0000000000a1', 'checkout', 'k2', '{}', '\x01', true, 'processed');
select throws_ok(
  $$insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, body_sha256, signature_valid, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'checkout', 'k3', '{}', '\x01', true, 'received')$$,
  '23505', null, 'the same verified bytes under another key are the same delivery');
select is(
  (select count(*)::int from (
    select private.log_refused_webhook('00000000-0000-4000-8000-0000000000a1', 'payments', 'unverified', 'signature missing', 100)
    from generate_series(1, 50)) x),
  50, 'fifty refused deliveries counted');
select is(
  (select array[count(*), sum(deliveries), sum(body_bytes)]::int[] from public.inbound_webhook_log
   where provider = 'payments' and error = 'signature missing'),
  array[1, 50, 5000], 'into one row holding their count and total size');
select lives_ok(
  $$insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid, status)
    values ('00000000-0000-4000-8000-0000000000a1', 'payments', 'k1', '{}', true, 'received')$$,
  'keys are per provider');

-- Refund arithmetic: processed refunds add up, a pending one does not count, overshooting fails.
insert into public.donations (id, organization_id, amount_minor, currency, gateway_payment_id)
values ('00000000-0000-4000-8000-0000000000d1', '00000000-0000-4000-8000-0000000000a1', 1000, 'INR', 'pay_1');
select private.apply_refund_event('00000000-0000-4000-8000-0000000000a1',
  '{"refund":{"id":"r1","payment_id":"pay_1","amount_minor":300,"currency":"INR","status":"processed","occurred_at":"2026-11-22T10:00:00Z"}}');
select private.apply_refund_event('00000000-0000-4000-8000-0000000000a1',
  '{"refund":{"id":"r2","payment_id":"pay_1","amount_minor":200,"currency":"INR","status":"pending","occurred_at":"2026-11-22T10:00:00Z"}}');
select private.apply_refund_event('00000000-0000-4000-8000-0000000000a1',
  '{"refund":{"id":"r1","payment_id":"pay_1","amount_minor":300,"currency":"INR","status":"processed","occurred_at":"2026-11-22T10:00:00Z"}}');
select is(
  (select (refunded_minor, refund_status)::text from public.donations where id = '00000000-0000-4000-8000-0000000000d1'),
  '(300,partial)', 'a repeated refund counts once and a pending one not at all');
select private.apply_refund_event('00000000-0000-4000-8000-0000000000a1',
  '{"refund":{"id":"r2","payment_id":"pay_1","amount_minor":700,"currency":"INR","status":"processed","occurred_at":"2026-11-22T10:01:00Z"}}');
select is(
  (select (refunded_minor, refund_status)::text from public.donations where id = '00000000-0000-4000-8000-0000000000d1'),
  '(1000,refunded)', 'pending -> processed completes the refund');
select throws_ok(
  $$select private.apply_refund_event('00000000-0000-4000-8000-0000000000a1',
    '{"refund":{"id":"r3","payment_id":"pay_1","amount_minor":1,"currency":"INR","status":"processed","occurred_at":"2026-11-22T10:02:00Z"}}')$$,
  '22023', null, 'refunds beyond the donation are refused');

-- Tenancy of the log: organization admins only; staff, other organizations and anon see nothing.
select tests.act_as_config_api('00000000-0000-4000-8000-00000000000a', '00000000-0000-4000-8000-0000000000a1');
select is((select count(*)::int from public.inbound_webhook_log), 6, 'the admin of A sees A''s log');
-- donation_payment_webhook_log, the contract name: the payment part of the same log, same tenancy.
select is((select count(*)::int from public.donation_payment_webhook_log), 5,
  'the admin of A reads A''s payment log under its contract name, without the WhatsApp row');
select is(
  (select payload::text from public.donation_payment_webhook_log where idempotency_key = 'k1' and provider = 'checkout'),
  '{"event": "created"}', 'the contract view carries the full payload, the key and the status');
select throws_ok($$delete from public.donation_payment_webhook_log$$, '42501', null,
  'nobody but the server writes the log through the view either');
select throws_ok($$delete from public.inbound_webhook_log$$, '42501', null, 'nobody but the server writes the log');
select throws_ok(
  $$select * from private.inbound_webhook_targets('checkout', '00000000-0000-4000-8000-0000000000a1', null, null)$$,
  '42501', null, 'users cannot call the secret lookup');
select tests.act_as_config_api('00000000-0000-4000-8000-00000000000b', '00000000-0000-4000-8000-0000000000a1');
select is((select count(*)::int from public.inbound_webhook_log), 0, 'staff of A see nothing');
select is((select count(*)::int from public.donation_payment_webhook_log), 0, 'staff of A see nothing through the view');
select is((select count(*)::int from public.donation_refunds), 2, 'staff of A see A''s refunds');
select tests.act_as_config_api('00000000-0000-4000-8000-00000000000c', '00000000-0000-4000-8000-0000000000a1');
select is((select count(*)::int from public.inbound_webhook_log), 0, 'the admin of B claiming A sees nothing');
select is((select count(*)::int from public.donation_payment_webhook_log), 0,
  'the admin of B claiming A sees nothing through the view');
select tests.act_as_anon();
select throws_ok($$select count(*) from public.inbound_webhook_log$$, '42501', null, 'anon has no access');
select tests.clear_act_as();

select * from finish();
rollback;
