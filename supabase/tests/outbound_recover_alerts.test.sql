-- Settings area, third round: recover failed deliveries in a window (since, until, event type) with a
-- preview count and a recovery id to list them by; test deliveries tagged; failure alerts to the
-- endpoints an organization chooses (webhook.endpoint.failing / .recovered), once per run of failures,
-- never to the endpoint they are about, never to another organization.
begin;
select plan(31);

select tests.create_tenants('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000bb',
                            'e7000000-0000-4000-8000-0000000000a1', 'e7000000-0000-4000-8000-0000000000a2',
                            'e7000000-0000-4000-8000-0000000000b1');
select tests.create_endpoint('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000e1',
                             array['member.created', 'donation.recorded']);
-- Seven permanently failed deliveries of A's endpoint: member.created 1, 3, 5 and 7 days old, and
-- donation.recorded 2, 4 and 6 days old.
select tests.create_due_deliveries('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000e1', 7);
with numbered as (
  select d.id, row_number() over (order by d.id) as n from public.webhook_deliveries d
   where d.endpoint_id = 'e7000000-0000-4000-8000-0000000000e1'
)
update public.webhook_deliveries d
   set status = 'permanently_failed', next_attempt_at = null,
       created_at = now() - make_interval(days => n.n::int),
       event_type = case when n.n % 2 = 0 then 'donation.recorded' else 'member.created' end
  from numbered n where n.id = d.id;

-- Recover: preview, window, event type ---------------------------------------------------------------
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000a1', 'e7000000-0000-4000-8000-0000000000aa');
select is(public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days'), 7,
          'preview: every failed delivery since 8 days');
select is(public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days',
                                         now() - interval '2 days 12 hours'), 5,
          'preview: until leaves out the newer ones');
select is(public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days',
                                         null, 'donation.recorded'), 3,
          'preview: one event type');
select is(public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days',
                                         null, null, 4), 5,
          'preview: counting stops one past the cap');
select is(public.webhook_recover_failed('e7000000-0000-4000-8000-0000000000e1', now() - interval '6 days 12 hours',
                                        now() - interval '2 days 12 hours', 'donation.recorded',
                                        'e7000000-0000-4000-8000-00000000f001'), 2,
          'recover: donation.recorded 4 and 6 days old, within the window');
select tests.clear_act_as();
select is((select array_agg(extract(day from now() - created_at)::int order by created_at)
             from public.webhook_deliveries where recovery_id = 'e7000000-0000-4000-8000-00000000f001'),
          array[6, 4], 'exactly those carry the recovery id');
select is((select array_agg(status order by created_at) from public.webhook_deliveries
            where recovery_id = 'e7000000-0000-4000-8000-00000000f001'),
          array['pending', 'pending'], 'queued again');
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'e7000000-0000-4000-8000-0000000000e1' and status = 'permanently_failed'), 5,
          'the rest stay failed');
select ok((select recovery_id from public.webhook_deliveries where endpoint_id = 'e7000000-0000-4000-8000-0000000000e1'
            and recovery_id is not null limit 1) is not null and
          (select count(*) from public.webhook_deliveries where recovery_id is null
            and endpoint_id = 'e7000000-0000-4000-8000-0000000000e1') = 5, 'only the recovered have an id');
-- Without an id of the caller's, the recovery makes one.
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000a1', 'e7000000-0000-4000-8000-0000000000aa');
select is(public.webhook_recover_failed('e7000000-0000-4000-8000-0000000000e1', now() - interval '1 day 12 hours'), 1,
          'recover since a time, every event type');
select tests.clear_act_as();
select isnt((select recovery_id from public.webhook_deliveries where endpoint_id = 'e7000000-0000-4000-8000-0000000000e1'
              and created_at > now() - interval '1 day 12 hours'), null, 'a recovery id of its own');

-- Another organization's admin, staff, and the Data API's roles cannot preview (no existence oracle).
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000b1', 'e7000000-0000-4000-8000-0000000000bb');
select throws_ok($$select public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days')$$,
                 '42501', null, 'another organization''s admin cannot count its failures');
