-- Retention: what private.retention_delete_batch() removes, what it keeps, the per-organization setting
-- and who may change it. (tests/log_retention_test.ts runs the committing procedure for real.)
begin;
select plan(25);

select tests.create_organization('Default retention', 'e0000000-0000-4000-8000-000000000001');
select tests.create_organization('Short retention', 'e0000000-0000-4000-8000-000000000002');
select tests.create_organization('Long retention', 'e0000000-0000-4000-8000-000000000003');
select tests.create_endpoint(('e0000000-0000-4000-8000-00000000000' || g)::uuid,
                             ('e1000000-0000-4000-8000-00000000000' || g)::uuid)
from generate_series(1, 3) g;

-- An event of `org` created `age` ago with one delivery to the org's endpoint in `state`, attempted
-- `attempted` ago (null: never), with one attempt row when attempted.
create function pg_temp.history(tag text, org int, age interval, state text, attempted interval default null)
returns void language plpgsql as $$
declare
  ev uuid := gen_random_uuid();
  dl uuid := gen_random_uuid();
begin
  insert into public.webhook_events (id, organization_id, type, payload, created_at)
  values (ev, ('e0000000-0000-4000-8000-00000000000' || org)::uuid, 'member.created',
          jsonb_build_object('tag', tag), now() - age);
  insert into public.webhook_deliveries (id, organization_id, event_id, endpoint_id, event_type, status,
                                         next_attempt_at, attempt_count, last_attempt_at, created_at)
  values (dl, ('e0000000-0000-4000-8000-00000000000' || org)::uuid, ev,
          ('e1000000-0000-4000-8000-00000000000' || org)::uuid, 'member.created', state,
          case when state in ('pending', 'retrying') then now() end, 1, now() - attempted, now() - age);
  if attempted is not null then
    insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
                                                  response_status)
    values (('e0000000-0000-4000-8000-00000000000' || org)::uuid, dl, 1, now() - attempted, 200);
  end if;
end $$;

create function pg_temp.kept(tag text) returns boolean language sql as $$
  select exists (select 1 from public.webhook_events where payload ->> 'tag' = tag)
$$;

-- Organization 1: the default 30 days.
select pg_temp.history('old delivered', 1, '40 days', 'delivered', '40 days');
select pg_temp.history('old failed', 1, '35 days', 'permanently_failed', '34 days');
select pg_temp.history('recent delivered', 1, '20 days', 'delivered', '20 days');
select pg_temp.history('old but still open', 1, '40 days', 'retrying', '1 hour');
select pg_temp.history('old but redelivered lately', 1, '40 days', 'delivered', '2 days');
-- Organization 2 keeps 7 days; organization 3 keeps 90.
insert into public.organization_log_retention (organization_id, webhook_log_days) values
  ('e0000000-0000-4000-8000-000000000002', 7), ('e0000000-0000-4000-8000-000000000003', 90);
select pg_temp.history('short: 10 days', 2, '10 days', 'delivered', '10 days');
select pg_temp.history('short: 3 days', 2, '3 days', 'delivered', '3 days');
select pg_temp.history('long: 60 days', 3, '60 days', 'delivered', '60 days');
select pg_temp.history('long: 100 days', 3, '100 days', 'permanently_failed', '99 days');

-- Inbound webhook log. Verified rows are named by their idempotency key; unverified ones keep no text
-- their sender chose, so they are named by our own error text.
insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, signature_valid,
                                        status, error, received_at, last_received_at, processed_at)
values
  ('e0000000-0000-4000-8000-000000000001', 'checkout', 'processed-old', '{}', true, 'processed', null,
   now() - interval '100 days', now() - interval '100 days', now() - interval '100 days'),
  ('e0000000-0000-4000-8000-000000000001', 'checkout', 'processed-recent', '{}', true, 'processed', null,
   now() - interval '30 days', now() - interval '30 days', now() - interval '30 days'),
  ('e0000000-0000-4000-8000-000000000001', 'checkout', 'replayed-lately', '{}', true, 'processed', null,
   now() - interval '120 days', now() - interval '120 days', now() - interval '5 days'),
  ('e0000000-0000-4000-8000-000000000001', 'checkout', 'failed-old', '{}', true, 'failed', 'boom',
   now() - interval '100 days', now() - interval '100 days', null),
  ('e0000000-0000-4000-8000-000000000001', 'whatsapp', 'unmatched-expired', '{}', true, 'unmatched', null,
   now() - interval '200 days', now() - interval '200 days', null),
  ('e0000000-0000-4000-8000-000000000001', 'payments', null, null, false, 'unverified', 'unverified-old',
   now() - interval '95 days', now() - interval '95 days', null),
  (null, 'payments', null, null, null, 'rejected', 'no-organization-old',
   now() - interval '95 days', now() - interval '95 days', null);

