-- Outbound webhooks, part 3: the delivery state machine, as the dispatcher drives it.
--
--   pending ──attempt──► delivered                  2xx within the timeout
--      │                                            
--      └────attempt──► retrying ──attempt──► ...    anything else; next attempt after backoff + jitter
--                          │                        (longer if the receiver's Retry-After says so), never later than
--                          ▼                        24 h after the first attempt
--                  permanently_failed               still failing 24 h after the first attempt, 410 Gone,
--                                                   the endpoint was disabled, not attempted within 24 h
--                                                   of becoming due, or set aside: claimed 3 times without
--                                                   a recorded result (housekeeping)
--
-- The policy lives here, in one place, so the dispatcher, the housekeeping job and the operations
-- agree on it. The dispatcher (webhook-dispatcher) only claims work, sends it and reports outcomes.

-- How long a delivery keeps being retried after its first attempt.
create function private.webhook_retry_window() returns interval
language sql immutable
set search_path = ''
as $$ select interval '24 hours' $$;

-- Delay after the n-th failed attempt: 10 s doubling each time, capped at 4 h, then ±25% jitter so
-- that deliveries which failed together (an endpoint outage) do not return in lockstep.
-- Nominal: 10 s, 20 s, 40 s, 80 s, 160 s, 5.3 min, 10.7 min, 21 min, 43 min, 85 min, 2.8 h, 4 h, 4 h...
create function private.webhook_retry_delay(failed_attempts integer) returns interval
language sql volatile
set search_path = ''
as $$
  select make_interval(secs => least(10 * power(2, greatest(failed_attempts, 1) - 1), 4 * 3600)
                               * (0.75 + random() * 0.5))
$$;

-- A receiver's Retry-After only ever lengthens our own backoff (it is a lower bound, never a way to
-- make us retry sooner: `Retry-After: 0` on every 503 would otherwise mean an attempt a second for
-- 24 hours), and it is capped, as Svix does, so one header cannot park a delivery past its window.
create function private.webhook_retry_after_cap() returns interval
language sql immutable
set search_path = ''
as $$ select interval '1 hour' $$;

