-- What Supabase's own setup leaves in a new project's database, before any migration of ours, played on
-- a throwaway cluster by its superuser `supabase_admin` (tests/helpers/hosted_db.ts): the platform
-- objects (scripts/supabase-platform.sql), pg_cron and Vault as the platform installs them with the
-- rights `postgres` gets on them, the default privileges `postgres`'s own objects get in `public`, and
-- then `postgres` as it is there: not a superuser (CREATEROLE, CREATEDB, REPLICATION, BYPASSRLS).
-- Not played: supautils (which lets postgres create the platform's privileged extensions: the ones
-- our migrations need are created here first) and pg-safeupdate (tests/api_role_guard_test.ts).
\set ON_ERROR_STOP on
\ir ../../scripts/supabase-platform.sql

-- Objects postgres creates in public are the Data API roles' as well (Supabase's default privileges).
alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;
grant all on schema public to postgres;
grant all on schema extensions to postgres with grant option;

-- Supabase Auth's schema: postgres may read and reference it.
grant usage on schema auth to postgres;
grant all on all tables in schema auth to postgres;
grant all on all sequences in schema auth to postgres;
grant all on all routines in schema auth to postgres;

-- pg_cron, as the platform's Cron module enables it: owned by the superuser, usable by postgres.
create extension if not exists pg_cron with schema pg_catalog;
grant usage on schema cron to postgres with grant option;
grant all on all tables in schema cron to postgres with grant option;
grant all on all sequences in schema cron to postgres with grant option;
grant all on all routines in schema cron to postgres with grant option;

-- pg_trgm (Webhook Logs' content search), which supautils lets postgres create on a project: created here
-- by the superuser, as supautils is not played.
create extension if not exists pg_trgm with schema extensions;

-- Vault, played by its interface (supabase_vault is not packaged here): vault.secrets with the names the
-- CLI's `db push` looks up, vault.create_secret / update_secret, and the decrypted_secrets view the
-- migrations read. No encryption: a test database.
create schema vault;
create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text unique,
  description text not null default '',
  secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create view vault.decrypted_secrets as
  select id, name, description, secret, secret as decrypted_secret, created_at, updated_at from vault.secrets;
create function vault.create_secret(new_secret text, new_name text default null, new_description text default '')
returns uuid language sql security definer set search_path = '' as $$
  insert into vault.secrets (secret, name, description) values (new_secret, new_name, new_description) returning id
$$;
create function vault.update_secret(secret_id uuid, new_secret text default null, new_name text default null,
                                    new_description text default null)
returns void language sql security definer set search_path = '' as $$
  update vault.secrets set secret = coalesce(new_secret, secret), name = coalesce(new_name, name),
         description = coalesce(new_description, description), updated_at = now()
   where id = secret_id
$$;
revoke all on schema vault from public;
revoke all on all tables in schema vault from public;
revoke all on all routines in schema vault from public;
grant usage on schema vault to postgres with grant option;
grant select, delete on vault.secrets, vault.decrypted_secrets to postgres with grant option;
grant execute on all routines in schema vault to postgres with grant option;

-- postgres may become the Data API's roles, as Supabase's own migration grants
-- (20230201083204_grant_auth_roles_to_postgres): what `set role authenticated` in the SQL editor and
-- the pgTAP suite's tests.act_as (run by `supabase test db --linked` as postgres) rely on.
grant anon, authenticated, service_role to postgres;

alter role postgres nosuperuser createrole createdb replication bypassrls;
