-- The audit log's rules in SQL: who reads it (an organization's admins, their organization's entries
-- only; the platform console; nobody through the Data API), that nobody writes, alters or deletes an
-- entry but the recorder and the retention job, and that an entry and its change commit together or not
-- at all. Counts only rows of the organizations made here.
begin;
select plan(28);

select tests.create_tenants('a6000000-0000-4000-8000-0000000000aa', 'a6000000-0000-4000-8000-0000000000bb',
  'a6000000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-000000000002',
  'a6000000-0000-4000-8000-000000000003');
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash) values
  ('a6000000-0000-4000-8000-0000000000ce', 'a6000000-0000-4000-8000-0000000000aa', 'Make', 'orgkey_audit',
   encode(sha256('audit key'::bytea), 'hex'));

-- Privileges --------------------------------------------------------------------------------------------
select ok(not has_table_privilege('anon', 'public.audit_log', 'select, insert, update, delete, truncate'),
  'anon: no privilege on the audit log');
select ok(not has_table_privilege('authenticated', 'public.audit_log', 'select, insert, update, delete, truncate'),
  'authenticated (the Data API): none');
select ok(has_table_privilege('config_api', 'public.audit_log', 'select'), 'the configuration API reads it');
select ok(not has_table_privilege('config_api', 'public.audit_log', 'insert, update, delete, truncate'),
  'and writes nothing directly');
select ok(not has_function_privilege('authenticated', 'private.audit_record(uuid, text, text, text, jsonb, jsonb, text, jsonb, uuid, text, text)', 'execute')
  and not has_function_privilege('config_api', 'private.audit_record(uuid, text, text, text, jsonb, jsonb, text, jsonb, uuid, text, text)', 'execute'),
  'the recorder itself is the server''s alone (triggers and security-definer functions call it)');
select ok(not has_function_privilege('authenticated', 'private.audit(uuid, text, text, text, jsonb, jsonb, jsonb)', 'execute'),
  'the Data API cannot record operations');

-- Recording, as the configuration API runs: the actor from the claims, the origin from request.headers --
select tests.act_as_config_api('a6000000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-0000000000aa');
select set_config('request.headers', '{"x-forwarded-for": "203.0.113.5", "user-agent": "pgTAP"}', true);
insert into public.webhook_endpoints (organization_id, url, events, secret)
  values ('a6000000-0000-4000-8000-0000000000aa', 'https://a.example.org/h',
          array['member.created'], 'SECRET_OF_A_0123456789abcdef0123');
select results_eq($$ select action, actor_kind, actor_email, ip, user_agent, after ->> 'url', after ? 'secret'
                     from public.audit_log where target_id = (select e.id::text from public.webhook_endpoints e where e.url = 'https://a.example.org/h') $$,
  $$ values ('endpoint.created', 'admin', 'admin-a@example.org', '203.0.113.5', 'pgTAP', 'https://a.example.org/h', false) $$,
  'an endpoint made by A''s admin: who, from where, what, and not its secret');
update public.webhook_endpoints set secret = 'ROTATED_OF_A_0123456789abcdef01' where id = (select e.id from public.webhook_endpoints e where e.url = 'https://a.example.org/h');
select is((select count(*)::int from public.audit_log where strpos(audit_log::text, 'SECRET_OF_A') > 0
             or strpos(audit_log::text, 'ROTATED_OF_A') > 0), 0, 'a rotation is recorded without either secret');
select is((select count(*)::int from public.audit_log where action = 'endpoint.secret_rotated'
             and target_id = (select e.id::text from public.webhook_endpoints e where e.url = 'https://a.example.org/h')), 1, 'the rotation is recorded');
select lives_ok($$ select private.audit('a6000000-0000-4000-8000-0000000000aa', 'endpoint.recovered', 'endpoint',
                                       'x', null, '{"recovered": 3}') $$,
  'A''s admin records an operation on A');
select throws_ok($$ select private.audit('a6000000-0000-4000-8000-0000000000bb', 'endpoint.recovered', 'endpoint',
                                        'x', null, '{"recovered": 3}') $$,
  '42501', null, 'but not one on B');

-- Atomicity: an entry exists only with its change, and a change only with its entry ------------------------
savepoint change_then_fail;
update public.webhook_endpoints set description = 'rolled back' where id = (select e.id from public.webhook_endpoints e where e.url = 'https://a.example.org/h');
rollback to savepoint change_then_fail;
select is((select count(*)::int from public.audit_log where after ->> 'description' = 'rolled back'), 0,
  'a change that does not commit leaves no entry');
