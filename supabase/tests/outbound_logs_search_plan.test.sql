-- Webhook Logs' content search stays within the searching organization: one tenant's many bodies holding
-- a value cannot make another tenant's search for it read them. private.webhook_events_containing's
-- queries (20261129100000_webhook_logs_search.sql) must reach the bodies through an index whose
-- condition names the organization: webhook_event_search_keys_idx, whose keys are the organization's
-- trigrams (private.webhook_body_trigrams(organization_id, …), written by the batch job), then each match's
-- event by its id; or the organization's own index for a pattern too short for a trigram; never a
-- trigram index over every organization, nor a sequential scan.
-- The query texts are taken from the function itself, its variables as parameters, planned as the
-- function plans them. scripts/bench/logs_search_tenant.ts measures the same at 250,000 bodies.
begin;
select plan(13);

-- A: 20,000 bodies, every one holding B's pastor's address; B: 2,000 of its own interleaved with them
-- (one row in 11), one of which holds the address.
insert into public.organizations (id, name)
values ('5ea0c000-0000-4000-8000-00000000000a', 'Hostile A'), ('5ea0c000-0000-4000-8000-00000000000b', 'Searcher B');
insert into public.webhook_events (organization_id, type, payload)
select case when g % 11 = 0 then '5ea0c000-0000-4000-8000-00000000000b'::uuid
            else '5ea0c000-0000-4000-8000-00000000000a'::uuid end,
       'member.created',
       jsonb_build_object('email', case when g % 11 <> 0 or g = 4400 then 'pastor@church-b.example'
                                        else 'member' || g || '@example.org' end,
                          'first_name', 'Maria', 'last_name', 'Fernandes')
from generate_series(1, 22000) g;
-- Recording them wrote no keys (the search is built off the write path); the batch job, as its cron job
-- runs it, indexes the events of deliveries. These events have none: they are given their keys directly.
insert into private.webhook_event_search (event_id, organization_id, keys)
select id, organization_id, private.webhook_body_trigrams(organization_id, payload::text)
  from public.webhook_events
 where organization_id in ('5ea0c000-0000-4000-8000-00000000000a', '5ea0c000-0000-4000-8000-00000000000b');
analyze public.webhook_events;
analyze private.webhook_event_search;

-- No index reads body trigrams without the organization, and none is on the events (recording one
-- maintains no body index): the keys live in the search table, one GIN index over them.
select is(array(select indexrelid::regclass::text from pg_index
                 where indrelid in ('public.webhook_events'::regclass, 'private.webhook_event_search'::regclass)
                   and pg_get_indexdef(indexrelid) ~ '(payload|keys)'
                 order by 1), array['private.webhook_event_search_keys_idx'],
          'the only index over the bodies is the search table''s, of organization-keyed trigrams');

