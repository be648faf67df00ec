-- Outbound webhooks, part 5: scheduling with pg_cron, every minute.
--
--   webhook-housekeeping  always: private.webhook_housekeeping() (expire leases, close 24-hour windows)
--   webhook-dispatch      private.webhook_invoke_dispatcher(): on hosted Supabase, POSTs to the
--                         webhook-dispatcher Edge Function through pg_net, with the URL and the bearer
--                         secret read from Vault, as in Supabase's "Scheduling Edge Functions" guide.
--                         Where pg_net or the Vault secrets are missing (a local database) it does
--                         nothing; the dev server dispatches locally on NOTIFY instead.
--
-- One-time setup on a hosted project (secrets never live in migrations):
--   select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--   select vault.create_secret('<WEBHOOK_DISPATCH_SECRET>', 'webhook_dispatch_secret');

create extension if not exists pg_cron;

create function private.webhook_invoke_dispatcher() returns bigint
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  project_url text;
  dispatch_secret text;
  request_id bigint;
begin
  if not exists (select 1 from pg_extension where extname = 'pg_net')
     or not exists (select 1 from pg_extension where extname = 'supabase_vault') then
    return null;
  end if;
  -- Dynamic SQL: the vault and net schemas do not exist where these extensions are missing.
  execute $q$select decrypted_secret from vault.decrypted_secrets where name = 'project_url'$q$ into project_url;
  execute $q$select decrypted_secret from vault.decrypted_secrets where name = 'webhook_dispatch_secret'$q$
    into dispatch_secret;
  if project_url is null or dispatch_secret is null then
    raise warning 'webhook-dispatch: vault secrets project_url / webhook_dispatch_secret are not set';
    return null;
  end if;
  execute $q$select net.http_post(
      url := $1,
      headers := jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || $2),
      body := '{}'::jsonb,
      timeout_milliseconds := 60000)$q$
    into request_id
    using rtrim(project_url, '/') || '/functions/v1/webhook-dispatcher', dispatch_secret;
  return request_id;
end;
$$;

revoke all on function private.webhook_invoke_dispatcher() from public, authenticated;

-- cron.schedule with an existing job name replaces that job, so re-running this is harmless.
select cron.schedule('webhook-housekeeping', '* * * * *', 'select private.webhook_housekeeping()');
select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()');
