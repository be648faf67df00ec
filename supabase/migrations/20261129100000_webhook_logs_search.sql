-- Webhook Logs, search by what is inside: find the deliveries whose body contains a value (a member's
-- e-mail, a donation id), as GET /webhooks/deliveries?contains=… does. The body is the event's payload,
-- sent as payload::text; a trigram index on that text answers "contains" (ILIKE '%value%') without
-- reading every body. Row-level security bounds the search to the caller's organization (the events
-- policy), and the listing then pages the matching deliveries as any other.
-- See docs/outbound-webhooks.md#webhook-logs and docs/benchmarks/history.md (content search).

-- pg_trgm is one of the extensions Supabase offers (created in schema extensions, as Supabase keeps
-- them); Debian's PostgreSQL ships it in the server package.
create extension if not exists pg_trgm with schema extensions;

-- Every trigram of every body. Events are written once and never updated (only erasure rewrites one),
-- so the index costs the outbox's insert and nothing after.
create index webhook_events_body_trgm_idx
  on public.webhook_events using gin ((payload::text) extensions.gin_trgm_ops);

-- The events of the caller's organization whose body contains `pattern` (an ILIKE pattern, escaped by
-- the caller): at most `max_matches` ids, in no particular order. Security definer because row-level
-- security keeps an index from serving a condition whose operator is not leakproof (ILIKE is not): under
-- the events' policy the trigram index would go unused and every body of the organization be read. The
-- organization bound is stated here instead, from the same helper the policy uses: a caller who may not
-- configure the organization's webhooks is refused before anything is read.
-- A rare value (an e-mail address, a payment id) matches a few bodies, found through the index; a common
-- one (a domain in every body) reaches the cap at once, and the listing then walks the deliveries
-- newest first instead, checking each body, which finds a page quickly when matches are many
-- (supabase/functions/webhooks/routes/deliveries.ts).
create function private.webhook_events_containing(pattern text, max_matches integer) returns uuid[]
language plpgsql stable security definer
set search_path = ''
as $$
declare
  org uuid := private.webhook_admin_organization_id();
begin
  if org is null then
    raise exception 'not an admin of this organization' using errcode = '42501';
  end if;
  return array(select e.id from public.webhook_events e
                where e.organization_id = org and e.payload::text ilike pattern
                limit max_matches);
end;
$$;
revoke all on function private.webhook_events_containing(text, integer) from public, anon, authenticated;
grant execute on function private.webhook_events_containing(text, integer) to config_api;
