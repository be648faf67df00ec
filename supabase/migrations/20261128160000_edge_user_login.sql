-- The login of the configuration API's user-request pool, `edge_user` (created NOLOGIN by the tenancy
-- migration). Whatever applies the migrations gives it a login: `supabase db push` on a hosted project,
-- scripts/db-bootstrap.sh on a local database, with a random password nobody has to copy anywhere.
--
-- The password is kept where only the role that runs the migrations (`postgres`, whose SUPABASE_DB_URL
-- every Edge Function has) can read it: in Vault where the platform has it (every Supabase project:
-- secret `edge_user_password`, encrypted, written by private.vault_put_secret), else in a private table. The functions read it through their server pool each time the user pool opens a
-- connection (supabase/functions/_shared/pools.ts), so nothing is set by hand, and a new password
-- (private.set_edge_user_login()) reaches every function instance without a redeploy.
-- USER_DB_URL / USER_DB_PASSWORD, where set, are used instead.
--
-- The statement text the CLI records for this migration (supabase_migrations.schema_migrations) holds no
-- password: it is generated here, at run time.
-- See docs/operations.md#the-user-request-pools-login

-- Where Vault is missing (a local database): the one password, readable by the owner only.
create table private.edge_user_login (
  id boolean primary key default true check (id),
  password text not null,
  set_at timestamptz not null default now()
);
alter table private.edge_user_login enable row level security;
revoke all on private.edge_user_login from public, anon, authenticated, service_role;

-- Gives edge_user its login with `new_password` (default: three v4 UUIDs joined, 96 hex characters
-- holding 366 random bits from the server's strong random source) and keeps the password for the
-- functions. Run it again to change the password;
-- connections already open stay open, new ones use the new password.
create function private.set_edge_user_login(new_password text default null) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  password text := coalesce(new_password,
    replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));
begin
  if length(password) < 16 then
    raise exception 'the password of edge_user must have at least 16 characters';
  end if;
  -- EXECUTE: a statement inside a function is not what log_statement logs, so the password stays out
  -- of the server log.
  execute format('alter role edge_user login password %L', password);
  if private.vault_put_secret('edge_user_password', password,
       'Password of edge_user, the user-request pool of the Edge Functions (private.set_edge_user_login)') then
    -- With its WHERE, as every statement here (pg-safeupdate on hosted API connections).
    delete from private.edge_user_login where id;
  else
    insert into private.edge_user_login (id, password) values (true, password)
    on conflict (id) do update set password = excluded.password, set_at = now();
  end if;
end;
$$;

-- The password the functions' user pool logs in with; null where none was set (a database with trust
-- authentication needs none).
create function private.edge_user_password() returns text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  password text;
begin
  if to_regclass('vault.decrypted_secrets') is not null then
    execute $q$select decrypted_secret from vault.decrypted_secrets where name = 'edge_user_password'$q$
      into password;
  end if;
  return coalesce(password, (select l.password from private.edge_user_login l where l.id));
end;
$$;

revoke all on function private.set_edge_user_login(text), private.edge_user_password()
  from public, anon, authenticated, service_role;

select private.set_edge_user_login();
