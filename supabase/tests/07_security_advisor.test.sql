-- Supabase's Security Advisor, on our schema. Supabase Studio lints every project with splinter
-- (supabase/splinter, lints/00NN_*.sql); these checks state the same rules over the same catalogue, so a
-- migration that would raise an ERROR, or a WARN of the security category, fails here first. Each rule
-- names its lint. The exceptions, each justified, are listed in docs/two-doors.md#supabases-security-advisor;
-- they are written out here so that a new one fails until it is justified there too.
begin;
select no_plan();

-- The schemas PostgREST serves (supabase/config.toml [api] schemas), and the schemas that are ours: every
-- schema but the platform's (the ones splinter leaves out) and this suite's own fixtures.
create temp view exposed (nspname) as values ('public'), ('graphql_public');
create temp view ours as
  select n.oid, n.nspname from pg_namespace n
  where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'auth', 'storage', 'vault', 'extensions',
                          'cron', 'net', 'graphql', 'graphql_public', 'realtime', 'supabase_functions',
                          'supabase_migrations', 'pgsodium', 'pgsodium_masks', 'pgbouncer', 'pgmq', 'pgtle',
                          'repack', 'topology', 'tiger', 'tests', 'tenancy_probe')
    and n.nspname !~ '^pg_(toast_)?temp_' and n.nspname !~ '^_timescaledb';
-- Objects a CREATE EXTENSION made are the extension's, not ours (splinter skips them too).
create temp view extension_owned (objid) as select objid from pg_depend where deptype = 'e';
-- The user roles a request may take: PostgREST's two, and the configuration API's (which splinter does
-- not know about; it is held to the same rules).
create temp view user_roles (rolname) as values ('anon'), ('authenticated'), ('config_api');

select ok((select count(*) from ours where nspname in ('public', 'private')) = 2,
  'the checks below see our schemas (they are not vacuous)');

-- ERROR ----------------------------------------------------------------------------------------------------

-- 0013 rls_disabled_in_public: every table a user role can read in an exposed schema has RLS on.
select is(array(
  select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p') and n.nspname in (select nspname from exposed) and not c.relrowsecurity
    and (has_table_privilege('anon', c.oid, 'SELECT') or has_table_privilege('authenticated', c.oid, 'SELECT'))
  order by 1), array[]::text[], '0013 rls_disabled_in_public: no exposed table without row-level security');

-- 0007 policy_exists_rls_disabled: no table of ours has policies that row-level security does not apply.
select is(array(
  select distinct format('%I.%I', n.nspname, c.relname) from pg_policy p join pg_class c on c.oid = p.polrelid
  join pg_namespace n on n.oid = c.relnamespace
  where n.oid in (select oid from ours) and not c.relrowsecurity order by 1),
  array[]::text[], '0007 policy_exists_rls_disabled: no policy on a table with row-level security off');

-- 0010 security_definer_view: every view a user role can read in an exposed schema runs as its reader.
select is(array(
  select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind = 'v' and n.nspname in (select nspname from exposed)
    and exists (select 1 from user_roles r where has_table_privilege(r.rolname, c.oid, 'SELECT'))
    and not coalesce(c.reloptions, '{}') && array['security_invoker=1', 'security_invoker=true', 'security_invoker=yes',
                                                   'security_invoker=on']
  order by 1), array[]::text[], '0010 security_definer_view: every exposed view is security_invoker');
select ok(exists (select 1 from pg_class where oid = 'public.donation_payment_webhook_log'::regclass
                  and reloptions && array['security_invoker=true']),
  'control: donation_payment_webhook_log is a view the check above looks at');

-- 0002 auth_users_exposed: no view or materialized view a user role can read depends on auth.users.
select is(array(
  select distinct format('%I.%I', n.nspname, c.relname)
  from pg_depend d join pg_rewrite w on w.oid = d.objid join pg_class c on c.oid = w.ev_class
  join pg_namespace n on n.oid = c.relnamespace
  where d.refobjid = 'auth.users'::regclass and c.oid <> 'auth.users'::regclass
    and exists (select 1 from user_roles r where has_table_privilege(r.rolname, c.oid, 'SELECT'))
  order by 1), array[]::text[], '0002 auth_users_exposed: no readable view shows auth.users');

-- 0015 rls_references_user_metadata: no policy trusts user_metadata, which users edit themselves.
select is(array(
  select format('%I.%I: %s', schemaname, tablename, policyname) from pg_policies
  where schemaname in (select nspname from ours)
    and (coalesce(qual, '') ~* 'user_metadata' or coalesce(with_check, '') ~* 'user_metadata') order by 1),
  array[]::text[], '0015 rls_references_user_metadata: no policy reads user_metadata');

