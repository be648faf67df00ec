-- Outbound webhooks in the database: tenancy of the four tables (admins read their own organization's
-- endpoints, events, deliveries and attempts; staff, other organizations and anon read nothing, and
-- nobody but the server writes the history), the outbox triggers, housekeeping, and the pg_cron jobs.
begin;
select plan(41);
-- Only this file's organizations are claimed and housekept (a project's database has others' work).
select tests.hold_existing_organizations();

-- Two organizations, each with an admin (and a staff member in A); one endpoint each.
select tests.create_tenants('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb',
                           'a0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000002', 'b0000000-0000-4000-8000-000000000001');
select tests.create_endpoint('a0000000-0000-4000-8000-0000000000aa', 'a0000000-0000-4000-8000-0000000000e1',
                             array['member.created', 'member.lost']);
select tests.create_endpoint('b0000000-0000-4000-8000-0000000000bb', 'b0000000-0000-4000-8000-0000000000e1');

-- Outbox triggers ----------------------------------------------------------------------------------
insert into public.members (id, organization_id, first_name) values
  ('a0000000-0000-4000-8000-0000000000c1', 'a0000000-0000-4000-8000-0000000000aa', 'A1'),
  ('b0000000-0000-4000-8000-0000000000c1', 'b0000000-0000-4000-8000-0000000000bb', 'B1');
