-- Demo data for a first local run (the Supabase CLI convention: `supabase db reset` applies it, and so
-- does `npm run dev` on an empty database). Local development only: every secret and password below is
-- public. Fixed ids so the guides' examples can name them (docs/getting-started.md#demo-data).
--
--   First Church  11111111-1111-4111-8111-111111111111   Grace Chapel  22222222-2222-4222-8222-222222222222
--   admin@firstchurch.example  admin of both        staff@firstchurch.example  staff of First Church
--   password of both: demo-password

-- Users, as Supabase Auth stores them: bcrypt password, confirmed e-mail, empty token strings.
insert into auth.users (
  instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, last_sign_in_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
  confirmation_token, recovery_token, email_change_token_new, email_change
)
values
  ('00000000-0000-0000-0000-000000000000', 'aaaaaaaa-0000-4000-8000-000000000001', 'authenticated',
   'authenticated', 'admin@firstchurch.example', extensions.crypt('demo-password', extensions.gen_salt('bf', 10)),
   now(), null, '{"provider":"email","providers":["email"]}', '{"full_name":"Ada Admin"}', now(), now(),
   '', '', '', ''),
  ('00000000-0000-0000-0000-000000000000', 'aaaaaaaa-0000-4000-8000-000000000002', 'authenticated',
   'authenticated', 'staff@firstchurch.example', extensions.crypt('demo-password', extensions.gen_salt('bf', 10)),
   now(), null, '{"provider":"email","providers":["email"]}', '{"full_name":"Sam Staff"}', now(), now(),
   '', '', '', '');

insert into public.organizations (id, name, created_at)
values
  ('11111111-1111-4111-8111-111111111111', 'First Church', now() - interval '2 days'),
  ('22222222-2222-4222-8222-222222222222', 'Grace Chapel', now() - interval '1 day');

-- The admin's oldest membership is First Church, so that is where a first sign-in starts.
insert into public.profiles (user_id, organization_id, role, display_name, created_at)
values
  ('aaaaaaaa-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'admin', 'Ada Admin',
   now() - interval '2 days'),
  ('aaaaaaaa-0000-4000-8000-000000000001', '22222222-2222-4222-8222-222222222222', 'admin', 'Ada Admin',
   now() - interval '1 day'),
  ('aaaaaaaa-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111', 'staff', 'Sam Staff',
   now() - interval '1 day');

-- Inbound checkout and card-payment signatures are keyed with these (docs/inbound-webhooks.md#requests).
insert into public.organization_settings (organization_id, webhook_secret)
values
  ('11111111-1111-4111-8111-111111111111', 'demo-checkout-secret-first'),
  ('22222222-2222-4222-8222-222222222222', 'demo-checkout-secret-grace');

insert into public.members (id, organization_id, first_name, last_name, email, primary_phone, status, source)
values
  ('bbbbbbbb-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'Sheena', 'Nelson',
   'sheena@example.org', '+1 (650) 555-1234', 'active', 'manual'),
  ('bbbbbbbb-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111', 'Daniel', 'Okafor',
   'daniel@example.org', '+44 20 7946 0958', 'active', 'manual'),
  ('bbbbbbbb-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111', 'Maria', 'Santos',
   null, '+55 11 91234-5678', 'visitor', 'visitor_form'),
  ('bbbbbbbb-0000-4000-8000-000000000004', '22222222-2222-4222-8222-222222222222', 'Grace', 'Kim',
   'grace.kim@example.org', '+82 10-1234-5678', 'active', 'manual'),
  ('bbbbbbbb-0000-4000-8000-000000000005', '22222222-2222-4222-8222-222222222222', 'Peter', 'Mensah',
   null, '+233 24 123 4567', 'active', 'import');

-- A monthly subscription (the checkout example of docs/inbound-webhooks.md#replay charges it) and its
-- donations.
insert into public.recurring_donations (id, organization_id, member_id, gateway_subscription_id, status,
  amount_minor, currency, interval)
values
  ('cccccccc-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
   'bbbbbbbb-0000-4000-8000-000000000001', 'sub_00000000000001', 'active', 50000, 'INR', 'monthly');

insert into public.donations (organization_id, member_id, recurring_donation_id, amount_minor, currency, source,
  gateway_payment_id, donated_at)
values
  ('11111111-1111-4111-8111-111111111111', 'bbbbbbbb-0000-4000-8000-000000000001',
   'cccccccc-0000-4000-8000-000000000001', 50000, 'INR', 'recurring', 'pay_demo_0001', now() - interval '30 days'),
  ('11111111-1111-4111-8111-111111111111', 'bbbbbbbb-0000-4000-8000-000000000002', null, 2500, 'GBP', 'manual',
   null, now() - interval '3 days'),
  ('22222222-2222-4222-8222-222222222222', 'bbbbbbbb-0000-4000-8000-000000000004', null, 10000, 'USD', 'online',
   'pay_demo_0002', now() - interval '1 day');

-- First Church's WhatsApp business number (docs/whatsapp.md#messages-and-receipts-post is addressed to it).
insert into public.messaging_accounts (id, organization_id, phone_number_id, display_phone_number)
values
  ('dddddddd-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', '106540352242922',
   '15550783881');
insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
values
  ('dddddddd-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'demo-whatsapp-app-secret',
   'demo-verify-token');