-- 0021 fkey_to_auth_unique: foreign keys into auth reference primary keys only (auth's other unique
-- constraints may change under us).
select is(array(
  select format('%s: %s', c.conrelid::regclass, c.conname) from pg_constraint c join pg_index i on i.indexrelid = c.conindid
  where c.contype = 'f' and c.confrelid::regclass::text like 'auth.%' and i.indisunique and not i.indisprimary order by 1),
  array[]::text[], '0021 fkey_to_auth_unique: no foreign key to a non-primary unique key of auth');

-- 0019 insecure_queue_exposed_in_api: no queue table of pgmq is served without row-level security.
select is(array(
  select c.relname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'pgmq' and c.relname like 'q\_%' and not c.relrowsecurity
    and exists (select 1 from user_roles r where has_table_privilege(r.rolname, c.oid, 'SELECT')) order by 1),
  array[]::text[], '0019 insecure_queue_exposed_in_api: no exposed queue');

-- 0023 sensitive_columns_exposed, and our stronger rule: a secret is readable by no user role at all,
-- row-level security or not (docs/two-doors.md#two-doors-one-rule). Secrets by name: splinter's
-- credential names, and ours (signing secrets, provider secrets, key and token digests).
create temp view secret_columns as
  select n.nspname, c.relname, a.attname, c.oid as relid, a.attnum
  from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
  where a.attnum > 0 and not a.attisdropped and c.relkind in ('r', 'p', 'v', 'm', 'f')
    and n.nspname in (select nspname from ours)
    and a.attname ~* '^(secret|password|passwd|passphrase|token|api_key|apikey|private_key|jwt|access_token|refresh_token|.+_secret|.+_password|.+_token|.+_hash|.+_token_sha256)$';
select is(array(
  select format('%I.%I.%I: %s', s.nspname, s.relname, s.attname, r.rolname)
  from secret_columns s cross join user_roles r
  where has_column_privilege(r.rolname, s.relid, s.attnum, 'SELECT') order by 1),
  array[]::text[], '0023 sensitive_columns_exposed (and ours): no user role reads a secret column, through either door');
select ok((select count(*) from secret_columns
           where format('%s.%s', relname, attname) in ('webhook_endpoints.secret', 'webhook_endpoints.previous_secret',
             'organization_settings.webhook_secret', 'organization_settings.payments_webhook_secret',
             'organization_api_keys.key_hash', 'organization_invitations.token_hash',
             'messaging_account_secrets.app_secret', 'messaging_account_secrets.verify_token')) = 8,
  'control: the secret columns we know of are among those checked');
select is(array(
  select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('r', 'p') and n.nspname in (select nspname from exposed) and not c.relrowsecurity
    and exists (select 1 from secret_columns s where s.relid = c.oid) order by 1),
  array[]::text[], '0023 sensitive_columns_exposed: no exposed table with a secret column has row-level security off');

-- WARN, security -------------------------------------------------------------------------------------------

-- 0028 anon_ / 0029 authenticated_security_definer_function_executable: no function in an exposed schema
-- runs as its owner for a caller of the Data API. (The configuration API's role may: its functions
-- check who calls them, and PostgREST cannot become it.)
select is(array(
  select format('%s: %s', p.oid::regprocedure, r.rolname)
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace cross join (values ('anon'), ('authenticated')) r (rolname)
  where p.prosecdef and n.nspname in (select nspname from exposed) and has_function_privilege(r.rolname, p.oid, 'EXECUTE')
  order by 1), array[]::text[], '0028/0029: no security-definer function of an exposed schema is executable by anon or authenticated');

-- 0011 function_search_path_mutable: every function of ours fixes its search_path. The exceptions: the
-- procedures that commit between batches (a SET clause forbids COMMIT); they name every object by schema
-- and only the server calls them.
select is(array(
  select p.oid::regprocedure::text from pg_proc p
  where p.pronamespace in (select oid from ours) and p.oid not in (select objid from extension_owned)
    and not exists (select 1 from unnest(coalesce(p.proconfig, '{}')) c where c like 'search_path=%')
  order by 1),
  array['private.erasure_run(integer,interval)', 'private.retention_run(integer,interval,numeric,interval)',
        'private.webhook_bulk_retry_run(integer,interval)', 'private.webhook_search_index_run(interval)'],
  '0011 function_search_path_mutable: every function sets its search_path, but the four procedures that commit');
select is(array(
  select p.oid::regprocedure::text from pg_proc p
  where p.oid in ('private.erasure_run(integer,interval)'::regprocedure,
                  'private.retention_run(integer,interval,numeric,interval)'::regprocedure,
                  'private.webhook_search_index_run(interval)'::regprocedure,
                  'private.webhook_bulk_retry_run(integer,interval)'::regprocedure)
    and exists (select 1 from user_roles r where has_function_privilege(r.rolname, p.oid, 'EXECUTE'))),
  array[]::text[], 'and no user role may call those four');

-- 0014 extension_in_public: no extension lives in public.
select is(array(select extname::text from pg_extension where extnamespace = 'public'::regnamespace and extname <> 'plpgsql'
                order by 1), array[]::text[], '0014 extension_in_public: extensions live in their own schemas');

-- 0016 materialized_view_in_api / 0017 foreign_table_in_api: none a user role can read in an exposed
-- schema (neither has row-level security).
select is(array(
  select format('%I.%I', n.nspname, c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where c.relkind in ('m', 'f') and n.nspname in (select nspname from exposed)
    and exists (select 1 from user_roles r where has_table_privilege(r.rolname, c.oid, 'SELECT')) order by 1),
  array[]::text[], '0016/0017: no materialized view or foreign table is served');

-- 0018 unsupported_reg_types: no column of ours has a reg* type that pg_upgrade cannot carry.
select is(array(
  select format('%s.%I', a.attrelid::regclass, a.attname) from pg_attribute a join pg_class c on c.oid = a.attrelid
  where c.relnamespace in (select oid from ours) and a.attnum > 0 and not a.attisdropped
    and a.atttypid in ('regcollation'::regtype, 'regconfig'::regtype, 'regdictionary'::regtype, 'regnamespace'::regtype,
                       'regoper'::regtype, 'regoperator'::regtype, 'regproc'::regtype, 'regprocedure'::regtype)
  order by 1), array[]::text[], '0018 unsupported_reg_types: no reg* column');

-- 0022 extension_versions_outdated: the extensions our migrations create are at their default version.
select is(array(
  select format('%s %s (default %s)', e.name, e.installed_version, e.default_version) from pg_available_extensions e
  where e.name in ('pgcrypto', 'uuid-ossp', 'pg_net') and e.installed_version is distinct from e.default_version
    and e.installed_version is not null order by 1),
  array[]::text[], '0022 extension_versions_outdated: pgcrypto, uuid-ossp and pg_net at their default versions');

-- 0024 rls_policy_always_true: no policy for a user role lets every row be written (or, for update and
-- delete, reached).
select is(array(
  select format('%I.%I: %s', schemaname, tablename, policyname) from pg_policies
  where schemaname in (select nspname from ours) and permissive = 'PERMISSIVE'
    and roles && array['public', 'anon', 'authenticated', 'config_api']::name[]
    and ((cmd in ('UPDATE', 'DELETE', 'ALL') and (qual is null or regexp_replace(lower(qual), '[\s()]', '', 'g') in ('true', '1=1')))
         or (cmd in ('INSERT', 'UPDATE', 'ALL') and regexp_replace(lower(coalesce(with_check, '')), '[\s()]', '', 'g') in ('true', '1=1'))
         or (cmd = 'INSERT' and with_check is null))
  order by 1), array[]::text[], '0024 rls_policy_always_true: no user policy writes every row');

-- 0026 pg_graphql_anon_table_exposed: anon reads no column of any relation of ours.
select is(array(
  select distinct format('%I.%I', n.nspname, c.relname)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
  where c.relkind in ('r', 'v', 'm', 'f') and n.oid in (select oid from ours) and a.attnum > 0 and not a.attisdropped
    and has_column_privilege('anon', c.oid, a.attnum, 'SELECT') order by 1),
  array[]::text[], '0026 pg_graphql_anon_table_exposed: nothing of ours is readable before sign-in');

-- 0027 pg_graphql_authenticated_table_exposed: what a signed-in browser may read is exactly the Data
-- API's list (docs/two-doors.md#two-doors-one-rule): the day-to-day records the wider church app
-- reads and writes, a user's own memberships, organizations and flags. Each is a justified exception to
-- this lint (GraphQL shows signed-in users these tables' shapes; row-level security decides the rows).
select is(array(
  select distinct format('%I.%I', n.nspname, c.relname)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
  where c.relkind in ('r', 'v', 'm', 'f') and n.oid in (select oid from ours) and a.attnum > 0 and not a.attisdropped
    and has_column_privilege('authenticated', c.oid, a.attnum, 'SELECT') order by 1),
  array['public.attendance', 'public.donation_refunds', 'public.donations', 'public.members', 'public.messaging_accounts',
        'public.organizations', 'public.platform_user_flags', 'public.profiles', 'public.recurring_donations',
        'public.user_active_organization', 'public.whatsapp_conversations', 'public.whatsapp_message_receipts',
        'public.whatsapp_messages', 'public.workflow_runs', 'public.workflows'],
  '0027 pg_graphql_authenticated_table_exposed: a signed-in browser reads exactly the Data API''s tables');
-- And what it may write, likewise.
select is(array(
  select format('%I.%I %s', n.nspname, c.relname, lower(p.priv))
  from pg_class c join pg_namespace n on n.oid = c.relnamespace cross join (values ('INSERT'), ('UPDATE'), ('DELETE')) p (priv)
  where c.relkind in ('r', 'v') and n.oid in (select oid from ours)
    and (has_table_privilege('authenticated', c.oid, p.priv)
         or (p.priv <> 'DELETE' and has_any_column_privilege('authenticated', c.oid, p.priv)))
  order by 1),
  array(select 'public.' || t || ' ' || p from unnest(array['attendance', 'donations', 'members', 'recurring_donations',
                                                            'whatsapp_conversations', 'whatsapp_messages', 'workflow_runs',
                                                            'workflows']) t,
                                              unnest(array['delete', 'insert', 'update']) p
        union all select 'public.user_active_organization ' || p from unnest(array['insert', 'update']) p
        order by 1),
  'a signed-in browser writes only the day-to-day records (and its own active organization)');
-- And the functions of ours in an exposed schema it may call: the contract set_active_organization, alone.
-- (Supabase's own graphql_public.graphql is callable by signed-in users on every project, with or without
-- pg_graphql: the platform's, not ours; the hosted-like lane has it.)
select is(array(
  select p.oid::regprocedure::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where n.nspname in (select nspname from exposed) and n.oid in (select oid from ours)
    and p.oid not in (select objid from extension_owned)
    and has_function_privilege('authenticated', p.oid, 'EXECUTE') order by 1),
  array['set_active_organization(uuid)'],
  'a signed-in browser calls one function of ours: set_active_organization');

-- WARN, performance (cheap to hold; not required) ---------------------------------------------------------

-- 0003 auth_rls_initplan: policies read the caller once per statement, never per row.
select is(array(
  select format('%I.%I: %s', schemaname, tablename, policyname) from pg_policies
  where schemaname in (select nspname from ours)
    and (coalesce(qual, '') || ' ' || coalesce(with_check, '')) ~* '(auth\.(uid|jwt|role|email)|current_setting)\('
    and not (coalesce(qual, '') || ' ' || coalesce(with_check, '')) ~* 'select (auth\.(uid|jwt|role|email)|current_setting)\('
  order by 1), array[]::text[], '0003 auth_rls_initplan: no policy calls auth.* or current_setting() per row');

-- 0006 multiple_permissive_policies: one permissive policy per table, role and command.
select is(array(
  select format('%s %s %s', c.oid::regclass, r.rolname, x.cmd)
  from pg_policy p join pg_class c on c.oid = p.polrelid join pg_roles r on r.oid = any (p.polroles)
  cross join lateral unnest(case p.polcmd when '*' then array['r', 'a', 'w', 'd'] else array[p.polcmd::text] end) x (cmd)
  where c.relnamespace in (select oid from ours) and p.polpermissive
  group by c.oid, r.rolname, x.cmd having count(*) > 1 order by 1),
  array[]::text[], '0006 multiple_permissive_policies: at most one permissive policy per table, role and command');

-- 0009 duplicate_index: no two identical indexes.
select is(array(
  select format('%s: %s', i.indrelid::regclass, string_agg(i.indexrelid::regclass::text, ', ' order by i.indexrelid::regclass::text))
  from pg_index i join pg_class c on c.oid = i.indrelid
  where c.relnamespace in (select oid from ours)
  group by i.indrelid, i.indkey::text, i.indclass::text, coalesce(pg_get_expr(i.indexprs, i.indrelid), ''),
           coalesce(pg_get_expr(i.indpred, i.indrelid), ''), i.indisunique
  having count(*) > 1 order by 1),
  array[]::text[], '0009 duplicate_index: no duplicate indexes');

select * from finish();
rollback;
