-- Webhook Logs' content search is built off the write path (20261129100000_webhook_logs_search.sql):
-- recording an event and its deliveries writes no search keys and fires nothing that would; the batch
-- job (webhook-search-index) indexes the events of deliveries afterwards, at most the first 64 KB of a
-- body, waits while deliveries are due unless the index is too far behind, moves the frontier Webhook
-- Logs reports, and an erasure's rewrite of a body drops its keys.
begin;
select plan(15);

insert into public.organizations (id, name) values ('5ea1c000-0000-4000-8000-00000000000c', 'Indexed C');
select tests.create_endpoint('5ea1c000-0000-4000-8000-00000000000c', '5ea1c000-0000-4000-8000-0000000000e1');

-- Nothing on the write path: no trigger on the members, events or deliveries fires on insert into the
-- search's objects, and recording writes no keys.
select is(array(select t.tgname::text from pg_trigger t join pg_proc p on p.oid = t.tgfoid
                 where t.tgrelid in ('public.members'::regclass, 'public.webhook_events'::regclass,
                                     'public.webhook_deliveries'::regclass)
                   and not t.tgisinternal and p.prosrc ~ 'webhook_event_search'
                 order by 1), array['webhook_events_search_forget'],
          'one trigger of the search on the recording tables: the erasure one');
select ok((select (tgtype & 4) = 0 and (tgtype & 16) <> 0 from pg_trigger where tgname = 'webhook_events_search_forget'),
          'and it fires on update only, never on insert');

select tests.create_members('5ea1c000-0000-4000-8000-00000000000c', 3);
-- An event without deliveries (no endpoint takes it) and one whose body is larger than 64 KB (jsonb
-- puts shorter keys first: "a", then "pad", then "zzzz").
insert into public.webhook_events (organization_id, type, payload)
values ('5ea1c000-0000-4000-8000-00000000000c', 'member.created', '{"note": "nobody-subscribed-zq"}');
with ev as (
  insert into public.webhook_events (organization_id, type, payload)
  values ('5ea1c000-0000-4000-8000-00000000000c', 'member.created',
          jsonb_build_object('a', 'early-marker-kx', 'pad', repeat('x', 70000), 'zzzz', 'late-marker-kx'))
  returning id)
insert into public.webhook_deliveries (organization_id, event_id, endpoint_id)
select '5ea1c000-0000-4000-8000-00000000000c', id, '5ea1c000-0000-4000-8000-0000000000e1' from ev;
select is((select count(*)::int from private.webhook_event_search
            where organization_id = '5ea1c000-0000-4000-8000-00000000000c'), 0,
          'recording 4 events and their deliveries wrote no search keys');

-- Deliveries are due (nobody sends them here): the job waits while the index is less than max_lag behind.
update private.webhook_search_frontier set indexed_until = clock_timestamp() - interval '5 seconds';
select is(private.webhook_search_index_batch(2000, interval '1 minute'), null,
          'while deliveries are due and the index is 5 s behind, a batch waits (max_lag 1 minute)');
select is((select count(*)::int from private.webhook_event_search
            where organization_id = '5ea1c000-0000-4000-8000-00000000000c'), 0, 'and wrote nothing');

-- Behind by more than max_lag: it indexes. This transaction's deliveries were recorded at its start.
update private.webhook_search_frontier set indexed_until = now() - interval '1 minute';
select ok(private.webhook_search_index_batch(2000, interval '10 seconds') >= 4,
          'a minute behind, a batch indexes even while deliveries are due');
select is((select count(*)::int from private.webhook_event_search s join public.webhook_events e on e.id = s.event_id
            where e.organization_id = '5ea1c000-0000-4000-8000-00000000000c'), 4,
          'the 4 events with deliveries have keys; the one without deliveries has none');
select ok((select indexed_until > now() - interval '1 minute' from private.webhook_search_frontier),
          'the frontier moved on');
select is(private.webhook_search_index_batch(2000, interval '0 seconds'), 0, 'a second batch finds nothing new');

-- At most the first 64 KB of a body.
select ok((select s.keys @> private.webhook_pattern_trigrams(s.organization_id, '%early-marker-kx%')
             and not s.keys @> private.webhook_pattern_trigrams(s.organization_id, '%late-marker-kx%')
           from private.webhook_event_search s join public.webhook_events e on e.id = s.event_id
           where e.payload ? 'pad'),
          'a body''s first 64 KB is indexed, what lies beyond is not');

-- The search finds through those keys, as the organization's admin.
select tests.add_member(tests.create_user('index-c@example.org', '5ea1c000-0000-4000-8000-0000000000c1'),
                        '5ea1c000-0000-4000-8000-00000000000c', 'admin');
select tests.act_as_config_api('5ea1c000-0000-4000-8000-0000000000c1', '5ea1c000-0000-4000-8000-00000000000c');
select is(cardinality(private.webhook_events_containing('%EARLY-marker-kx%', 5001)), 1,
          'the content search finds the event through its keys');
select ok(private.webhook_searchable_until() is not null, 'and says how far it reaches');
select tests.clear_act_as();

-- An erasure rewrites the body: its keys go with the old body.
update public.webhook_events set payload = jsonb_build_object('redacted', true), redacted_at = now()
 where organization_id = '5ea1c000-0000-4000-8000-00000000000c' and payload ? 'pad';
select is((select count(*)::int from private.webhook_event_search s join public.webhook_events e on e.id = s.event_id
            where e.organization_id = '5ea1c000-0000-4000-8000-00000000000c' and e.redacted_at is not null), 0,
          'a rewritten (erased) body keeps no keys');

-- Who may run what: the job and its state are the database's own; the frontier is read through the API.
select is(array(select r || ':' || f from unnest(array['anon', 'authenticated', 'config_api']) r,
                  unnest(array['private.webhook_search_index_batch(integer, interval)',
                               'private.webhook_searchable_until()']) f
                 where has_function_privilege(r, f, 'execute')
                 order by 1),
          array['config_api:private.webhook_searchable_until()'],
          'only the configuration API may read the frontier; nobody but the owner runs the job');

-- The cron job's procedure commits between batches: a SET clause would forbid that (every call would
-- fail with "invalid transaction termination").
select is((select proconfig from pg_proc where oid = 'private.webhook_search_index_run(interval)'::regprocedure),
          null, 'the job''s procedure has no SET clause, so it may commit between batches');

select * from finish();
rollback;
