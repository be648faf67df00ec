-- Privileges row-level security does not cover, and revocation that cannot be undone.
--   * TRUNCATE skips RLS entirely, REFERENCES lets a foreign key probe another tenant's keys, TRIGGER
--     lets code run on other tenants' writes: no user role holds any of them on any table of an
--     exposed schema, today's tables or tables added later.
--   * A revoked API key stays revoked, whoever asks through a user role.
begin;
select no_plan();

-- Each user role with each of these privileges, and every table of ours a user role holds one on.
create temp view forbidden (rolname, priv) as
  select * from (values ('anon'), ('authenticated')) r cross join (values ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) p;
create temp view held as
  select format('%s.%s: %s %s', n.nspname, c.relname, f.rolname, f.priv) as grant_held, n.nspname,
         has_schema_privilege(f.rolname, n.oid, 'USAGE') as usable,
         (n.nspowner = current_user::regrole
          and not exists (select from pg_depend d where d.classid = 'pg_namespace'::regclass
                          and d.objid = n.oid and d.deptype = 'e'))
         or n.nspname = 'public' as ours
  from pg_class c join pg_namespace n on n.oid = c.relnamespace cross join forbidden f
  -- (temporary schemas hold this session's pgTAP bookkeeping, which pgTAP grants to public; schemas
  -- owned by another role are the platform's own, e.g. storage, net, supabase_functions on hosted, and so
  -- is a schema an extension made, whoever created the extension: pg_net grants its tables in `net` to
  -- PUBLIC, and where postgres is a superuser that created pg_net, postgres owns `net`)
  where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_(toast_)?temp_'
    and c.relkind in ('r', 'p', 'v', 'm', 'f') and has_table_privilege(f.rolname, c.oid, f.priv);

-- Every table of every schema PostgREST exposes (supabase/config.toml [api] schemas), for each user role;
-- then, wider, of every schema a user role can use at all (private, extensions, cron, auth, ...).
select is(array(select grant_held from held where nspname in ('public', 'graphql_public') order by 1), array[]::text[],
  'no user role may truncate, reference or create triggers on any table in an exposed schema');
select is(array(select grant_held from held where usable and ours order by 1), array[]::text[],
  'nor on any table of any other schema of ours a user role can use');

select ok(
  (select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname = 'public' and c.relkind = 'r') >= 20,
  'the enumeration above sees the project''s tables (it is not vacuous)');

-- A table created later by the role that runs migrations reaches neither door until its migration
-- grants it: Supabase's default grants to anon and authenticated are taken back. The server's role
-- keeps its own.
create table public.added_later_probe (id int primary key);
select is(array(select format('%s %s', rolname, priv) from forbidden
                where has_table_privilege(rolname, 'public.added_later_probe', priv) order by 1),
  array[]::text[], 'a table added later grants no TRUNCATE, REFERENCES or TRIGGER to user roles (default privileges)');
select is(array(select r from unnest(array['anon', 'authenticated', 'config_api']) r
                where has_table_privilege(r, 'public.added_later_probe', 'SELECT, INSERT, UPDATE, DELETE')),
  array[]::text[], 'a table added later is granted to no user role until its migration says so');
select ok(has_table_privilege('service_role', 'public.added_later_probe', 'SELECT'),
  'control: the server''s role keeps its default grants');
drop table public.added_later_probe;

-- The attack as performed: a staff member with direct SQL truncates tables of every organization.
select tests.create_organization('Truncate Church', 'd1000000-0000-4000-8000-000000000000');
select tests.create_organization('Other Church', 'e1000000-0000-4000-8000-000000000000');
select tests.add_member(tests.create_user('staff-trunc@example.org', 'd4000000-0000-4000-8000-000000000001'), 'd1000000-0000-4000-8000-000000000000', 'staff');
select tests.add_member(tests.create_user('admin-keys@example.org', 'd4000000-0000-4000-8000-000000000002'), 'd1000000-0000-4000-8000-000000000000', 'admin');
insert into public.members (organization_id, first_name) values ('e1000000-0000-4000-8000-000000000000', 'Victim');
insert into public.donations (organization_id, amount_minor, currency)
  values ('e1000000-0000-4000-8000-000000000000', 100, 'GBP');

select tests.act_as('d4000000-0000-4000-8000-000000000001', 'd1000000-0000-4000-8000-000000000000');
select throws_ok($$ truncate public.donations, public.donation_refunds, public.platform_user_flags $$,
  '42501', null, 'staff cannot truncate donations, donation_refunds, platform_user_flags');
select throws_ok($$ truncate public.members cascade $$, '42501', null, 'staff cannot truncate members');
select throws_ok($$ create table public.fk_probe (m uuid references public.members (id)) $$,
  '42501', null, 'staff cannot create a table referencing another tenant''s keys');
select tests.clear_act_as();
select is((select count(*)::int from public.donations where organization_id = 'e1000000-0000-4000-8000-000000000000'), 1,
  'the other organization''s donations are still there');

-- Revocation is final. The admin revokes a key, then tries to restore it.
insert into public.organization_api_keys (id, organization_id, name, key_prefix, key_hash) values
  ('d5000000-0000-4000-8000-000000000001', 'd1000000-0000-4000-8000-000000000000', 'Zapier', 'orgkey_abcdefg',
   encode(sha256('revocation-is-final'::bytea), 'hex'));
select tests.act_as_config_api('d4000000-0000-4000-8000-000000000002', 'd1000000-0000-4000-8000-000000000000');
select lives_ok($$ update public.organization_api_keys set revoked_at = '1999-01-01' where id = 'd5000000-0000-4000-8000-000000000001' $$,
  'control: the admin revokes the key');
select ok((select revoked_at > now() - interval '1 minute' from public.organization_api_keys where id = 'd5000000-0000-4000-8000-000000000001'),
  'revoked_at is the server''s time, not the one the admin sent');
select throws_ok($$ update public.organization_api_keys set revoked_at = null where id = 'd5000000-0000-4000-8000-000000000001' $$,
  '42501', null, 'the admin cannot un-revoke the key');
select throws_ok($$ update public.organization_api_keys set revoked_at = now() + interval '1 year' where id = 'd5000000-0000-4000-8000-000000000001' $$,
  '42501', null, 'the admin cannot move the revocation time');
select tests.clear_act_as();
select is(
  (select count(*)::int from private.authenticate_api_key(encode(sha256('revocation-is-final'::bytea), 'hex'))), 0,
  'the revoked key does not authenticate');

select * from finish();
rollback;