select tests.clear_act_as();
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000a2', 'e7000000-0000-4000-8000-0000000000aa');
select throws_ok($$select public.webhook_recover_preview('e7000000-0000-4000-8000-0000000000e1', now() - interval '8 days')$$,
                 '42501', null, 'staff cannot');
select tests.clear_act_as();
select ok(not has_function_privilege('authenticated',
            'public.webhook_recover_preview(uuid, timestamptz, timestamptz, text, integer)', 'execute')
          and not has_function_privilege('anon',
            'public.webhook_recover_failed(uuid, timestamptz, timestamptz, text, uuid)', 'execute'),
          'the Data API''s roles may call neither');

-- Test deliveries are tagged ---------------------------------------------------------------------------
select public.webhook_send_test_event('e7000000-0000-4000-8000-0000000000e1', 'member.created');
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'e7000000-0000-4000-8000-0000000000e1' and test), 1, 'a test delivery is tagged');
select tests.create_members('e7000000-0000-4000-8000-0000000000aa', 1);
select is((select count(*)::int from public.webhook_deliveries
            where endpoint_id = 'e7000000-0000-4000-8000-0000000000e1' and not test and status = 'pending'
              and recovery_id is null), 1, 'a real one is not');

-- Content search: the caller's organization only ---------------------------------------------------
insert into public.webhook_events (organization_id, type, payload)
values ('e7000000-0000-4000-8000-0000000000aa', 'member.created', '{"email": "needle@example.org"}'),
       ('e7000000-0000-4000-8000-0000000000bb', 'member.created', '{"email": "needle@example.org"}');
-- Their search keys, as the batch job writes them (it indexes events that have deliveries; these have none).
insert into private.webhook_event_search (event_id, organization_id, keys)
select id, organization_id, private.webhook_body_trigrams(organization_id, payload::text)
  from public.webhook_events where payload ->> 'email' = 'needle@example.org'
   and organization_id in ('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000bb');
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000b1', 'e7000000-0000-4000-8000-0000000000bb');
select is((select organization_id from public.webhook_events
            where id = any (private.webhook_events_containing('%NEEDLE@example%', 10))),
          'e7000000-0000-4000-8000-0000000000bb'::uuid, 'a search finds its own organization''s body only');
select tests.clear_act_as();
select tests.act_as_config_api('e7000000-0000-4000-8000-0000000000a2', 'e7000000-0000-4000-8000-0000000000aa');
select throws_ok($$select private.webhook_events_containing('%needle%', 10)$$, '42501', null, 'staff cannot search');
select tests.clear_act_as();
select ok(not has_function_privilege('authenticated', 'private.webhook_events_containing(text, integer)', 'execute'),
          'the Data API''s roles cannot');

-- Failure alerts ---------------------------------------------------------------------------------------
-- A's endpoints: e1 (above), e2 and e3 subscribed to the alerts; B's e4 subscribed to them too.
select tests.create_endpoint('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000e2',
                             array['webhook.endpoint.failing', 'webhook.endpoint.recovered']);
select tests.create_endpoint('e7000000-0000-4000-8000-0000000000aa', 'e7000000-0000-4000-8000-0000000000e3',
                             array['webhook.endpoint.failing']);
select tests.create_endpoint('e7000000-0000-4000-8000-0000000000bb', 'e7000000-0000-4000-8000-0000000000e4',
                             array['webhook.endpoint.failing', 'webhook.endpoint.recovered']);
create function pg_temp.health(endpoint uuid, outcome text, since interval) returns void language sql as $$
  insert into public.webhook_endpoint_health (endpoint_id, organization_id, last_attempt_at, last_outcome,
                                              consecutive_failures, failing_since, last_response_status)
  select endpoint, e.organization_id, now(), outcome, case when outcome = 'failed' then 9 else 0 end,
         case when outcome = 'failed' then now() - since end, case when outcome = 'failed' then 503 else 200 end
  from public.webhook_endpoints e where e.id = endpoint
  on conflict (endpoint_id) do update set last_outcome = excluded.last_outcome,
    consecutive_failures = excluded.consecutive_failures, failing_since = excluded.failing_since,
    last_response_status = excluded.last_response_status $$;
