-- Custom request headers (20261207170000_webhook_custom_headers.sql): the values are out of every user
-- role's reach (the Data API's and the configuration API's), the endpoint row carries names and hints
-- only, the one setter is the configuration API's and keeps to the endpoint rule (the organization's
-- admins and API keys), the table refuses what the rule refuses, and the claim hands the values to the
-- dispatcher for an endpoint that has any.
begin;
select no_plan();
select tests.hold_existing_organizations();

select tests.create_tenants('ca000000-0000-4000-8000-00000000000a', 'ca000000-0000-4000-8000-00000000000b',
                           'ca100000-0000-4000-8000-000000000001', 'ca100000-0000-4000-8000-000000000002',
                           'ca100000-0000-4000-8000-000000000003');
select tests.create_endpoint('ca000000-0000-4000-8000-00000000000a', 'ca200000-0000-4000-8000-000000000001');
select tests.create_endpoint('ca000000-0000-4000-8000-00000000000a', 'ca200000-0000-4000-8000-000000000002');
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash) values
  ('ca300000-0000-4000-8000-000000000001', 'ca000000-0000-4000-8000-00000000000a', 'Zapier', 'orgkey_ca',
   encode(sha256('custom-headers-key'::bytea), 'hex'));

-- Grants ------------------------------------------------------------------------------------------------
select is(array(select format('%s %s', r, p)
                from unnest(array['anon', 'authenticated', 'config_api', 'service_role']) r,
                     unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) p
                where has_table_privilege(r, 'private.webhook_endpoint_headers', p)),
  array[]::text[], 'no user role (nor the server''s API role) holds any privilege on the stored values');
select ok(has_column_privilege('config_api', 'public.webhook_endpoints', 'custom_headers', 'SELECT'),
  'the configuration API reads the names and hints');
select is(array(select r || ' ' || p from unnest(array['anon', 'authenticated', 'config_api']) r,
                                          unnest(array['INSERT', 'UPDATE']) p
                where has_column_privilege(r, 'public.webhook_endpoints', 'custom_headers', p)),
  array[]::text[], 'no user role writes the names and hints itself');
select is(array(select r from unnest(array['anon', 'authenticated']) r
                where has_column_privilege(r, 'public.webhook_endpoints', 'custom_headers', 'SELECT')),
  array[]::text[], 'the Data API''s roles do not read them at all');
select is(array(select r from unnest(array['anon', 'authenticated']) r
                where has_function_privilege(r, 'private.webhook_set_custom_headers(uuid, jsonb)', 'EXECUTE')),
  array[]::text[], 'the Data API''s roles cannot call the setter');

-- Writes, as the configuration API makes them -------------------------------------------------------------
select tests.act_as_config_api('ca100000-0000-4000-8000-000000000001', 'ca000000-0000-4000-8000-00000000000a');
select is(private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001',
            '[{"name":"Authorization","value":"Bearer abcdefgh12345678"},{"name":"X-Tenant","value":"grace"}]'),
          '[{"name":"Authorization","value_hint":"…5678"},{"name":"X-Tenant","value_hint":"…"}]'::jsonb,
  'the admin sets them; the answer is names and hints');
select is((select custom_headers from public.webhook_endpoints where id = 'ca200000-0000-4000-8000-000000000001'),
  '[{"name":"Authorization","value_hint":"…5678"},{"name":"X-Tenant","value_hint":"…"}]'::jsonb,
  'the endpoint row (what any before/after of it shows) holds names and hints, never a value');
select throws_ok($$ select headers from private.webhook_endpoint_headers $$, '42501', null,
  'the admin cannot read the values back through the configuration API''s role');
select throws_ok($$ update public.webhook_endpoints set custom_headers = '[]' $$, '42501', null,
  'nor write the row''s list around the setter');
select is(private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001', '[{"name":"authorization"}]'),
  '[{"name":"authorization","value_hint":"…5678"}]'::jsonb, 'an entry without a value keeps the stored one');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001',
                     '[{"name":"X-New"}]') $$, '22023', null, 'keeping a value never stored is refused');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001',
                     '[{"name":"X-A","value":"a\r\nInjected: 1"}]') $$, '22023', null,
  'the setter refuses a line break in a value');
select tests.clear_act_as();

select tests.act_as_api_key('ca300000-0000-4000-8000-000000000001', 'ca000000-0000-4000-8000-00000000000a');
select lives_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000002',
                    '[{"name":"X-Key","value":"key-for-zapier-0001"}]') $$,
  'the organization''s API key may, as it may every endpoint write');
select tests.clear_act_as();

select tests.act_as_config_api('ca100000-0000-4000-8000-000000000002', 'ca000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001', '[]') $$,
  '42501', null, 'staff cannot');
select tests.clear_act_as();
select tests.act_as_config_api('ca100000-0000-4000-8000-000000000003', 'ca000000-0000-4000-8000-00000000000b');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001', '[]') $$,
  'P0002', null, 'another organization''s admin finds no such endpoint');
select tests.clear_act_as();

