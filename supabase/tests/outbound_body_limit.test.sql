-- Event bodies are bounded (private.webhook_max_body_bytes(), 256 KiB): a row too large for a body is
-- still delivered, trimmed and marked `truncated`, never dropped; nothing larger can be stored as an
-- event; and the domain's text columns refuse values no church record needs, whoever writes them
-- (staff may write members under RLS, and every member row travels in webhook bodies).
begin;
select plan(19);

select tests.create_endpoint(tests.create_organization('Bounded', 'c2000000-0000-4000-8000-0000000000aa'),
                             'c2000000-0000-4000-8000-0000000000e1');

select is(private.webhook_max_body_bytes(), 262144, 'the maximum body is 256 KiB');

-- A row with a 300 KiB field, enqueued as the outbox (or a server-side writer) does.
select is(private.webhook_enqueue('member.created', jsonb_build_array(jsonb_build_object(
  'organization_id', 'c2000000-0000-4000-8000-0000000000aa',
  'row', jsonb_build_object('id', 'c2000000-0000-4000-8000-000000000001', 'status', 'active',
                            'first_name', repeat('n', 300 * 1024)),
  'delta', jsonb_build_object('first_name', repeat('n', 300 * 1024))))), 1,
  'a row too large for a body still makes its delivery');
create temp table big as
  select e.*, d.body_bytes as delivery_body_bytes from public.webhook_events e
  join public.webhook_deliveries d on d.event_id = e.id
  where e.organization_id = 'c2000000-0000-4000-8000-0000000000aa';
select ok((select body_bytes <= 262144 and body_bytes = octet_length(payload::text) from big),
          'its body is within the maximum');
select is((select delivery_body_bytes from big), (select body_bytes from big), 'and the delivery knows its size');
select is((select array(select jsonb_object_keys(payload) order by 1) from big),
          array['created_at', 'data', 'id', 'organization_id', 'truncated', 'type'],
          'the contract''s keys are all there, with the truncated marker');
select is((select payload ->> 'id' from big), (select id::text from big), 'the event id is kept');
select is((select payload ->> 'type' from big), 'member.created', 'and its type');
select is((select payload -> 'data' -> 'row' from big),
          '{"id": "c2000000-0000-4000-8000-000000000001", "status": "active"}'::jsonb,
          'the row keeps its id and small fields');
select is((select payload -> 'data' -> 'delta' from big), '{}'::jsonb, 'the delta its small fields (none)');
select is((select (payload -> 'truncated') - 'original_body_bytes'::text from big),
          '{"max_body_bytes": 262144, "omitted_fields": ["first_name"]}'::jsonb,
          'the marker names what was left out');
select ok((select (payload #>> '{truncated,original_body_bytes}')::int > 600 * 1024 from big),
          'and how large the body would have been (the field twice: row and delta)');

-- So many fields of 1 KiB that even the small ones are too many: only the id is left.
select private.webhook_enqueue('member.created', jsonb_build_array(jsonb_build_object(
  'organization_id', 'c2000000-0000-4000-8000-0000000000aa',
  'row', (select jsonb_object_agg('f' || g, repeat('v', 1000)) from generate_series(1, 300) g)
         || '{"id": "c2000000-0000-4000-8000-000000000002"}',
  'delta', '{}'::jsonb)));
select is((select payload -> 'data' from public.webhook_events
            where payload #>> '{data,row,id}' = 'c2000000-0000-4000-8000-000000000002'),
          '{"row": {"id": "c2000000-0000-4000-8000-000000000002"}, "delta": {}}'::jsonb,
          'too many fields even for the trimmed body: the row''s id alone');
select is((select payload -> 'truncated' -> 'omitted_fields' from public.webhook_events
            where payload #>> '{data,row,id}' = 'c2000000-0000-4000-8000-000000000002'),
          'null'::jsonb, 'omitted_fields null: every other field');

-- An ordinary body is untouched.
insert into public.members (organization_id, first_name) values ('c2000000-0000-4000-8000-0000000000aa', 'Ada');
select ok((select not (payload ? 'truncated') and payload #>> '{data,row,first_name}' = 'Ada'
             from public.webhook_events where payload #>> '{data,row,first_name}' = 'Ada'),
          'a body within the maximum is sent whole, with no marker');

-- Whoever writes, no larger body is stored.
select throws_ok($$insert into public.webhook_events (organization_id, type, payload)
                   values ('c2000000-0000-4000-8000-0000000000aa', 'member.created',
                           jsonb_build_object('pad', repeat('x', 262144)))$$,
                 '23514', null, 'the events table refuses a body over the maximum');

-- Staff write members under RLS: a 10 MiB name is refused at the write, with a clear error.
select tests.add_member(tests.create_user('staff@bounded.example.org', 'c2000000-0000-4000-8000-0000000000d1'),
                        'c2000000-0000-4000-8000-0000000000aa');
select tests.act_as('c2000000-0000-4000-8000-0000000000d1', 'c2000000-0000-4000-8000-0000000000aa');
select throws_ok($$insert into public.members (organization_id, first_name)
                   select 'c2000000-0000-4000-8000-0000000000aa', repeat('n', 10 * 1024 * 1024)
                   from generate_series(1, 16)$$,
                 '23514', 'new row for relation "members" violates check constraint "members_first_name_length"',
                 'staff cannot store a 10 MiB first name');
select throws_ok($$update public.members set email = repeat('e', 400) || '@example.org' where first_name = 'Ada'$$,
                 '23514', 'new row for relation "members" violates check constraint "members_email_length"',
                 'nor a 400-character e-mail address');
select lives_ok($$insert into public.members (organization_id, first_name, last_name, email, primary_phone)
                  values ('c2000000-0000-4000-8000-0000000000aa', repeat('n', 200), repeat('l', 200),
                          repeat('e', 300) || '@example.org', '+1 555 0100 0100')$$,
                'long but plausible values are kept');
select tests.clear_act_as();
select is((select count(*)::int from public.members where organization_id = 'c2000000-0000-4000-8000-0000000000aa'), 2,
          'the refused rows were not stored (nor any event for them)');

select * from finish();
rollback;
