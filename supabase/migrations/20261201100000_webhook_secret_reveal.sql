-- Revealing an endpoint's signing secret (Settings > Integrations > Webhooks, "Reveal secret"), as Svix
-- and Stripe offer: for an administrator of the organization only (never an API key, never staff), only
-- with a sign-in of the last 10 minutes (the page asks for the password again, and Supabase Auth checks
-- it by signing in anew), and written to the organization's audit log each time. Secrets stay unreadable
-- by every user role (docs/two-doors.md): this function reads the one secret as its owner, and it is
-- granted to the configuration API's role alone, so the Data API cannot call it.
-- See docs/settings-ui.md#revealing-a-signing-secret

-- How recent the caller's sign-in must be ---------------------------------------------------------------
create function private.secret_reveal_window() returns interval
language sql immutable
set search_path = ''
as $$
  select interval '10 minutes'
$$;

-- Reveal -------------------------------------------------------------------------------------------------
-- The endpoint's current secret. Refusals, as the API maps them: 42501 hint admin_required (not an admin
-- of the active organization with a live session: staff, an API key, a removed member, a signed-out
-- token), 42501 hint reauthentication_required (the session's sign-in is older than the window), P0002
-- (no such endpoint in the caller's organization: another organization's endpoint looks the same).
create function private.webhook_reveal_secret(endpoint_id uuid) returns text
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
  signed_in timestamptz;
  ep public.webhook_endpoints;
begin
  if org is null then
    raise exception 'only administrators of the organization can reveal a signing secret'
      using errcode = '42501', hint = 'admin_required';
  end if;
  -- The session's own start, as Supabase Auth records it: refreshing a token does not move it, signing in
  -- again (with the password) makes a new session.
  select s.created_at into signed_in from auth.sessions s
   where s.id = (auth.jwt() ->> 'session_id')::uuid and s.user_id = auth.uid();
  if signed_in is null or signed_in < now() - private.secret_reveal_window() then
    raise exception 'sign in again (enter your password) to reveal a signing secret: reveals need a sign-in within the last % minutes',
      extract(epoch from private.secret_reveal_window())::integer / 60
      using errcode = '42501', hint = 'reauthentication_required';
  end if;
  select * into ep from public.webhook_endpoints e
   where e.id = webhook_reveal_secret.endpoint_id and e.organization_id = org;
  if not found then
    raise exception 'no such endpoint' using errcode = 'P0002';
  end if;
  -- The audit log (20261207170100_audit_log.sql): who, when and from where; never the secret.
  perform private.audit_record(org, 'endpoint.secret_revealed', 'endpoint', ep.id::text, null, null,
                               details => jsonb_build_object('endpoint_id', ep.id, 'url', ep.url));
  return ep.secret;
end;
$$;

revoke all on function private.secret_reveal_window(), private.webhook_reveal_secret(uuid)
  from public, anon, authenticated;
grant execute on function private.webhook_reveal_secret(uuid) to config_api;