-- PL/pgSQL would cache a generic plan of the query after a few calls, and a generic plan cannot know
-- the pattern: the planner then reads the table sequentially (every organization's bodies). The function
-- plans each call for its own organization and pattern.
select ok((select 'plan_cache_mode=force_custom_plan' = any (proconfig) from pg_proc
            where oid = 'private.webhook_events_containing(text, integer)'::regprocedure),
          'the search is planned for each call (plan_cache_mode = force_custom_plan)');

-- One of the function's queries (`which`: 'trigrams' or 'short'), its variables as parameters ($1 the
-- organization, $2 the pattern, $3 the cap, $4 the pattern's trigrams), planned with the function's
-- settings (tests.plan).
create function pg_temp.search_plan(org uuid, pattern text, which text default 'trigrams') returns text
language plpgsql as $$
declare
  src text := (select prosrc from pg_proc
                where oid = 'private.webhook_events_containing(text, integer)'::regprocedure);
  q text := case which when 'trigrams' then substring(src from 'array\((with candidate [^;]*?@> trigrams.*?limit max_matches)\)')
                       else substring(src from 'array\((select e\.id [^@;]*?limit max_matches)\)') end;
  out text;
begin
  if q is null then raise exception 'the search''s % query was not found in its function', which; end if;
  q := regexp_replace(regexp_replace(regexp_replace(regexp_replace(q, '\morg\M', '$1', 'g'), '\mpattern\M', '$2', 'g'),
                      '\mmax_matches\M', '$3', 'g'), '\mtrigrams\M', '$4', 'g');
  execute format('prepare search_plan(uuid, text, integer, text[]) as %s', q);
  out := tests.plan(format('execute search_plan(%L, %L, 5001, %L)', org, pattern,
                           private.webhook_pattern_trigrams(org, pattern)),
                    'private.webhook_events_containing(text, integer)'::regprocedure);
  deallocate search_plan;
  return out;
end $$;

-- A plan reads only the organization's entries: no sequential scan; every index condition names the
-- organization, or is the organization's trigram keys, or the id of an event those keys found.
create function pg_temp.bounded(p text) returns boolean language sql as $$
  select p !~ 'Seq Scan'
     and not exists (select from regexp_split_to_table(p, E'\n') l
                      where l ~ 'Index Cond:' and l !~ 'organization_id'
                        and l !~ '^\s*Index Cond: \(keys @> ' and l !~ '^\s*Index Cond: \(id = c\.event_id\)')
     and p !~ 'on webhook_events_any_body_trgm_idx'
$$;

select ok(pg_temp.bounded(p), format('B''s search for %s reads only B''s entries', what))
from (values ('a value in one of B''s bodies and all of A''s', '%pastor@church-b.example%', 'trigrams'),
             ('a value every body holds', '%example%', 'trigrams'),
             ('a value no body holds', '%nobody@nowhere.example%', 'trigrams'),
             ('a value too short for a trigram', '%ab%', 'short')) s(what, pattern, which),
     lateral (select pg_temp.search_plan('5ea0c000-0000-4000-8000-00000000000b', pattern, which) as p) x;

select matches(pg_temp.search_plan('5ea0c000-0000-4000-8000-00000000000b', '%pastor@church-b.example%'),
               'Bitmap Index Scan on webhook_event_search_keys_idx\s+Index Cond: \(keys @> ',
               'a value is found through the organization''s trigram entries');
select is(private.webhook_pattern_trigrams('5ea0c000-0000-4000-8000-00000000000b', '%a\_b%'), '{}',
          'a pattern without a word of 3 characters has no trigram (the search reads the organization''s bodies)');

-- What the search finds, as B's admin: B's one body with the address, none of A's 20,000.
select tests.add_member(tests.create_user('search-b@example.org', '5ea0c000-0000-4000-8000-0000000000b1'),
                        '5ea0c000-0000-4000-8000-00000000000b', 'admin');
select tests.act_as_config_api('5ea0c000-0000-4000-8000-0000000000b1', '5ea0c000-0000-4000-8000-00000000000b');
create temp table found as
select private.webhook_events_containing('%PASTOR@church-b.example%', 5001) as address,
       private.webhook_events_containing('%example%', 5001) as common,
       private.webhook_events_containing('%4%', 5001) as short;
select tests.clear_act_as();
select is((select payload ->> 'email' from public.webhook_events where id = any ((select address from found)::uuid[])),
          'pastor@church-b.example', 'B''s search for the address finds B''s one body, none of A''s');
select is((select array_length(common, 1) from found), 2000, 'a value every body holds: B''s 2,000');
select ok((select bool_and(organization_id = '5ea0c000-0000-4000-8000-00000000000b') and count(*) > 0
             from public.webhook_events where id = any ((select short from found)::uuid[])),
          'a pattern too short for a trigram: B''s bodies only');

-- What the index reads, in buffers: B's search reads a few of the organization's entries; a trigram
-- index over every body reads A's 20,000 matches of the address first. (Rows inserted since the last
-- vacuum wait in the GIN index's pending list, which every search reads whole; it is moved into the
-- index here, as autovacuum does, or at gin_pending_list_limit.)
select gin_clean_pending_list('private.webhook_event_search_keys_idx') >= 0 as cleaned \gset
create function pg_temp.index_buffers(q text) returns integer language plpgsql as $$
declare
  p jsonb;
begin
  execute 'explain (analyze, buffers, format json) ' || q into p;
  return (select coalesce(sum((n ->> 'Shared Hit Blocks')::int + (n ->> 'Shared Read Blocks')::int), 0)
          from jsonb_path_query(p, 'strict $.**') n
          where jsonb_typeof(n) = 'object' and n ->> 'Node Type' = 'Bitmap Index Scan'
            and n ->> 'Index Name' in ('webhook_event_search_keys_idx', 'webhook_events_any_body_trgm_idx'));
end $$;
create temp table reads as
select pg_temp.index_buffers(format($$with candidate as materialized (
    select s.event_id from private.webhook_event_search s
    where s.keys @> %L and s.organization_id = '5ea0c000-0000-4000-8000-00000000000b')
  select e.id from candidate c join public.webhook_events e on e.id = c.event_id
  where e.organization_id = '5ea0c000-0000-4000-8000-00000000000b' and e.payload::text ilike '%%pastor@church-b.example%%'
  limit 5001$$, private.webhook_pattern_trigrams('5ea0c000-0000-4000-8000-00000000000b', '%pastor@church-b.example%')))
  as bounded, null::int as global;
create index webhook_events_any_body_trgm_idx
  on public.webhook_events using gin ((payload::text) extensions.gin_trgm_ops);
update reads set global = pg_temp.index_buffers(
  $$select e.id from public.webhook_events e where e.payload::text ilike '%pastor@church-b.example%'$$);
select ok((select bounded > 0 and bounded * 3 < global from reads),
          format('B''s search reads %s index buffers, a third or less of the %s a trigram index over every body reads',
                 (select bounded from reads), (select global from reads)));
drop index private.webhook_event_search_keys_idx;
select ok(not pg_temp.bounded(pg_temp.search_plan('5ea0c000-0000-4000-8000-00000000000b', '%pastor@church-b.example%')),
          'and the plan check fails on that index');

select * from finish();
rollback;
