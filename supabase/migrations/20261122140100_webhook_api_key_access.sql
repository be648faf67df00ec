-- API keys configure webhooks: the organization's live API keys get the same access to the webhook
-- tables and operations as its admins, and nothing else (members, donations, settings and the payment
-- webhook log stay admin-only).

-- The organization whose webhooks the caller may configure: as an admin there, or with its live API key.
create function private.webhook_admin_organization_id() returns uuid
language sql stable security definer
set search_path = ''
as $$
  select coalesce(private.admin_organization_id(), private.api_key_organization_id())
$$;
revoke all on function private.webhook_admin_organization_id() from public;
grant execute on function private.webhook_admin_organization_id() to authenticated, service_role;

drop policy webhook_endpoints_admin_select on public.webhook_endpoints;
drop policy webhook_endpoints_admin_insert on public.webhook_endpoints;
drop policy webhook_endpoints_admin_update on public.webhook_endpoints;
drop policy webhook_endpoints_admin_delete on public.webhook_endpoints;
drop policy webhook_events_admin_select on public.webhook_events;
drop policy webhook_deliveries_admin_select on public.webhook_deliveries;
drop policy webhook_delivery_attempts_admin_select on public.webhook_delivery_attempts;

create policy webhook_endpoints_admin_select on public.webhook_endpoints for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_endpoints_admin_insert on public.webhook_endpoints for insert to authenticated
  with check (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_endpoints_admin_update on public.webhook_endpoints for update to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()))
  with check (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_endpoints_admin_delete on public.webhook_endpoints for delete to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_events_admin_select on public.webhook_events for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_deliveries_admin_select on public.webhook_deliveries for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));
create policy webhook_delivery_attempts_admin_select on public.webhook_delivery_attempts
  for select to authenticated
  using (organization_id = (select private.webhook_admin_organization_id()));

-- The operations (redeliver, recover, test event, rotate) check the same thing.
create or replace function private.webhook_operator_organization() returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid;
begin
  -- Users and API keys arrive as `authenticated`/`anon` (SET ROLE by PostgREST or withClaims); the
  -- server does not.
  if coalesce(current_setting('role', true), 'none') not in ('authenticated', 'anon') then
    return null;
  end if;
  org := private.webhook_admin_organization_id();
  if org is null then
    raise exception 'not an admin of this organization' using errcode = '42501';
  end if;
  return org;
end;
$$;
revoke all on function private.webhook_operator_organization() from public, authenticated;
