-- Other organizations' work in flight, as a live project's database always holds some: what the pgTAP
-- suite must look past (scripts/test-hosted-pgtap.sh loads it after the demo seed, as postgres). Fixed
-- ids, so a reader of a failing test can tell these rows from the test's own.
--
--   Harvest Fellowship  33333333-3333-4333-8333-333333333333
--     admin@harvest.example (admin), two endpoints subscribed to member.created, 12 members: each
--     member's delivery to each endpoint (24), of which 4 leased by a dispatcher now, 3 leased by one
--     that died, 5 retrying after a failed attempt, 2 delivered and 10 due;
--     mail in the outbox (one due, one leased by a sender), an invitation, an inbound webhook received
--     and not applied yet, and an API key.
--   Also open in the demo seed's First Church: one endpoint and one due delivery.
\set ON_ERROR_STOP on
begin;

insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
                        raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                        confirmation_token, recovery_token, email_change_token_new, email_change)
values ('00000000-0000-0000-0000-000000000000', 'aaaaaaaa-0000-4000-8000-000000000033', 'authenticated',
        'authenticated', 'admin@harvest.example', '', now(), '{"provider":"email","providers":["email"]}',
        '{}', now(), now(), '', '', '', '');
insert into public.organizations (id, name) values ('33333333-3333-4333-8333-333333333333', 'Harvest Fellowship');
insert into public.profiles (user_id, organization_id, role, display_name)
values ('aaaaaaaa-0000-4000-8000-000000000033', '33333333-3333-4333-8333-333333333333', 'admin', 'Hal Harvest');

insert into public.webhook_endpoints (id, organization_id, url, events)
values ('eeeeeeee-0000-4000-8000-000000000031', '33333333-3333-4333-8333-333333333333',
        'https://hooks.harvest.example/one', array['member.created']),
       ('eeeeeeee-0000-4000-8000-000000000032', '33333333-3333-4333-8333-333333333333',
        'https://hooks.harvest.example/two', array['member.created']),
       ('eeeeeeee-0000-4000-8000-000000000011', '11111111-1111-4111-8111-111111111111',
        'https://hooks.firstchurch.example/crm', array['member.created']);
-- Members raise member.created through the outbox triggers: one delivery per subscribed endpoint.
insert into public.members (organization_id, first_name, last_name)
select '33333333-3333-4333-8333-333333333333', 'Harvest', 'member ' || g from generate_series(1, 12) g;
insert into public.members (organization_id, first_name, last_name)
values ('11111111-1111-4111-8111-111111111111', 'Open', 'Delivery');
-- Every delivery due now (the triggers may schedule them a moment ahead).
update public.webhook_deliveries set next_attempt_at = now() - interval '1 minute'
 where organization_id in ('33333333-3333-4333-8333-333333333333', '11111111-1111-4111-8111-111111111111');

-- A dispatcher's work: 14 claimed (Harvest's only: First Church's stays due), 2 delivered and 5 failed
-- (retrying), 4 still in flight, 3 left by a dispatcher that died (their leases run out in the past).
create temporary table claimed on commit drop as
select c.delivery_id, c.endpoint_id, c.lease_token, row_number() over (order by c.delivery_id) as n
  from private.webhook_claim(14, 10000000, 100, 100, 300) c
 where c.endpoint_id in ('eeeeeeee-0000-4000-8000-000000000031', 'eeeeeeee-0000-4000-8000-000000000032');
select private.webhook_record_results(coalesce(jsonb_agg(
         jsonb_build_object('delivery_id', delivery_id, 'endpoint_id', endpoint_id, 'lease_token', lease_token,
                            'attempted_at', now(), 'duration_ms', 12)
         || case when n <= 2 then jsonb_build_object('outcome', 'delivered', 'response_status', 200)
                 else jsonb_build_object('outcome', 'failed', 'response_status', 503, 'error', 'HTTP 503') end),
         '[]'))
  from claimed where n <= 7;
update private.webhook_leases set leased_until = now() - interval '5 minutes'
 where delivery_id in (select delivery_id from claimed where n > 11);
-- First Church's delivery may have been claimed along: put it back, due.
delete from private.webhook_leases l using public.webhook_deliveries d
 where d.id = l.delivery_id and d.organization_id = '11111111-1111-4111-8111-111111111111';

-- Mail: one due, one leased by a sender now.
insert into private.mail_outbox (organization_id, kind, recipient, data, next_attempt_at)
values ('33333333-3333-4333-8333-333333333333', 'endpoint_failing', 'admin@harvest.example',
        '{"endpoint_id":"eeeeeeee-0000-4000-8000-000000000031"}', now() - interval '1 minute'),
       ('33333333-3333-4333-8333-333333333333', 'endpoint_failing', 'admin@harvest.example',
        '{"endpoint_id":"eeeeeeee-0000-4000-8000-000000000032"}', now() - interval '1 minute');
update private.mail_outbox set lease_token = gen_random_uuid(), leased_until = now() + interval '1 hour',
                               attempts = 1
 where data ->> 'endpoint_id' = 'eeeeeeee-0000-4000-8000-000000000032';

-- An invitation not accepted yet, an inbound checkout webhook stored and not applied, an API key.
insert into public.organization_invitations (organization_id, email, role, token_hash, invited_by)
values ('33333333-3333-4333-8333-333333333333', 'new-staff@harvest.example', 'staff',
        encode(extensions.digest('harvest-invitation', 'sha256'), 'hex'), 'aaaaaaaa-0000-4000-8000-000000000033');
insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
values ('33333333-3333-4333-8333-333333333333', 'Harvest CRM', 'ck_harv',
        encode(extensions.digest('harvest-api-key', 'sha256'), 'hex'), 'aaaaaaaa-0000-4000-8000-000000000033');
insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, body_bytes,
                                        signature_valid, status)
values ('33333333-3333-4333-8333-333333333333', 'checkout', 'payment.captured', 'harvest-open-1',
        '{"event":"payment.captured"}', 28, true, 'received');

commit;