create function pg_temp.inbound_kept(key text) returns boolean language sql as $$
  select exists (select 1 from public.inbound_webhook_log where idempotency_key = key or error = key)
$$;

-- A batch of 1 removes one event (the oldest candidate of some organization) and one inbound row.
select is((select (events, inbound_log) from private.retention_delete_batch(1)), (1, 1),
          'a batch never removes more than its size');
select is((select (events, deliveries, attempts, inbound_log) from private.retention_delete_batch(1000)),
          (3, 3, 3, 3), 'the next batch removes the rest: events with their deliveries and attempts');
select is((select (events, deliveries, attempts, inbound_log) from private.retention_delete_batch(1000)),
          (0, 0, 0, 0), 'and then there is nothing more to remove');

select ok(not pg_temp.kept('old delivered'), 'a delivered event older than 30 days is removed');
select ok(not pg_temp.kept('old failed'), 'a permanently failed one too');
select ok(pg_temp.kept('recent delivered'), 'a 20-day-old one is kept (default 30 days)');
select ok(pg_temp.kept('old but still open'), 'an old event whose delivery is still open is kept');
select ok(pg_temp.kept('old but redelivered lately'), 'an old event redelivered within the period is kept');
select ok(not pg_temp.kept('short: 10 days') and pg_temp.kept('short: 3 days'),
          'an organization keeping 7 days loses the 10-day-old event only');
select ok(pg_temp.kept('long: 60 days') and not pg_temp.kept('long: 100 days'),
          'an organization keeping 90 days keeps the 60-day-old event');
select is((select count(*)::int from public.webhook_deliveries d
           where not exists (select 1 from public.webhook_events e where e.id = d.event_id)), 0,
          'no delivery is left without its event');
select is((select count(*)::int from public.webhook_delivery_attempts a
           where a.organization_id::text like 'e0000000-%'), 5, 'attempts remain for the five kept deliveries');

select ok(not pg_temp.inbound_kept('processed-old'), 'inbound: a processed row older than 90 days is removed');
select ok(pg_temp.inbound_kept('processed-recent'), 'inbound: a 30-day-old processed row is kept');
select ok(pg_temp.inbound_kept('replayed-lately'), 'inbound: a row processed by a replay 5 days ago is kept');
select ok(pg_temp.inbound_kept('failed-old'), 'inbound: a failed row is kept past 90 days, for a replay');
select ok(not pg_temp.inbound_kept('unmatched-expired'), 'inbound: an unmatched row expires after 180 days');
select ok(not pg_temp.inbound_kept('unverified-old') and not pg_temp.inbound_kept('no-organization-old'),
          'inbound: unverified rows and rows without an organization go after 90 days');

-- The setting: within 1 to 90 days, and only an organization's admins choose it.
select throws_ok($$insert into public.organization_log_retention values ('e0000000-0000-4000-8000-000000000001', 0)$$,
                 '23514', null, 'retention below 1 day is refused');
select throws_ok($$update public.organization_log_retention set webhook_log_days = 91
                   where organization_id = 'e0000000-0000-4000-8000-000000000003'$$,
                 '23514', null, 'retention above 90 days is refused');

select tests.add_member(tests.create_user('retention-admin@example.org', 'e2000000-0000-4000-8000-000000000001'), 'e0000000-0000-4000-8000-000000000002', 'admin');
select tests.add_member(tests.create_user('retention-staff@example.org', 'e2000000-0000-4000-8000-000000000002'), 'e0000000-0000-4000-8000-000000000002', 'staff');
select tests.act_as_config_api('e2000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000002');
update public.organization_log_retention set webhook_log_days = 14;
select is((select array_agg(webhook_log_days) from public.organization_log_retention), array[14],
          'an admin sees and changes only its own organization''s retention');
select throws_ok($$insert into public.organization_log_retention values ('e0000000-0000-4000-8000-000000000001', 90)$$,
                 '42501', null, 'and cannot set another organization''s');
select tests.act_as_config_api('e2000000-0000-4000-8000-000000000002', 'e0000000-0000-4000-8000-000000000002');
select is((select count(*)::int from public.organization_log_retention), 0, 'staff do not see it');
select throws_ok($$select * from private.retention_delete_batch(10)$$, '42501', null,
                 'users cannot run retention');
select tests.clear_act_as();

select is((select schedule from cron.job where jobname = 'log-retention'), '*/10 * * * *',
          'pg_cron runs retention every 10 minutes');

select * from finish();
rollback;