-- The endpoints the alerts of one kind sent to `endpoint` are about, in id order.
create function pg_temp.alerts_to(endpoint uuid, kind text) returns text[] language sql as $$
  select coalesce(array_agg(ev.payload #>> '{data,row,id}' order by ev.payload #>> '{data,row,id}'), '{}')
  from public.webhook_deliveries d join public.webhook_events ev on ev.id = d.event_id
  where d.endpoint_id = alerts_to.endpoint and d.event_type = alerts_to.kind $$;

-- e1 has failed for 30 minutes: not yet.
select pg_temp.health('e7000000-0000-4000-8000-0000000000e1', 'failed', interval '30 minutes');
select is(private.webhook_endpoint_alerts(), 0, 'failing for 30 minutes: no alert yet');
-- For 2 hours: one alert, to A's alert endpoints only.
select pg_temp.health('e7000000-0000-4000-8000-0000000000e1', 'failed', interval '2 hours');
select is((private.webhook_housekeeping() ->> 'endpoint_alerts')::int, 1, 'failing for 2 hours: housekeeping raises one alert');
select is(pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e2', 'webhook.endpoint.failing'),
          array['e7000000-0000-4000-8000-0000000000e1'], 'to the alert endpoint, about e1');
select ok(pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e3', 'webhook.endpoint.failing')
            = array['e7000000-0000-4000-8000-0000000000e1']
          and pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e4', 'webhook.endpoint.failing') = '{}',
          'to every alert endpoint of the organization, none of another''s');
select ok((select not (payload::text ~ 'whsec_') and payload #>> '{data,row,consecutive_failures}' = '9'
             and payload #>> '{data,row,disable_at}' is not null
           from public.webhook_events where type = 'webhook.endpoint.failing'
             and organization_id = 'e7000000-0000-4000-8000-0000000000aa'),
          'the alert says how long and how many, never a secret');

-- The alert endpoints fail too (the alerts to them fail): each is reported once, to the other one
-- only, and nothing more however often housekeeping runs.
select pg_temp.health('e7000000-0000-4000-8000-0000000000e2', 'failed', interval '3 hours');
select pg_temp.health('e7000000-0000-4000-8000-0000000000e3', 'failed', interval '3 hours');
select is(private.webhook_endpoint_alerts() + private.webhook_endpoint_alerts() + private.webhook_endpoint_alerts(), 2,
          'two more failing endpoints, two alerts, then nothing');
select is(pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e2', 'webhook.endpoint.failing'),
          array['e7000000-0000-4000-8000-0000000000e1', 'e7000000-0000-4000-8000-0000000000e3'],
          'e2 hears of e1 and e3, never of itself');
select is(pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e3', 'webhook.endpoint.failing'),
          array['e7000000-0000-4000-8000-0000000000e1', 'e7000000-0000-4000-8000-0000000000e2'],
          'e3 hears of e1 and e2, never of itself');

-- e1 delivers again: recovered, once, to those subscribed to it (e2; e3 is not).
select pg_temp.health('e7000000-0000-4000-8000-0000000000e1', 'delivered', null);
select is(private.webhook_endpoint_alerts(), 1, 'e1 recovered: one alert');
select is(private.webhook_endpoint_alerts(), 0, 'and only once');
select ok(pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e2', 'webhook.endpoint.recovered')
            = array['e7000000-0000-4000-8000-0000000000e1']
          and pg_temp.alerts_to('e7000000-0000-4000-8000-0000000000e3', 'webhook.endpoint.recovered') = '{}',
          'recovered goes to the endpoints subscribed to it');
-- A new run of failures is a new alert.
select pg_temp.health('e7000000-0000-4000-8000-0000000000e1', 'failed', interval '90 minutes');
select is(private.webhook_endpoint_alerts(), 1, 'failing again for an hour and a half: a new alert');

select * from finish();
rollback;
