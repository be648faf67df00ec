-- Custom request headers per endpoint (an API gateway's key, n8n's header auth): up to 10, sent on every
-- attempt of every delivery. See docs/custom-headers.md
--
-- Write-only like the signing secret. The values live in private.webhook_endpoint_headers, which no user
-- role can read or write (neither the Data API nor the configuration API); only the dispatcher's claim
-- reads them (20261122130200_outbound_webhook_dispatch.sql). What the endpoint row itself carries, and
-- so what any before/after of an endpoint shows, is `custom_headers`: each name with a hint of its value
-- (the last 4 characters of a value of 12 or more), never a value. Admins and API keys of the
-- organization change them (the rule for every endpoint write) through private.webhook_set_custom_headers.

-- The rule for a set of headers, as the configuration API checks it (_shared/custom_headers.ts): at most
-- 10; names HTTP tokens of at most 100 characters, unique in any letter case, none that is hop-by-hop or
-- a proxy's, none the dispatcher sets itself (webhook-*, x-webhook-*, host, content-length, content-type,
-- content-encoding, user-agent); values 1 to 1024 printable ASCII characters (tab too), no line break,
-- no NUL, no space at either end.
create function private.webhook_custom_headers_acceptable(headers jsonb) returns boolean
language sql immutable
set search_path = ''
as $$
  select jsonb_typeof(headers) = 'array' and jsonb_array_length(headers) <= 10
     and coalesce((
       select bool_and(
                jsonb_typeof(h) = 'object' and (select count(*) from jsonb_object_keys(h)) = 2
                and jsonb_typeof(h -> 'name') = 'string' and jsonb_typeof(h -> 'value') = 'string'
                and (h ->> 'name') ~ '^[-!#$%&''*+.^_`|~0-9A-Za-z]{1,100}$'
                and lower(h ->> 'name') <> all (array['connection', 'keep-alive', 'te', 'trailer',
                      'transfer-encoding', 'upgrade', 'expect', 'http2-settings', 'host', 'content-length',
                      'content-type', 'content-encoding', 'user-agent'])
                and lower(h ->> 'name') !~ '^(proxy-|webhook-|x-webhook-)'
                and length(h ->> 'value') between 1 and 1024
                and (h ->> 'value') ~ '^[\t -~]+$' and (h ->> 'value') !~ '^[\t ]|[\t ]$')
              and count(distinct lower(h ->> 'name')) = count(*)
       from jsonb_array_elements(headers) h), true)
$$;

-- What is shown instead of a value (_shared/custom_headers.ts valueHint).
create function private.webhook_header_value_hint(value text) returns text
language sql immutable
set search_path = ''
as $$
  select '…' || case when length(value) >= 12 then right(value, 4) else '' end
$$;

-- The values, one row per endpoint that has any: [{name, value}] in the order they are sent.
create table private.webhook_endpoint_headers (
  endpoint_id uuid primary key references public.webhook_endpoints (id) on delete cascade,
  headers jsonb not null check (jsonb_array_length(headers) > 0 and private.webhook_custom_headers_acceptable(headers))
);
revoke all on private.webhook_endpoint_headers from public, anon, authenticated, config_api, service_role;

-- The endpoint's face of them: [{name, value_hint}], readable like the rest of the endpoint, written
-- only by private.webhook_set_custom_headers (no user role may write it). The claim reads the values only
-- for an endpoint whose list is not empty.
alter table public.webhook_endpoints add column custom_headers jsonb not null default '[]'
  check (jsonb_typeof(custom_headers) = 'array' and jsonb_array_length(custom_headers) <= 10);
grant select (custom_headers) on public.webhook_endpoints to config_api;

-- Sets an endpoint's headers to `headers` ([{name, value?}], in order): every name not in it is removed;
-- an entry without a value keeps the value stored under that name (in any letter case), since the admin
-- cannot see it to send it again. Returns the new [{name, value_hint}]. For an admin or API key of the
-- endpoint's organization only. Refusals: 42501 (not one), P0002 (no such endpoint there), 22023 (an
-- entry to keep that has no stored value, or a set the rule refuses).
create function private.webhook_set_custom_headers(endpoint_id uuid, headers jsonb) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_admin_organization_id();
  stored jsonb;
  merged jsonb := '[]';
  hints jsonb;
  item jsonb;
  kept text;
begin
  if org is null then
    raise exception 'only administrators of the organization can change custom headers'
      using errcode = '42501', hint = 'admin_required';
  end if;
  perform from public.webhook_endpoints e
   where e.id = webhook_set_custom_headers.endpoint_id and e.organization_id = org
     for no key update;
  if not found then
    raise exception 'no such endpoint' using errcode = 'P0002';
  end if;
  if jsonb_typeof(headers) is distinct from 'array' then
    raise exception 'custom_headers must be a list' using errcode = '22023';
  end if;
  select h.headers into stored from private.webhook_endpoint_headers h
   where h.endpoint_id = webhook_set_custom_headers.endpoint_id;
  for item in select * from jsonb_array_elements(headers) loop
    kept := item ->> 'value';
    if kept is null then
      select s ->> 'value' into kept from jsonb_array_elements(coalesce(stored, '[]')) s
       where lower(s ->> 'name') = lower(item ->> 'name');
      if kept is null then
        raise exception 'custom header "%" has no stored value to keep: give its value', item ->> 'name'
          using errcode = '22023';
      end if;
    end if;
    merged := merged || jsonb_build_array(jsonb_build_object('name', item ->> 'name', 'value', kept));
  end loop;
  if not private.webhook_custom_headers_acceptable(merged) then
    raise exception 'custom headers refused: at most 10, valid names, each once, values of 1 to 1024 printable characters'
      using errcode = '22023';
  end if;
  if jsonb_array_length(merged) = 0 then
    delete from private.webhook_endpoint_headers h where h.endpoint_id = webhook_set_custom_headers.endpoint_id;
  else
    insert into private.webhook_endpoint_headers as h (endpoint_id, headers)
    values (webhook_set_custom_headers.endpoint_id, merged)
    on conflict on constraint webhook_endpoint_headers_pkey do update set headers = excluded.headers;
  end if;
  select coalesce(jsonb_agg(jsonb_build_object('name', m ->> 'name',
                                               'value_hint', private.webhook_header_value_hint(m ->> 'value'))
                            order by n), '[]')
    into hints
    from jsonb_array_elements(merged) with ordinality as x(m, n);
  update public.webhook_endpoints e set custom_headers = hints
   where e.id = webhook_set_custom_headers.endpoint_id and e.custom_headers is distinct from hints;
  return hints;
end;
$$;

revoke all on function private.webhook_custom_headers_acceptable(jsonb), private.webhook_header_value_hint(text),
  private.webhook_set_custom_headers(uuid, jsonb) from public, anon, authenticated;
grant execute on function private.webhook_set_custom_headers(uuid, jsonb) to config_api;