select is((select count(*)::int from public.webhook_deliveries
            where organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb')),
          2, 'one member.created delivery per organization');
select is(
  (select payload -> 'data' -> 'row' ->> 'first_name' from public.webhook_events
    where organization_id = 'a0000000-0000-4000-8000-0000000000aa'),
  'A1', 'the event carries the row');
update public.members set email = 'a1@example.org' where id = 'a0000000-0000-4000-8000-0000000000c1';
select is((select count(*)::int from public.webhook_events where type = 'member.lost'
            and organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb')), 0,
  'an ordinary update raises no member.lost');
update public.members set status = 'lost' where id in ('a0000000-0000-4000-8000-0000000000c1',
                                                      'b0000000-0000-4000-8000-0000000000c1');
select is((select count(*)::int from public.webhook_events where type = 'member.lost'
            and organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb')), 1,
  'member.lost only where an endpoint subscribed to it');
select is((select payload -> 'data' -> 'delta' ->> 'status' from public.webhook_events
            where type = 'member.lost' and organization_id = 'a0000000-0000-4000-8000-0000000000aa'),
  'lost', 'the delta holds the changed status');
select ok((select not (payload -> 'data' -> 'delta' ? 'first_name') from public.webhook_events
            where type = 'member.lost' and organization_id = 'a0000000-0000-4000-8000-0000000000aa'),
  'the delta leaves unchanged fields out');
select matches((select secret from public.webhook_endpoints where id = 'a0000000-0000-4000-8000-0000000000e1'),
  '^whsec_[A-Za-z0-9+/]{43}=$', 'default secret: whsec_ + base64 of 32 random bytes');

-- An attempt so the attempts table has a row for each organization (claimed, then failed).
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select d.id, d.endpoint_id, d.organization_id, 'a0000000-0000-4000-8000-0000000000f0', now() + interval '40 seconds'
from public.webhook_deliveries d where d.status = 'pending'
 and d.organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb');
select private.webhook_record_results(jsonb_agg(tests.result(d.id, d.endpoint_id, 'a0000000-0000-4000-8000-0000000000f0', 500)))
from public.webhook_deliveries d where d.status = 'pending'
 and d.organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb');
select is((select count(*)::int from public.webhook_delivery_attempts
            where organization_id in ('a0000000-0000-4000-8000-0000000000aa', 'b0000000-0000-4000-8000-0000000000bb')),
          3, 'attempts recorded');

-- Tenancy -------------------------------------------------------------------------------------------
select tests.act_as_config_api('a0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.webhook_endpoints), 1, 'admin A sees only A''s endpoint');
select throws_ok($$select secret from public.webhook_endpoints$$, '42501', null,
  'not even admin A reads the signing secret back (write-only)');
select is((select count(*)::int from public.webhook_events), 2, 'admin A sees A''s events');
select is((select count(*)::int from public.webhook_deliveries), 2, 'admin A sees A''s deliveries');
select is((select count(*)::int from public.webhook_delivery_attempts), 2, 'admin A sees A''s attempts');
select ok((select bool_and(organization_id = 'a0000000-0000-4000-8000-0000000000aa') from public.webhook_deliveries),
  'and nothing of B');
select lives_ok($$insert into public.webhook_endpoints (organization_id, url, events)
  values ('a0000000-0000-4000-8000-0000000000aa', 'https://a2.example.org/', array['donation.recorded'])$$,
  'admin A creates an endpoint');
select is((select created_by::text from public.webhook_endpoints where url = 'https://a2.example.org/'),
  'a0000000-0000-4000-8000-000000000001', 'created_by is the admin');
select throws_ok($$insert into public.webhook_endpoints (organization_id, url, events)
  values ('b0000000-0000-4000-8000-0000000000bb', 'https://x.example.org/', array['member.created'])$$,
  '42501', null, 'admin A cannot create an endpoint in B');
select throws_ok($$update public.webhook_endpoints set previous_secret = null$$, '42501', null,
  'rotation state is not user-writable');
select throws_ok($$update public.webhook_deliveries set status = 'delivered'$$, '42501', null,
  'deliveries are not user-writable');
select throws_ok($$insert into public.webhook_events (organization_id, type, payload)
  values ('a0000000-0000-4000-8000-0000000000aa', 'member.created', '{}')$$, '42501', null,
  'events are not user-writable');
select throws_ok($$delete from public.webhook_delivery_attempts$$, '42501', null, 'attempts are not user-deletable');
select throws_ok($$select * from private.webhook_claim(10, 1048576, 10, 64, 60)$$, '42501', null,
  'users cannot claim deliveries');
select tests.clear_act_as();

select tests.act_as_config_api('a0000000-0000-4000-8000-000000000002', 'a0000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.webhook_endpoints), 0, 'staff see no endpoint (so no secret)');
select is((select count(*)::int from public.webhook_deliveries) + (select count(*)::int from public.webhook_events)
  + (select count(*)::int from public.webhook_delivery_attempts), 0, 'staff see no history');
select throws_ok($$insert into public.webhook_endpoints (organization_id, url, events)
  values ('a0000000-0000-4000-8000-0000000000aa', 'https://s.example.org/', array['member.created'])$$,
  '42501', null, 'staff cannot create endpoints');
select tests.clear_act_as();

-- A forged claim for an organization the user does not belong to grants nothing.
select tests.act_as_config_api('b0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.webhook_endpoints), 0, 'admin B claiming A sees nothing');
select tests.clear_act_as();

select tests.act_as_anon();
select throws_ok($$select count(*) from public.webhook_endpoints$$, '42501', null, 'anon has no access');
select throws_ok($$select public.webhook_send_test_event('a0000000-0000-4000-8000-0000000000e1')$$, '42501', null,
  'anon cannot run operations');
select tests.clear_act_as();
select ok(not has_function_privilege('authenticated', 'private.webhook_record_results(jsonb)', 'execute')
  and not has_function_privilege('authenticated', 'private.webhook_record_and_claim(jsonb, integer, bigint, integer, integer, integer)',
                                 'execute')
  and not has_function_privilege('authenticated', 'private.webhook_housekeeping()', 'execute')
  and not has_function_privilege('authenticated', 'private.webhook_enqueue(text, jsonb)', 'execute'),
  'users cannot record results, run housekeeping or forge events');
select ok(not has_function_privilege('anon', 'public.webhook_rotate_secret(uuid, interval, text)', 'execute'),
  'anon cannot rotate secrets');

-- Housekeeping ----------------------------------------------------------------------------------------
-- B's delivery was claimed by a dispatcher that died: its lease ran out a minute ago.
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select id, endpoint_id, organization_id, gen_random_uuid(), now() - interval '1 minute'
from public.webhook_deliveries where organization_id = 'b0000000-0000-4000-8000-0000000000bb';
-- The clock moved 25 hours on: A's retrying deliveries are due and past their window.
update public.webhook_deliveries
   set first_attempt_at = now() - interval '25 hours', next_attempt_at = now() - interval '1 hour'
 where organization_id = 'a0000000-0000-4000-8000-0000000000aa' and status = 'retrying';
select is(private.webhook_housekeeping(),
  '{"set_aside": 0, "permanently_failed": 2, "expired_leases": 0, "disabled_endpoints": 0, "endpoint_alerts": 0}'::jsonb,
  'housekeeping closes 24-hour windows');
select is((select array_agg(distinct status) from public.webhook_deliveries
  where organization_id = 'a0000000-0000-4000-8000-0000000000aa'),
  array['permanently_failed'], 'past the window: permanently_failed');
select is((select count(*)::int from private.webhook_leases l join public.webhook_deliveries d on d.id = l.delivery_id
            where d.organization_id = 'b0000000-0000-4000-8000-0000000000bb' and d.status = 'retrying'),
  1, 'the lease run out of an open delivery stays (it counts the claims without a result)');

-- Disabling an endpoint ends its open deliveries, saying why.
update public.webhook_endpoints set enabled = false where id = 'b0000000-0000-4000-8000-0000000000e1';
select is((select status || ' / ' || last_error from public.webhook_deliveries
  where organization_id = 'b0000000-0000-4000-8000-0000000000bb'),
  'permanently_failed / endpoint disabled: disabled by an administrator', 'disable ends open deliveries');
select is((private.webhook_housekeeping() ->> 'expired_leases')::int, 1,
  'once the delivery is final, housekeeping clears its lease');

-- A delivery in flight when its endpoint is disabled is not sent again by a recover before that
-- attempt's lease is over.
select tests.create_endpoint('a0000000-0000-4000-8000-0000000000aa', 'a0000000-0000-4000-8000-0000000000e3',
                             array['attendance.marked']);
insert into public.attendance (organization_id, member_id)
  values ('a0000000-0000-4000-8000-0000000000aa', 'a0000000-0000-4000-8000-0000000000c1');
insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
select id, endpoint_id, organization_id, 'a0000000-0000-4000-8000-0000000000f1', now() + interval '30 seconds'
from public.webhook_deliveries where endpoint_id = 'a0000000-0000-4000-8000-0000000000e3';
update public.webhook_endpoints set enabled = false where id = 'a0000000-0000-4000-8000-0000000000e3';
update public.webhook_endpoints set enabled = true where id = 'a0000000-0000-4000-8000-0000000000e3';
select is(public.webhook_recover_failed('a0000000-0000-4000-8000-0000000000e3', now() - interval '1 hour'), 1,
  'recover brings the delivery back');
select is((select count(*)::int from private.webhook_claim(10, 1048576, 16, 64, 40)
            where endpoint_id = 'a0000000-0000-4000-8000-0000000000e3'), 0,
  'but not before the in-flight attempt''s lease ends');
select private.webhook_record_results(jsonb_agg(tests.result(d.id, d.endpoint_id, 'a0000000-0000-4000-8000-0000000000f1', 500)))
from public.webhook_deliveries d where d.endpoint_id = 'a0000000-0000-4000-8000-0000000000e3';
select is((select status || ' / ' || (next_attempt_at = now()) || ' / ' || (select count(*) from private.webhook_leases l
                                                                            where l.delivery_id = d.id)
           from public.webhook_deliveries d where endpoint_id = 'a0000000-0000-4000-8000-0000000000e3'),
  'pending / true / 1', 'and that attempt''s late failure no longer moves the state, nor ends the lease it lost');

-- Scheduling ----------------------------------------------------------------------------------------
select is((select schedule from cron.job where jobname = 'webhook-housekeeping'), '* * * * *',
  'housekeeping runs every minute');
select is((select schedule from cron.job where jobname = 'webhook-dispatch'), '* * * * *',
  'the dispatcher is invoked every minute');
-- (Where pg_net is installed, a hosted project, the invoker posts: tests/hosted_dispatch_pgnet_test.ts.)
select case when private.pg_net_present() then skip('pg_net is installed here: the invoker posts', 1)
            else is(private.webhook_invoke_dispatcher(), null, 'without pg_net/Vault the invoker does nothing') end;

select * from finish();
rollback;
