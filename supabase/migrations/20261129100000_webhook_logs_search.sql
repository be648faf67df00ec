-- Webhook Logs, search by what is inside: find the deliveries whose body contains a value (a member's
-- e-mail, a donation id), as GET /webhooks/deliveries?contains=… does. The body is the event's payload,
-- sent as payload::text; a trigram index on that text answers "contains" (ILIKE '%value%') without
-- reading every body. Row-level security bounds the search to the caller's organization (the events
-- policy), and the listing then pages the matching deliveries as any other.
-- See docs/outbound-webhooks.md#webhook-logs and docs/benchmarks/history.md (content search).

-- pg_trgm is one of the extensions Supabase offers (created in schema extensions, as Supabase keeps
-- them); Debian's PostgreSQL ships it in the server package.
create extension if not exists pg_trgm with schema extensions;

-- The index is one organization's at a time. A trigram index on the body alone (gin_trgm_ops) holds one
-- list of rows per trigram for every organization together: a tenant with a million bodies holding a
-- value (its own domain, or a value copied on purpose) makes every other tenant's search for that value
-- read a million entries before the organization filter (a bitmap scan is not bounded by LIMIT). Adding
-- organization_id to the same GIN index (btree_gin) does not help where the organizations' rows are
-- interleaved in the table, as events are: the index intersects the organization's list with each
-- trigram's, and with one row in a hundred its own it still reads nearly every page of the trigram's
-- list (by hand at 250,000 bodies: 1,431 buffers against 32 for this index; scripts/bench/
-- logs_search_tenant.ts and docs/benchmarks/history.md, content search with a hostile tenant). So each trigram is keyed by its organization: the index holds
-- "<organization key><trigram>", the key being 8 hex digits of the md5 of the organization id (not the
-- id's own digits: ids made in sequence or by time share their first ones), and a search asks for its
-- own organization's keys, whose lists hold its own rows only. Two organizations sharing a key (1 in 4
-- billion pairs) would read each other's entries, never see them: the query states the organization and
-- the pattern again on each row.

-- The body's trigrams (pg_trgm's, as show_trgm extracts them: lower case, words padded with spaces),
-- each prefixed with the organization's key. Built as one string and split (a trigram never holds a
-- comma): 3 to 5 times cheaper per body than unnest and array(select …), which is what every event's
-- insert pays. Its cost tells the planner it is dear (the default, 100, would let it check every body
-- of the organization rather than ask the index).
create function private.webhook_body_trigrams(organization_id uuid, body text) returns text[]
language sql immutable parallel safe cost 10000
set search_path = ''
as $$
  select string_to_array(k || replace(array_to_string(extensions.show_trgm(body), ','), ',', ',' || k), ',')
  from (select left(md5(organization_id::text), 8) as k) o
$$;

-- The trigrams every text matching an ILIKE pattern holds, keyed the same way: those of each word of the
-- pattern that lie inside it. Wildcards and escapes are not letters or digits, so they end words as any
-- punctuation does; a trigram with a space (a word's edge) is left out, since the pattern's word may be
-- part of a longer word in the body. Empty when the pattern has no word of 3 characters or more.
create function private.webhook_pattern_trigrams(organization_id uuid, pattern text) returns text[]
language sql immutable parallel safe
set search_path = ''
as $$
  select array(select k || t from (select left(md5(organization_id::text), 8)) o(k),
                                  unnest(extensions.show_trgm(pattern)) t
                where position(' ' in t) = 0)
$$;
revoke all on function private.webhook_body_trigrams(uuid, text), private.webhook_pattern_trigrams(uuid, text)
  from public, anon, authenticated;

-- Events are written once and never updated (only erasure rewrites one), so the index costs the
-- outbox's insert and nothing after: about 3 times what recording a 1 KB event costs without it, 1.4
-- times a shared trigram index (scripts/bench/outbox_search_index.ts, docs/benchmarks/history.md, what
-- the index costs the outbox). fastupdate stays on (PostgreSQL's default): writing each event's keys
-- into the index at once costs 2.6 times as much; the pending list it fills (at most
-- gin_pending_list_limit, 4 MB, then merged, or by autovacuum) is read whole by every search.
create index webhook_events_org_body_trgm_idx
  on public.webhook_events using gin (private.webhook_body_trigrams(organization_id, payload::text));

-- The events of the caller's organization whose body contains `pattern` (an ILIKE pattern, escaped by
-- the caller): at most `max_matches` ids, in no particular order. Security definer because row-level
-- security keeps an index from serving a condition whose operator is not leakproof (ILIKE is not): under
-- the events' policy the trigram index would go unused and every body of the organization be read. The
-- organization bound is stated here instead, from the same helper the policy uses: a caller who may not
-- configure the organization's webhooks is refused before anything is read. Planned on each call: a
-- generic plan (PL/pgSQL caches one after a few calls) cannot see the pattern and would read the table
-- sequentially, every organization's bodies.
-- A rare value (an e-mail address, a payment id) matches a few bodies, found through the index; a common
-- one (a domain in every body) reaches the cap at once, and the listing then walks the deliveries
-- newest first instead, checking each body, which finds a page quickly when matches are many
-- (supabase/functions/webhooks/routes/deliveries.ts).
create function private.webhook_events_containing(pattern text, max_matches integer) returns uuid[]
language plpgsql stable security definer
set search_path = ''
set plan_cache_mode = force_custom_plan
as $$
declare
  org uuid := private.webhook_admin_organization_id();
  trigrams text[];
begin
  if org is null then
    raise exception 'not an admin of this organization' using errcode = '42501';
  end if;
  trigrams := private.webhook_pattern_trigrams(org, pattern);
  if trigrams = '{}' then
    -- Too short for a trigram: the organization's own bodies, read one by one (its index, no other's).
    return array(select e.id from public.webhook_events e
                  where e.organization_id = org and e.payload::text ilike pattern
                  limit max_matches);
  end if;
  return array(select e.id from public.webhook_events e
                where private.webhook_body_trigrams(e.organization_id, e.payload::text) @> trigrams
                  and e.organization_id = org and e.payload::text ilike pattern
                limit max_matches);
end;
$$;
revoke all on function private.webhook_events_containing(text, integer) from public, anon, authenticated;
grant execute on function private.webhook_events_containing(text, integer) to config_api;
