-- Webhook Logs, search by what is inside: find the deliveries whose body contains a value (a member's
-- e-mail, a donation id), as GET /webhooks/deliveries?contains=… does. The body is the event's payload,
-- sent as payload::text; a trigram index on that text, built by a batch job after the events are
-- recorded, answers "contains" (ILIKE '%value%') without reading every body. Row-level security bounds the search to the caller's organization (the events
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
-- comma): 3 to 5 times cheaper per body than unnest and array(select …), which is what the batch job
-- below pays per event. Its cost tells the planner it is dear.
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

-- The index is built after the fact, never by the transaction that records an event: a trigram index on
-- the events themselves made recording a 1 KB event with 4 deliveries cost 2.9 times as much (206 -> 593
-- µs, WAL 5.6 -> 20.1 KB), paid on every member change for a search an admin runs a few times a month.
-- Instead a batch job (webhook-search-index, below) reads the deliveries recorded since it last caught
-- up and writes their events' keys here, in batches, when no delivery is waiting to go out (or once the
-- index is 10 s behind): recording pays nothing for the search (scripts/bench/outbox_search_index.ts,
-- docs/benchmarks/history.md). Only events that have deliveries are indexed: Webhook Logs lists
-- deliveries, and most organizations' events go to no endpoint at all. At most the first 64 KB of a body
-- is indexed (private.webhook_search_max_chars).
create function private.webhook_search_max_chars() returns integer
language sql immutable parallel safe
set search_path = ''
as $$ select 65536 $$;

