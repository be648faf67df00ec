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

-- Vault as supabase_vault 0.3.1 installs it (sql/supabase_vault--0.3.0.sql; 0.3.1 changed no SQL), played
-- in SQL as supabase_vault is not packaged here: the same table, view and function signatures
-- (vault.create_secret(new_secret, new_name, new_description, new_key_id) and vault.update_secret(
-- secret_id, new_secret, new_name, new_description, new_key_id), the last arguments defaulted), secrets
-- stored encrypted and bound to their id, and decrypted by the view. Its C functions are played with
-- pgcrypto under a root key only this superuser reads; without one they fail as the real ones do where
-- the server has no key ("pgsodium_derive: no server secret key defined"), so
-- scripts/bench/hosted_dispatch.sh gives its cluster one.
create schema vault;
create table vault._root_key (key bytea not null);
insert into vault._root_key values (extensions.gen_random_bytes(32));
revoke all on vault._root_key from public;
create function vault._derived_key(additional bytea, context bytea) returns bytea
language plpgsql stable security definer set search_path = '' as $$
declare
  root bytea := (select key from vault._root_key limit 1);
begin
  if root is null then
    raise exception 'pgsodium_derive: no server secret key defined';
  end if;
  return extensions.hmac(coalesce(context, '') || '|' || coalesce(additional, ''), root, 'sha256');
end $$;
create function vault._crypto_aead_det_encrypt(message bytea, additional bytea, key_id bigint,
                                               context bytea = 'pgsodium', nonce bytea = null)
returns bytea language sql immutable security definer set search_path = '' as $$
  select extensions.encrypt_iv(message, vault._derived_key(additional, context), coalesce(nonce, '\x00'::bytea), 'aes')
$$;
create function vault._crypto_aead_det_decrypt(message bytea, additional bytea, key_id bigint,
                                               context bytea = 'pgsodium', nonce bytea = null)
returns bytea language sql immutable security definer set search_path = '' as $$
  select extensions.decrypt_iv(message, vault._derived_key(additional, context), coalesce(nonce, '\x00'::bytea), 'aes')
$$;
create function vault._crypto_aead_det_noncegen() returns bytea language sql set search_path = '' as $$
  select extensions.gen_random_bytes(16)
$$;
create table vault.secrets (
  id uuid primary key default gen_random_uuid(),
  name text,
  description text not null default '',
  secret text not null,
  key_id uuid,
  nonce bytea default vault._crypto_aead_det_noncegen(),
  created_at timestamptz not null default current_timestamp,
  updated_at timestamptz not null default current_timestamp
);
create unique index on vault.secrets using btree (name) where name is not null;
create view vault.decrypted_secrets as
  select s.id, s.name, s.description, s.secret,
         convert_from(vault._crypto_aead_det_decrypt(message := decode(s.secret, 'base64'),
                        additional := convert_to(s.id::text, 'utf8'), key_id := 0, context := 'pgsodium',
                        nonce := s.nonce), 'utf8') as decrypted_secret,
         s.key_id, s.nonce, s.created_at, s.updated_at
  from vault.secrets s;
create function vault.create_secret(new_secret text, new_name text = null, new_description text = '',
                                    new_key_id uuid = null)
returns uuid security definer language plpgsql set search_path = '' as $$
declare
  rec record;
begin
  insert into vault.secrets (secret, name, description) values (new_secret, new_name, new_description)
  returning * into rec;
  update vault.secrets s
     set secret = encode(vault._crypto_aead_det_encrypt(message := convert_to(rec.secret, 'utf8'),
                           additional := convert_to(s.id::text, 'utf8'), key_id := 0, context := 'pgsodium',
                           nonce := rec.nonce), 'base64')
   where id = rec.id;
  return rec.id;
end $$;
create function vault.update_secret(secret_id uuid, new_secret text = null, new_name text = null,
                                    new_description text = null, new_key_id uuid = null)
returns void security definer language plpgsql set search_path = '' as $$
begin
  update vault.secrets s
     set secret = case when new_secret is null then s.secret
                       else encode(vault._crypto_aead_det_encrypt(message := convert_to(new_secret, 'utf8'),
                              additional := convert_to(s.id::text, 'utf8'), key_id := 0, context := 'pgsodium',
                              nonce := s.nonce), 'base64') end,
         name = coalesce(new_name, s.name),
         description = coalesce(new_description, s.description),
         updated_at = now()
   where s.id = secret_id;
end $$;
-- What the platform grants postgres on Vault: read and delete, write through the functions only.
revoke all on schema vault from public;
revoke all on all tables in schema vault from public;
revoke all on all routines in schema vault from public;
grant usage on schema vault to postgres with grant option;
grant select, delete on vault.secrets, vault.decrypted_secrets to postgres with grant option;
grant execute on function vault.create_secret(text, text, text, uuid), vault.update_secret(uuid, text, text, text, uuid),
  vault._crypto_aead_det_decrypt(bytea, bytea, bigint, bytea, bytea), vault._crypto_aead_det_noncegen()
  to postgres with grant option;

-- pg_graphql's entry point, which Supabase creates in graphql_public on every project (its
-- grant_pg_graphql_access event trigger) and grants to the Data API's roles, whether or not GraphQL is
-- enabled: signed-in users may call it. Played by the placeholder a project without pg_graphql has.
create schema if not exists graphql_public;
create function graphql_public.graphql("operationName" text default null, query text default null,
                                       variables jsonb default null, extensions jsonb default null)
returns jsonb language sql as $$
  select jsonb_build_object('errors', jsonb_build_array(jsonb_build_object(
    'message', 'pg_graphql extension is not enabled.')))
$$;
grant usage on schema graphql_public to postgres, anon, authenticated, service_role;
grant execute on function graphql_public.graphql(text, text, jsonb, jsonb) to postgres, anon, authenticated, service_role;

-- postgres may become the Data API's roles, as Supabase's own migration grants
-- (20230201083204_grant_auth_roles_to_postgres): what `set role authenticated` in the SQL editor and
-- the pgTAP suite's tests.act_as (run by `supabase test db --linked` as postgres) rely on.
grant anon, authenticated, service_role to postgres;

alter role postgres nosuperuser createrole createdb replication bypassrls;