-- A removed admin, their token still valid.
delete from public.profiles where user_id = 'ca100000-0000-4000-8000-000000000001'
  and organization_id = 'ca000000-0000-4000-8000-00000000000a';
select tests.act_as_config_api('ca100000-0000-4000-8000-000000000001', 'ca000000-0000-4000-8000-00000000000a');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001', '[]') $$,
  '42501', null, 'a removed admin cannot');
select tests.clear_act_as();

-- The Data API: a signed-in admin's token, as PostgREST runs it.
select tests.add_member('ca100000-0000-4000-8000-000000000003', 'ca000000-0000-4000-8000-00000000000a', 'admin');
select tests.act_as('ca100000-0000-4000-8000-000000000003', 'ca000000-0000-4000-8000-00000000000a');
select throws_ok($$ select * from private.webhook_endpoint_headers $$, '42501', null,
  'the Data API cannot read the values');
select throws_ok($$ select custom_headers from public.webhook_endpoints $$, '42501', null,
  'nor the endpoint rows');
select throws_ok($$ select private.webhook_set_custom_headers('ca200000-0000-4000-8000-000000000001', '[]') $$,
  '42501', null, 'nor call the setter');
select tests.clear_act_as();
select tests.act_as_anon();
select throws_ok($$ select * from private.webhook_endpoint_headers $$, '42501', null, 'anonymous: nothing');
select tests.clear_act_as();

select is((select headers from private.webhook_endpoint_headers
           where endpoint_id = 'ca200000-0000-4000-8000-000000000001'),
  '[{"name":"authorization","value":"Bearer abcdefgh12345678"}]'::jsonb, 'the refused attempts changed nothing');

-- The table's own rule, whoever writes --------------------------------------------------------------------
select throws_ok(format($$ insert into private.webhook_endpoint_headers values ('ca200000-0000-4000-8000-000000000002', %L)
                         on conflict (endpoint_id) do update set headers = excluded.headers $$, h),
                 '23514', null, 'refused: ' || why)
from (values
  ('[{"name":"X-A","value":"a\nb"}]', 'a line feed'),
  ('[{"name":"X-A","value":"a\rb"}]', 'a carriage return'),
  ('[{"name":"Connection","value":"close"}]', 'a hop-by-hop header'),
  ('[{"name":"Proxy-Authorization","value":"x"}]', 'a proxy header'),
  ('[{"name":"Webhook-Signature","value":"x"}]', 'a webhook-* header'),
  ('[{"name":"Content-Type","value":"x"}]', 'content-type'),
  ('[{"name":"Bad Name","value":"x"}]', 'a name that is not a token'),
  ('[{"name":"X-A","value":"a"},{"name":"x-a","value":"b"}]', 'a name twice'),
  ('[{"name":"X-A","value":" padded"}]', 'a space at an end'),
  ('[{"name":"X-A","value":"' || repeat('x', 1025) || '"}]', 'a value of 1025 characters'),
  ((select jsonb_agg(jsonb_build_object('name', 'X-' || g, 'value', 'v'))::text from generate_series(1, 11) g), '11 headers'),
  ('[]', 'an empty set (no row instead)')
) as t(h, why);
select lives_ok($$ update private.webhook_endpoint_headers
                   set headers = jsonb_build_array(jsonb_build_object('name', 'X-A', 'value', repeat('x', 1024)))
                   where endpoint_id = 'ca200000-0000-4000-8000-000000000002' $$, 'a value of 1024 characters is kept');

-- The claim ----------------------------------------------------------------------------------------------
select tests.create_due_deliveries('ca000000-0000-4000-8000-00000000000a', 'ca200000-0000-4000-8000-000000000001');
select tests.create_due_deliveries('ca000000-0000-4000-8000-00000000000a', 'ca200000-0000-4000-8000-000000000002');
insert into public.webhook_endpoints (id, organization_id, url, events) values
  ('ca200000-0000-4000-8000-000000000003', 'ca000000-0000-4000-8000-00000000000a', 'https://hooks.example.org/none',
   array['member.created']);
select tests.create_due_deliveries('ca000000-0000-4000-8000-00000000000a', 'ca200000-0000-4000-8000-000000000003');
create temp table claimed as select endpoint_id, headers from private.webhook_claim(10, 1048576, 16, 64, 60);
select is((select headers::jsonb from claimed where endpoint_id = 'ca200000-0000-4000-8000-000000000001'),
  '[{"name":"authorization","value":"Bearer abcdefgh12345678"}]'::jsonb, 'the claim hands over the values');
select is((select headers from claimed where endpoint_id = 'ca200000-0000-4000-8000-000000000003'), null,
  'and nothing for an endpoint without custom headers');

-- Deleting the endpoint deletes its values.
delete from public.webhook_endpoints where id = 'ca200000-0000-4000-8000-000000000001';
select is((select count(*)::int from private.webhook_endpoint_headers
           where endpoint_id = 'ca200000-0000-4000-8000-000000000001'), 0, 'an endpoint''s values go with it');

select * from finish();
rollback;