-- One row per indexed event: its organization's trigram keys. Goes with its event (retention, an
-- organization's deletion); an erasure's rewrite of the body drops it (webhook_events_search_forget).
create table private.webhook_event_search (
  event_id uuid primary key references public.webhook_events (id) on delete cascade,
  organization_id uuid not null,
  keys text[] not null
);
-- fastupdate (PostgreSQL's default) collects a batch's entries in a pending list, which the job merges
-- into the index at the end of each batch (gin_clean_pending_list): a sorted bulk insert, and searches
-- never read a long pending list.
create index webhook_event_search_keys_idx on private.webhook_event_search using gin (keys);
revoke all on private.webhook_event_search from public, anon, authenticated;

-- How far the index reaches: every delivery recorded before `indexed_until` has its event indexed (one
-- row). '-infinity' until the job's first run. Webhook Logs says it beside a search ("searching up to").
create table private.webhook_search_frontier (
  id boolean primary key default true check (id),
  indexed_until timestamptz not null default '-infinity'
);
insert into private.webhook_search_frontier default values;
revoke all on private.webhook_search_frontier from public, anon, authenticated;

-- Erasure rewrites an erased person's events (20261125110000_person_erasure.sql): their keys go too, so
-- no trace of the body stays in the index. (Updates only: recording an event does not fire it.)
create function private.webhook_events_search_forget() returns trigger
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  delete from private.webhook_event_search s where s.event_id = new.id;
  return null;
end;
$$;
create trigger webhook_events_search_forget after update of payload on public.webhook_events
for each row when (old.payload is distinct from new.payload)
execute function private.webhook_events_search_forget();

-- One batch: the events of at most `batch_size` deliveries recorded since the frontier whose event has
-- no keys yet, oldest first; then the frontier moves as far as is certain. Returns the events indexed,
-- or null when it waited (deliveries are due and the index is less than `max_lag` behind).
--
-- Which deliveries can still appear behind the frontier: a delivery's created_at is its recording
-- transaction's start (now()), so one not visible yet belongs to a transaction running now, which
-- started at or after the oldest running transaction's start. The frontier therefore moves to the
-- earlier of that start (read before the batch's snapshot is taken) and the last delivery indexed when
-- the batch was full. The deliveries are read per organization on its log index (organization_id,
-- created_at), as retention reads them: there is no index over every organization's times, and adding
-- one would cost recording.
--
-- The events are locked (for share) while their keys are computed: an erasure rewriting one meanwhile
-- waits for the batch, then its trigger deletes what the batch wrote; one that got there first is read
-- as it rewrote it.
create function private.webhook_search_index_batch(
  batch_size integer default 2000,
  max_lag interval default interval '10 seconds'
) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  since timestamptz;
  horizon timestamptz;
  picked integer;
  last_at timestamptz;
  indexed integer;
begin
  select f.indexed_until into since from private.webhook_search_frontier f for update skip locked;
  if not found then
    return 0; -- another batch is running
  end if;
  -- Deliveries go out first: while any is due, the batch waits until the index is max_lag behind.
  if since > clock_timestamp() - max_lag
     and exists (select from public.webhook_deliveries d
                  where d.status = any (private.webhook_open_states()) and d.next_attempt_at <= now()) then
    return null;
  end if;
  -- The clock first, then the transactions running (read afresh: pg_stat_activity is otherwise read once
  -- per transaction), both before the snapshot of the batch's statement. A second of margin covers a
  -- transaction that has taken its start time but not yet published it. Client backends, and any other
  -- process that has written (autovacuum, which records no delivery, would hold the frontier back).
  horizon := clock_timestamp() - interval '1 second';
  perform pg_catalog.pg_stat_clear_snapshot();
  -- Sessions of roles this one may not see (a hosted platform's own) show no start: those record no
  -- delivery, but to be safe the frontier then stays 30 s behind (the Data API's statements end in 8 s).
  select least(horizon, min(a.xact_start),
               case when bool_or(a.query = '<insufficient privilege>') then horizon - interval '29 seconds' end)
    into horizon
    from pg_catalog.pg_stat_activity a
   where (a.backend_type = 'client backend' or a.backend_xid is not null or a.query = '<insufficient privilege>')
     and a.pid <> pg_catalog.pg_backend_pid() and (a.xact_start is not null or a.query = '<insufficient privilege>');

  with candidates as (
    select x.event_id, x.organization_id, x.created_at
      from public.organizations o
     cross join lateral (
       select d.event_id, d.organization_id, d.created_at from public.webhook_deliveries d
        where d.organization_id = o.id and d.created_at >= since
          and not exists (select from private.webhook_event_search s where s.event_id = d.event_id)
        order by d.created_at
        limit batch_size) x
     order by x.created_at
     limit batch_size
  ), events as (
    select e.id, e.organization_id,
           private.webhook_body_trigrams(e.organization_id, left(e.payload::text, private.webhook_search_max_chars())) as keys
      from public.webhook_events e
     where e.id in (select c.event_id from candidates c)
       for share of e
  ), written as (
    insert into private.webhook_event_search (event_id, organization_id, keys)
    select id, organization_id, keys from events
    on conflict (event_id) do nothing
    returning 1
  )
  select (select count(*) from candidates), (select max(c.created_at) from candidates c),
         (select count(*) from written)
    into picked, last_at, indexed;

  update private.webhook_search_frontier f
     set indexed_until = greatest(f.indexed_until, case when picked >= batch_size then least(horizon, last_at)
                                                        else horizon end)
   where f.id;
  if indexed > 0 then
    perform pg_catalog.gin_clean_pending_list('private.webhook_event_search_keys_idx'::regclass);
  end if;
  return indexed;
end;
$$;

-- The cron job: batches, each its own transaction, for up to `time_budget`; caught up (or waiting for
-- deliveries to go out), it looks again every second. A run every minute of up to 55 s keeps the index
-- a second or two behind, on pg_cron 1.4 (minutes only) as on 1.5+; two runs never index at once (the
-- frontier's row lock). No SET clause (a procedure with one may not commit): every name is qualified.
create procedure private.webhook_search_index_run(time_budget interval default interval '55 seconds')
language plpgsql
as $$
declare
  started timestamptz := pg_catalog.clock_timestamp();
  n integer;
begin
  while pg_catalog.clock_timestamp() - started < time_budget loop
    n := private.webhook_search_index_batch();
    commit;
    if n is null or n = 0 then
      perform pg_catalog.pg_sleep(1);
    end if;
  end loop;
end;
$$;

-- How far the search reaches, for Webhook Logs: null until the first batch.
create function private.webhook_searchable_until() returns timestamptz
language sql stable security definer
set search_path = ''
as $$ select nullif(f.indexed_until, '-infinity') from private.webhook_search_frontier f $$;

revoke all on function private.webhook_search_max_chars(), private.webhook_events_search_forget(),
  private.webhook_search_index_batch(integer, interval), private.webhook_searchable_until()
  from public, anon, authenticated;
revoke all on procedure private.webhook_search_index_run(interval) from public, anon, authenticated;
grant execute on function private.webhook_searchable_until() to config_api;

select cron.schedule('webhook-search-index', '* * * * *', 'call private.webhook_search_index_run()');

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
  -- The organization's keys first, then each candidate's event by its id: joined freely, the planner
  -- may rather read every body of a small organization and look its keys up after.
  return array(with candidate as materialized (
                 select s.event_id from private.webhook_event_search s
                  where s.keys @> trigrams and s.organization_id = org)
               select e.id from candidate c join public.webhook_events e on e.id = c.event_id
                where e.organization_id = org and e.payload::text ilike pattern
                limit max_matches);
end;
$$;
revoke all on function private.webhook_events_containing(text, integer) from public, anon, authenticated;
grant execute on function private.webhook_events_containing(text, integer) to config_api;