select tests.clear_act_as();
-- A recorder that fails fails the change with it.
alter table public.audit_log add constraint audit_test_refuses check (after ->> 'description' is distinct from 'refused') not valid;
select tests.act_as_config_api('a6000000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-0000000000aa');
select throws_ok($$ update public.webhook_endpoints set description = 'refused' where id = (select e.id from public.webhook_endpoints e where e.url = 'https://a.example.org/h') $$,
  '23514', null, 'when its entry cannot be written, the change is refused');
select is((select description from public.webhook_endpoints where id = (select e.id from public.webhook_endpoints e where e.url = 'https://a.example.org/h')), null,
  'and the endpoint is as it was');
select tests.clear_act_as();
alter table public.audit_log drop constraint audit_test_refuses;

-- Who reads ----------------------------------------------------------------------------------------------
select tests.act_as_config_api('a6000000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-0000000000aa');
select ok((select count(*) from public.audit_log) > 0
          and (select bool_and(organization_id = 'a6000000-0000-4000-8000-0000000000aa') from public.audit_log),
  'A''s admin reads A''s entries and only those');
select tests.act_as_config_api('a6000000-0000-4000-8000-000000000002', 'a6000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.audit_log), 0, 'A''s staff read none');
select tests.act_as_config_api('a6000000-0000-4000-8000-000000000003', 'a6000000-0000-4000-8000-0000000000bb');
select is((select count(*)::int from public.audit_log where organization_id = 'a6000000-0000-4000-8000-0000000000aa'), 0,
  'B''s admin reads none of A''s');
select tests.act_as_api_key('a6000000-0000-4000-8000-0000000000ce', 'a6000000-0000-4000-8000-0000000000aa');
select is((select count(*)::int from public.audit_log), 0, 'A''s API key reads none');
select tests.act_as('a6000000-0000-4000-8000-000000000001', 'a6000000-0000-4000-8000-0000000000aa');
select throws_ok($$ select count(*) from public.audit_log $$, '42501', null, 'the Data API''s role: permission denied');
select throws_ok($$ insert into public.audit_log (organization_id, action, actor_kind)
                    values ('a6000000-0000-4000-8000-0000000000aa', 'endpoint.created', 'admin') $$,
  '42501', null, 'nor can it write an entry');
select tests.clear_act_as();

-- Nobody alters an entry; only the retention job removes them, after a year ---------------------------------
select throws_ok($$ update public.audit_log set reason = 'forged' where organization_id = 'a6000000-0000-4000-8000-0000000000aa' $$,
  '42501', 'audit log entries cannot be changed or deleted', 'not even the table''s owner rewrites an entry');
select throws_ok($$ delete from public.audit_log where organization_id = 'a6000000-0000-4000-8000-0000000000aa' $$,
  '42501', 'audit log entries cannot be changed or deleted', 'or deletes one');
select set_config('audit.erasure', 'on', true);
select throws_ok($$ update public.audit_log set action = 'endpoint.deleted', reason = 'forged'
                    where organization_id = 'a6000000-0000-4000-8000-0000000000aa' $$,
  '42501', 'audit log entries cannot be changed or deleted', 'an erasure changes the e-mail fields and nothing else');
select set_config('audit.erasure', 'off', true);
alter table public.audit_log disable trigger audit_log_append_only;
update public.audit_log set created_at = now() - interval '366 days'
 where target_id = (select e.id::text from public.webhook_endpoints e where e.url = 'https://a.example.org/h') and action = 'endpoint.created';
alter table public.audit_log enable trigger audit_log_append_only;
select ok(private.audit_log_retention_batch(100000) >= 1, 'the retention batch removes entries older than a year');
select is((select count(*)::int from public.audit_log where target_id = (select e.id::text from public.webhook_endpoints e where e.url = 'https://a.example.org/h')
             and action = 'endpoint.created'), 0, 'the year-old entry is gone');
select ok((select count(*) from public.audit_log where target_id = (select e.id::text from public.webhook_endpoints e where e.url = 'https://a.example.org/h')) > 0,
  'the newer ones stay');
select is((select schedule || ' ' || command from cron.job where jobname = 'audit-log-retention'),
  '41 2 * * * call private.audit_log_retention_run()', 'pg_cron runs the retention daily');

-- An organization's deletion takes its entries with it (and records none of what it cascades to).
delete from public.organizations where id = 'a6000000-0000-4000-8000-0000000000bb';
select is((select count(*)::int from public.audit_log where organization_id = 'a6000000-0000-4000-8000-0000000000bb'), 0,
  'a deleted organization''s entries go with it');

select * from finish();
rollback;