-- Claims due deliveries for one dispatcher, each with a lease (a row of private.webhook_leases, live
-- for `lease_seconds`): a delivery with a live lease is in flight and nobody else claims it. A
-- dispatcher that dies mid-batch just lets its leases run out; a delivery claimed
-- private.webhook_max_unrecorded_claims() times without a result is not claimed again (housekeeping
-- sets it aside). Claims take turns (below), so two never
-- take the same row; the rows taken are locked FOR NO KEY UPDATE SKIP LOCKED, passing over any a
-- result being recorded or an operation holds.
--
-- Three limits, across every dispatcher (the cron run, a woken run, a second local process): the
-- database is the authority. No endpoint has more than `per_endpoint` deliveries in flight at once, and
-- no organization more than `per_organization`, however many endpoints it has: an organization with
-- thousands due to many slow endpoints holds at most that share of the dispatchers' slots, and the
-- rest keep serving everyone else. Their room is the cap minus their live leases, whoever holds them,
-- counted on the lease table's endpoint and organization indexes (at most the cap each, plus leases run
-- out that nobody has taken over yet). Claims take turns on a transaction-level advisory lock, and each
-- counts after taking its turn, in a statement of its own with a fresh snapshot (so this is plpgsql,
-- under READ COMMITTED as the dispatcher runs it): two claims can never both see the same room. A
-- claim takes milliseconds, so turns cost nothing next to an HTTP attempt. And a claim returns no more
-- than `max_bytes` of bodies (the dispatcher's memory still free), but always the first row due when it
-- fits: bodies are bounded (private.webhook_max_body_bytes), and each delivery carries its body's size
-- (body_bytes), so this needs no look at the bodies. `endpoint_full` tells the dispatcher which
-- endpoints this claim filled, to the endpoint's cap or its organization's: a send to one of them
-- finishing means there may be more to claim.
--
-- Organizations take turns within a claim: each one's oldest due row comes first, then each one's
-- second oldest, and so on (round robin before next_attempt_at), so one organization's backlog never
-- pushes another's lone delivery out of a claim.
--
-- Endpoints with a rate limit are paced, across dispatchers too: a claim gives one a block of the
-- sends whose start falls within private.webhook_pace_horizon() of now, each private.webhook_send_gap()
-- after the one before, and moves the endpoint's pace (private.webhook_endpoint_pace) on past them;
-- `send_at` says when each starts, by the database's clock (a time rather than a delay, so the time a
-- claim's answer takes to reach one dispatcher or another cannot bring two sends closer). The next
-- block comes once this one's sends are over, at least a gap after the one that started last. An
-- endpoint its receiver paused (429 with Retry-After: paused_until) gets nothing until then.
--
-- The work is found per endpoint: the endpoints with open deliveries are enumerated on the due index
-- (one index descent each, a loose index scan, whatever their backlog), each one's organization is
-- looked up by primary key, endpoints at their cap or of an organization at its cap are skipped
-- without reading any of their due rows, and each of the others gives at most its room of oldest due
-- rows not in flight (passing its own in-flight ones, at most the cap); the first `max_rows` of those
-- in turn order that fit in `max_bytes` are claimed. A 100k backlog behind one saturated endpoint or
-- organization costs nothing. Every row is reached through an index, in order, whatever the statistics
-- say: sequential and bitmap scans are off here (a bitmap scan would read an endpoint's whole backlog to
-- sort it for its 16 oldest rows), and so are hash and merge joins (the planner cannot know how many
-- rows the per-endpoint limits let through, and would join the claimed rows by walking the whole
-- table). JIT is off: this short statement runs many times a second. It is planned on every call (a
-- generic plan, planned once, took 100 ms a claim in the dispatch benchmark instead of 8). Rows found are
-- reached from there by primary key, as lateral lookups the planner cannot turn round: as plain joins,
-- on a table grown far past its statistics (a new deployment, a burst of thousands of deliveries), it
-- sometimes walked every due row, or every event, once for each row claimed (80 ms a claim instead of 3,
-- in about one benchmark run in three; supabase/tests/outbound_claim_stale_stats.test.sql).
-- A claimed delivery: everything one attempt needs (the dispatcher's claims.ts `Claimed`).
create type private.webhook_claimed as (
  delivery_id uuid,
  lease_token uuid,
  endpoint_id uuid,
  event_id uuid,
  event_type text,
  url text,
  secret text,
  previous_secret text,
  attempt_number integer,
  body text,
  endpoint_full boolean,
  body_bytes integer,
  send_at timestamptz,
  -- The endpoint's custom headers, [{name, value}] as JSON text (null: none): the dispatcher parses each
  -- distinct text once (20261207170000_webhook_custom_headers.sql).
  headers text
);

create function private.webhook_claim(max_rows integer, max_bytes bigint, per_endpoint integer,
                                      per_organization integer, lease_seconds integer)
returns setof private.webhook_claimed
language plpgsql volatile security definer
set search_path = ''
set enable_seqscan = off
set enable_bitmapscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set jit = off
as $$
begin
  perform pg_advisory_xact_lock(hashtextextended('private.webhook_claim', 7306));
  return query
  with recursive active (endpoint_id) as (
    (select d.endpoint_id from public.webhook_deliveries d
      where d.status = any (private.webhook_open_states())
      order by d.endpoint_id limit 1)
    union all
    select (select d.endpoint_id from public.webhook_deliveries d
             where d.status = any (private.webhook_open_states()) and d.endpoint_id > a.endpoint_id
             order by d.endpoint_id limit 1)
    from active a
    where a.endpoint_id is not null
  ), endpoint as materialized (
    -- Each endpoint's organization and rate limit (a paused endpoint is passed by, and so is every
    -- endpoint of a suspended organization: its deliveries stay due until it is resumed,
    -- 20261128150000_platform_console.sql), and its place among that organization's endpoints.
    select a.endpoint_id, e.organization_id, e.rate_limit_per_second,
           row_number() over (partition by e.organization_id order by a.endpoint_id) as nth
    from active a
    cross join lateral (
      select e.organization_id, e.rate_limit_per_second from public.webhook_endpoints e
      where e.id = a.endpoint_id and (e.paused_until is null or e.paused_until <= now())
        and not exists (select from private.organization_suspensions s where s.organization_id = e.organization_id
                        offset 0)
      offset 0
    ) e
    where a.endpoint_id is not null
  ), organization_room as materialized (
    -- An organization's room, counted once (at its first endpoint: CASE runs the count only there) and
    -- given to each of its endpoints, without a join (a join of two CTEs would compare every endpoint
    -- with every organization).
    select c.endpoint_id, c.organization_id, c.rate_limit_per_second,
           max(c.free) over (partition by c.organization_id) as free
    from (
      select ep.endpoint_id, ep.organization_id, ep.rate_limit_per_second,
             case when ep.nth = 1 then
               per_organization - (select count(*)::integer from private.webhook_live_leases l
                                   where l.organization_id = ep.organization_id)
             end as free
      from endpoint ep
    ) c
  ), capped as materialized (
    -- Counted once per endpoint (a plain CTE would count again wherever it is used), and only for
    -- organizations with room; a paced endpoint's next start, looked up only for those.
    select o.endpoint_id, o.organization_id, o.free as organization_free,
           -- The organization named too: whichever lease index the planner takes, it looks up (a full
           -- scan of the other one ties with the lookup while the table is believed empty).
           per_endpoint - (select count(*)::integer from private.webhook_live_leases l
                            where l.endpoint_id = o.endpoint_id and l.organization_id = o.organization_id) as free,
           private.webhook_send_gap(o.rate_limit_per_second) as gap,
           -- Not before the last send that actually started (webhook_endpoint_health keeps its time) plus a
           -- gap: a dispatcher held up sent later than planned. And the clock, not the transaction's
           -- start: a claim along with recorded results runs a little after that.
           case when o.rate_limit_per_second is not null then
             greatest(clock_timestamp(),
                      (select p.next_send_at from private.webhook_endpoint_pace p where p.endpoint_id = o.endpoint_id),
                      (select h.last_attempt_at from public.webhook_endpoint_health h where h.endpoint_id = o.endpoint_id)
                        + private.webhook_send_gap(o.rate_limit_per_second))
           end as pace_from
    from organization_room o
    where o.free > 0
  ), room as materialized (
    -- A paced endpoint's room is also the starts its pace allows within the horizon, given as a block
    -- once the previous block is over (none of its sends in flight, so each one's start is known) and
    -- the next start is at most one gap away. The dispatcher sending a block claims the next one along
    -- with the block's last result; another dispatcher can take it over then, but never send beside a
    -- block still going out, however late that one's sends started.
    select c.endpoint_id, c.organization_id, c.organization_free, c.gap, c.pace_from,
           case when c.gap is null then c.free
                when c.free < per_endpoint or c.pace_from > clock_timestamp() + c.gap then 0
                else least(c.free, ceil(extract(epoch from clock_timestamp() + private.webhook_pace_horizon()
                                                    - c.pace_from) / extract(epoch from c.gap))::integer)
           end as free
    from capped c
  ), candidate as materialized (
    -- An endpoint's oldest due rows not in flight (its in-flight ones are at most the cap).
    select c.id, c.next_attempt_at, c.body_bytes, room.organization_id, room.free, room.organization_free,
           room.gap, room.pace_from
    from room
    cross join lateral (
      select d.id, d.next_attempt_at, d.body_bytes
      from public.webhook_deliveries d
      where d.endpoint_id = room.endpoint_id
        and d.status = any (private.webhook_open_states())
        and d.next_attempt_at <= now()
        -- `offset 0`: a lookup per row by primary key, never an anti-join that compares each row with
        -- every lease (the plan the planner picks while it believes the lease table empty).
        and not exists (select from private.webhook_leases l
                        where l.delivery_id = d.id
                          and (l.leased_until > now() or l.claims >= private.webhook_max_unrecorded_claims())
                        offset 0)
      order by d.next_attempt_at
      limit least(room.free, room.organization_free, max_rows)
    ) c
    where room.free > 0
  ), taken as materialized (
    -- Organizations in turn, each within its room; the bytes of the rows up to each one.
    select t.id, t.next_attempt_at, t.free, t.organization_free, t.gap, t.pace_from,
           sum(t.body_bytes) over (order by t.turn, t.next_attempt_at, t.id) as bytes_so_far
    from (
      select c.*, row_number() over (partition by c.organization_id order by c.next_attempt_at, c.id) as turn
      from candidate c
    ) t
    where t.turn <= t.organization_free
    order by t.turn, t.next_attempt_at, t.id
    limit max_rows
  ), chosen as materialized (
    -- Only the rows taken are locked (a row lock is a write): skipping any a result being recorded or
    -- an operation holds, and checking again that each is still due as it is locked. A paced endpoint's
    -- rows get their starts in order, one gap apart.
    select l.id, l.endpoint_id, l.organization_id, l.event_id, l.attempt_count, l.body_bytes, taken.free,
           taken.organization_free, taken.gap,
           taken.pace_from + taken.gap * (row_number() over (partition by l.endpoint_id
                                                             order by taken.next_attempt_at, l.id) - 1) as send_at
    from taken
    cross join lateral (
      select d.id, d.endpoint_id, d.organization_id, d.event_id, d.attempt_count, d.body_bytes
      from public.webhook_deliveries d
      where d.id = taken.id
        and d.status = any (private.webhook_open_states()) and d.next_attempt_at <= now()
      for no key update of d skip locked
    ) l
    where taken.bytes_so_far <= max_bytes
  ), paced as (
    -- The next start after this claim's, for every paced endpoint it took rows of.
    insert into private.webhook_endpoint_pace as p (endpoint_id, next_send_at)
    select chosen.endpoint_id, max(chosen.send_at) + min(chosen.gap)
    from chosen
    where chosen.gap is not null
    group by chosen.endpoint_id
    on conflict (endpoint_id) do update set next_send_at = excluded.next_send_at
  ), claim as (
    select gen_random_uuid() as token
  ), leased as (
    -- A lease run out (its dispatcher gone) is taken over, and counts one more claim without a result.
    insert into private.webhook_leases as l (delivery_id, endpoint_id, organization_id, token, leased_until)
    select chosen.id, chosen.endpoint_id, chosen.organization_id, claim.token,
           now() + make_interval(secs => lease_seconds)
    from chosen, claim
    on conflict (delivery_id) do update
      set endpoint_id = excluded.endpoint_id, organization_id = excluded.organization_id,
          token = excluded.token, leased_until = excluded.leased_until, claims = l.claims + 1
  )
  -- `offset 0` keeps each lookup a lookup: without it the planner flattens it back into a join.
  select c.id, claim.token, c.endpoint_id, c.event_id, ev.type, e.url, e.secret, e.previous_secret,
         c.attempt_count + 1, ev.body,
         count(*) over (partition by c.endpoint_id) >= c.free
           or count(*) over (partition by c.organization_id) >= c.organization_free,
         c.body_bytes, c.send_at, e.headers
  from chosen c
  cross join claim
  cross join lateral (
    select ev.type, ev.payload::text as body from public.webhook_events ev where ev.id = c.event_id offset 0
  ) ev
  cross join lateral (
    select e.url, e.secret,
           case when e.previous_secret_expires_at > now() then e.previous_secret end as previous_secret,
           -- Looked up only for an endpoint that has custom headers: the others pay nothing.
           case when e.custom_headers <> '[]'::jsonb then
             (select h.headers::text from private.webhook_endpoint_headers h where h.endpoint_id = e.id)
           end as headers
    from public.webhook_endpoints e where e.id = c.endpoint_id offset 0
  ) e
  -- A paced endpoint's rows in the order of their starts (the dispatcher queues them so).
  order by c.send_at nulls first;
end;
$$;

-- The system disables endpoints, saying why, and tells the organization: the one way the server turns
-- an endpoint off (410 Gone in webhook_record_results, 5 days of failures in
-- webhook_disable_failing_endpoints). The disable trigger ends their open deliveries with the reason;
-- then a webhook.endpoint.disabled event goes to the organization's other enabled endpoints subscribed
-- to it (the disabled one is no longer enabled, so the enqueue passes it by). An administrator's own
-- disable is a plain update and notifies nobody: whoever did it knows. Endpoints already disabled are
-- left alone (no second notice). `targets`: [{endpoint_id, reason}]; returns how many were disabled.
create function private.webhook_disable_endpoints(targets jsonb) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  items jsonb;
begin
  with target as (
    select distinct on (t.endpoint_id) t.endpoint_id, t.reason
    from jsonb_to_recordset(targets) as t(endpoint_id uuid, reason text)
    order by t.endpoint_id
  ), disabled as (
    update public.webhook_endpoints e
       set enabled = false, disabled_reason = t.reason
      from target t
     where e.id = t.endpoint_id and e.enabled
    returning e.id, e.organization_id, e.url, e.description, e.enabled, e.disabled_reason, e.disabled_at
  )
  select jsonb_agg(jsonb_build_object(
           'organization_id', d.organization_id,
           -- Never the secret: the event goes to other receivers.
           'row', jsonb_build_object('id', d.id, 'url', d.url, 'description', d.description,
                                     'enabled', d.enabled, 'disabled_reason', d.disabled_reason,
                                     'disabled_at', d.disabled_at),
           'delta', jsonb_build_object('enabled', d.enabled, 'disabled_reason', d.disabled_reason,
                                       'disabled_at', d.disabled_at)))
    into items
    from disabled d;
  perform private.webhook_enqueue('webhook.endpoint.disabled', items);
  return coalesce(jsonb_array_length(items), 0);
end;
$$;

-- Records a batch of attempt outcomes in one statement each for attempts, deliveries and endpoints.
-- results: [{delivery_id, endpoint_id, lease_token, outcome: delivered|failed|gone, attempted_at,
--            duration_ms, response_status, error, response_excerpt, retry_after_seconds,
--            request_headers, response_headers}]
-- Every attempt is kept. A result whose lease was lost (it ran out and another claim took it over, or
-- housekeeping set the delivery aside, or an operation fenced it) still counts as an attempt but moves
-- the state only if it is a success; a result ends its own lease, never another's.
--
-- Each delivery and its lease are read once and written once, by primary key, whatever the planner's
-- statistics say (sequential scans, hash and merge joins are off for this function): on tables not
-- analyzed yet it would otherwise reach a batch of deliveries through a scan of every due row. The
-- lease is looked up per result (a lateral lookup, which no estimate can turn round) and deleted by the
-- address that lookup found: the lease table is often empty when ANALYZE samples it (between batches),
-- and with statistics saying so a join compared every lease with every result, twice (3x the time of a
-- batch, outbound_record_stale_stats.test.sql). No JIT, as for the claim. Planned once per session (a
-- generic plan): with those settings its plan does not depend on the batch, and planning was a third of
-- the cost of a small batch.
create function private.webhook_record_results(results jsonb) returns integer
language plpgsql volatile security definer
set search_path = ''
set enable_seqscan = off
set enable_hashjoin = off
set enable_mergejoin = off
set jit = off
set plan_cache_mode = force_generic_plan
as $$
declare
  updated integer;
begin
  with r as materialized (
    select x.*, d.organization_id, d.status, d.attempt_count,
           coalesce(d.first_attempt_at, x.attempted_at) as window_start,
           l.lease is not null as holds_lease, l.lease
    from jsonb_to_recordset(results) as x(
      delivery_id uuid, endpoint_id uuid, lease_token uuid, outcome text, attempted_at timestamptz,
      duration_ms integer, response_status integer, error text, response_excerpt text,
      retry_after_seconds integer, request_headers jsonb, response_headers jsonb)
    join public.webhook_deliveries d on d.id = x.delivery_id
    left join lateral (
      select l.ctid as lease from private.webhook_leases l
      where l.delivery_id = x.delivery_id and l.token = x.lease_token offset 0
    ) l on true
  ), ended as (
    -- The attempt is over: its lease ends (a lease taken over by another claim is that claim's: every
    -- takeover writes a new row version, which no address found above points at).
    delete from private.webhook_leases l
     where l.ctid = any (array(select r.lease from r where r.lease is not null))
  ), attempt as (
    insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
      duration_ms, response_status, error, response_excerpt, request_headers, response_headers)
    select r.organization_id, r.delivery_id, r.attempt_count + 1, r.attempted_at, r.duration_ms,
           r.response_status, left(r.error, 1000), left(r.response_excerpt, 1024), r.request_headers,
           r.response_headers
    from r
  ), decided as (
    select r.*,
           case
             when r.outcome = 'delivered' then 'delivered'
             when not r.holds_lease then r.status
             when r.outcome = 'gone' then 'permanently_failed'
             when r.window_start + private.webhook_retry_window() <= now() then 'permanently_failed'
             else 'retrying'
           end as new_status
    from r
    where r.status = any (private.webhook_open_states())
  )
  update public.webhook_deliveries d
     set status = decided.new_status,
         attempt_count = d.attempt_count + 1,
         first_attempt_at = decided.window_start,
         last_attempt_at = decided.attempted_at,
         last_response_status = decided.response_status,
         last_error = left(decided.error, 1000),
         delivered_at = case when decided.new_status = 'delivered' then now() end,
         next_attempt_at = case
           when decided.new_status in ('delivered', 'permanently_failed') then null
           when not decided.holds_lease then d.next_attempt_at
           else least(
             now() + greatest(
               private.webhook_retry_delay(decided.attempt_count + 1),
               make_interval(secs => least(coalesce(decided.retry_after_seconds, 0),
                                           extract(epoch from private.webhook_retry_after_cap())))),
             decided.window_start + private.webhook_retry_window())
         end
    from decided
   where d.id = decided.delivery_id;
  get diagnostics updated = row_count;

  -- 410 Gone: the receiver asks us to stop. The endpoint is disabled (its other open deliveries end),
  -- the reason is kept for the settings page, and the organization is told, as for 5 days of failures.
  perform private.webhook_disable_endpoints(jsonb_agg(jsonb_build_object(
            'endpoint_id', x ->> 'endpoint_id',
            'reason', format('the endpoint answered 410 Gone at %s',
                             to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))))
    from jsonb_array_elements(results) x
   where x ->> 'outcome' = 'gone'
  having count(*) > 0;

  -- 429 Too Many Requests with Retry-After: the receiver asks for a pause. The whole endpoint waits
  -- (the claim passes it by), not only this delivery, within the cap on Retry-After; a later pause
  -- never shortens an earlier one.
  update public.webhook_endpoints e
     set paused_until = p.until
    from (select (x ->> 'endpoint_id')::uuid as endpoint_id,
                 max(now() + make_interval(secs => least((x ->> 'retry_after_seconds')::integer,
                                                         extract(epoch from private.webhook_retry_after_cap()))))
                   as until
          from jsonb_array_elements(results) x
          where (x ->> 'response_status')::integer = 429 and (x ->> 'retry_after_seconds')::integer > 0
          group by 1) p
   where e.id = p.endpoint_id and (e.paused_until is null or e.paused_until < p.until);
  return updated;
end;
$$;

-- What a busy dispatcher does each time sends end: record their outcomes, then claim again, in one round
-- trip and one transaction. Recording ends the leases, so an endpoint that was at its cap has room by
-- the time the claim counts it (the claim's own statement sees the recorded rows). `max_rows` 0 only
-- records. Returns the claimed rows, as webhook_claim.
create function private.webhook_record_and_claim(results jsonb, max_rows integer, max_bytes bigint,
                                                 per_endpoint integer, per_organization integer,
                                                 lease_seconds integer)
returns setof private.webhook_claimed
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  perform private.webhook_record_results(results);
  if max_rows > 0 then
    return query select * from private.webhook_claim(max_rows, max_bytes, per_endpoint, per_organization,
                                                     lease_seconds);
  end if;
end;
$$;

-- A stopping dispatcher gives back what it claimed and never started sending (the runtime's shutdown
-- notice, SIGTERM to the dev server): the lease ends at once and its claim is not counted as one without a
-- result, so the delivery is due again now, for the next run, without an attempt, its lease's minute or
-- a step towards being set aside. Only a lease the dispatcher still holds (its token) is given back; one
-- taken over meanwhile is the other claim's. Returns how many were given back.
create function private.webhook_release_leases(leases jsonb) returns integer
language plpgsql volatile security definer
set search_path = ''
set jit = off
as $$
declare
  released integer;
begin
  with given as (
    select x.delivery_id, x.lease_token
    from jsonb_to_recordset(leases) as x(delivery_id uuid, lease_token uuid)
  ), ended as (
    delete from private.webhook_leases l
     using given g
     where l.delivery_id = g.delivery_id and l.token = g.lease_token and l.claims <= 1
    returning 1
  ), expired as (
    -- Taken over from a dispatcher that died: the earlier claims without a result still count.
    update private.webhook_leases l
       set leased_until = now(), claims = l.claims - 1, token = gen_random_uuid()
      from given g
     where l.delivery_id = g.delivery_id and l.token = g.lease_token and l.claims > 1
    returning 1
  )
  select (select count(*) from ended) + (select count(*) from expired) into released;
  return released;
end;
$$;

-- Housekeeping, every minute from pg_cron whether or not a dispatcher runs. Every delivery ends:
--   1. a delivery claimed private.webhook_max_unrecorded_claims() times without a recorded result,
--      its last lease run out, is set aside (permanently_failed, the reason in last_error for Webhook
--      Logs; an admin can redeliver it): a dispatcher died during each of those attempts, and claiming
--      it first again would kill the next one too while everything behind it waits;
--   2. open deliveries whose 24-hour window has closed become permanently_failed, even if no
--      dispatcher came by for their last attempt; the window runs from the first attempt or, for a
--      delivery never attempted (its dispatchers died, or it waited behind a backlog), from when it
--      became due (created, or sent again by an operation);
--   3. leases run out of deliveries that are final or gone are removed (those of open deliveries stay:
--      they count the claims without a result, and the next claim takes them over), and so is the pace
--      of endpoints idle for a minute (a next start in the past means the same as none);
--   4. endpoints that have failed every attempt for 5 days are disabled
--      (private.webhook_disable_failing_endpoints(), with endpoint health).
create function private.webhook_housekeeping() returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  set_aside integer;
  failed integer;
  expired integer;
  disabled integer;
  alerts integer;
begin
  with poisoned as (
    delete from private.webhook_leases l
     where l.claims >= private.webhook_max_unrecorded_claims() and l.leased_until <= now()
    returning l.delivery_id, l.claims
  )
  update public.webhook_deliveries d
     set status = 'permanently_failed',
         next_attempt_at = null,
         last_error = format('set aside: claimed %s times without a recorded result (the dispatcher stopped '
                             'during each attempt)', p.claims)
    from poisoned p
   where d.id = p.delivery_id and d.status = any (private.webhook_open_states());
  get diagnostics set_aside = row_count;

  update public.webhook_deliveries d
     set status = 'permanently_failed',
         next_attempt_at = null,
         last_error = coalesce(last_error || '; ', '') || case
           when first_attempt_at is null then 'not attempted within the 24 h retry window'
           else 'retry window of 24 h closed' end
   where status = any (private.webhook_open_states())
     and next_attempt_at <= now()
     and coalesce(first_attempt_at, next_attempt_at) + private.webhook_retry_window() <= now()
     and not exists (select from private.webhook_live_leases l where l.delivery_id = d.id) -- none in flight
     -- A suspended organization's deliveries wait; resuming gives their windows the time back.
     and not exists (select from private.organization_suspensions s where s.organization_id = d.organization_id);
  get diagnostics failed = row_count;

  delete from private.webhook_leases l
   where l.leased_until <= now()
     and not exists (select from public.webhook_deliveries d
                     where d.id = l.delivery_id and d.status = any (private.webhook_open_states()));
  get diagnostics expired = row_count;
  delete from private.webhook_endpoint_pace p where p.next_send_at < now() - interval '1 minute';

  disabled := private.webhook_disable_failing_endpoints();
  -- Failing and recovered endpoints, told to the alert endpoints (20261129110000_endpoint_alerts.sql).
  alerts := private.webhook_endpoint_alerts();

  return jsonb_build_object('set_aside', set_aside, 'permanently_failed', failed, 'expired_leases', expired,
                            'disabled_endpoints', disabled, 'endpoint_alerts', alerts);
end;
$$;

-- Server-side only: the dispatcher connects as the database owner (SUPABASE_DB_URL).
revoke all on function private.webhook_retry_window(), private.webhook_retry_delay(integer),
  private.webhook_retry_after_cap(), private.webhook_disable_endpoints(jsonb),
  private.webhook_claim(integer, bigint, integer, integer, integer), private.webhook_record_results(jsonb),
  private.webhook_record_and_claim(jsonb, integer, bigint, integer, integer, integer),
  private.webhook_release_leases(jsonb), private.webhook_housekeeping() from public, authenticated;
grant execute on function private.webhook_claim(integer, bigint, integer, integer, integer),
  private.webhook_record_results(jsonb),
  private.webhook_record_and_claim(jsonb, integer, bigint, integer, integer, integer),
  private.webhook_release_leases(jsonb), private.webhook_housekeeping() to service_role;
