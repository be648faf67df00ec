-- Outbound webhooks, part 5: scheduling with pg_cron, every minute.
--
--   webhook-housekeeping  always: private.webhook_housekeeping() (expire leases, close 24-hour windows)
--   webhook-dispatch      private.webhook_invoke_dispatcher(): on hosted Supabase, POSTs to the
--                         webhook-dispatcher Edge Function through pg_net, with the URL and the bearer
--                         secret read from Vault, as in Supabase's "Scheduling Edge Functions" guide.
--                         One invocation delivers up to 3,000 (an Edge Function request has 2 s of
--                         CPU); with a bigger backlog it starts one more per 3,000 due, up to 8, which
--                         share the work without colliding (claims skip each other's rows). Each
--                         runs for up to 100 s, so successive minutes overlap and new events go out
--                         within about a second on hosted projects too.
--                         Where pg_net or the Vault secrets are missing (a local database) it does
--                         nothing; the dev server dispatches locally on NOTIFY instead.
--
-- One-time setup on a hosted project (secrets never live in migrations):
--   select vault.create_secret('https://<project-ref>.supabase.co', 'project_url');
--   select vault.create_secret('<WEBHOOK_DISPATCH_SECRET>', 'webhook_dispatch_secret');

-- As Supabase's Cron module installs it (a no-op where it is already enabled).
create extension if not exists pg_cron with schema pg_catalog;
grant usage on schema cron to postgres;
grant all privileges on all tables in schema cron to postgres;

-- The pg_net request of each dispatcher invocation, so the operator health check
-- (private.webhook_operator_health) can find their outcomes in net._http_response, which does not say
-- which URL a response came from. Kept for a day.
create table private.webhook_dispatch_requests (
  request_id bigint primary key,
  invoked_at timestamptz not null default now()
);
create index webhook_dispatch_requests_invoked_idx on private.webhook_dispatch_requests (invoked_at);

create function private.webhook_invoke_dispatcher() returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  project_url text;
  dispatch_secret text;
  due integer;
  invocations integer;
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
  -- The backlog, counted on the due index and capped so counting stays cheap.
  select count(*) into due
  from (
    select 1 from public.webhook_deliveries
    where status = any (private.webhook_open_states()) and next_attempt_at <= now() + interval '1 minute'
    limit 24000
  ) d;
  invocations := least(8, greatest(1, ceil(due / 3000.0)::integer));
  delete from private.webhook_dispatch_requests where invoked_at < now() - interval '1 day';
  for i in 1..invocations loop
    execute $q$insert into private.webhook_dispatch_requests (request_id) select net.http_post(
        url := $1,
        headers := jsonb_build_object('Content-Type', 'application/json', 'Authorization', 'Bearer ' || $2),
        body := jsonb_build_object('max_deliveries', 3000),
        timeout_milliseconds := 120000)$q$
      using rtrim(project_url, '/') || '/functions/v1/webhook-dispatcher', dispatch_secret;
  end loop;
  return invocations;
end;
$$;

revoke all on function private.webhook_invoke_dispatcher() from public, authenticated;

-- cron.schedule with an existing job name replaces that job, so re-running this is harmless.
select cron.schedule('webhook-housekeeping', '* * * * *', 'select private.webhook_housekeeping()');
select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()');
