-- Erasing a person: an organization's admin erases one member, and every stored copy of that member's
-- personal data goes with it, in bounded batches (a hosted Edge Function has 2 s of CPU, and one person
-- can appear in thousands of rows). What is found by which terms, and what becomes of each kind of row:
-- See docs/configuration-api.md#erasing-a-person
--
-- Terms live in private.member_erasure_work only while the erasure runs, never as a hash (a hash of an
-- e-mail address or phone number can be reversed by guessing). public.erase_member() captures them,
-- deletes the member row and creates the record in one transaction; private.erasure_step() then does
-- one bounded batch, called by the configuration API while its request's time allows and by the
-- `person-erasure` cron job after that. Steps of one erasure never run at once (its work row is locked,
-- skip locked).

-- The record ---------------------------------------------------------------------------------------------
create table public.member_erasures (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  -- The id the member had (the row itself is gone): an opaque id, not personal data on its own.
  member_id uuid not null,
  requested_by uuid references auth.users (id) on delete set null,
  requested_at timestamptz not null default now(),
  -- The kind of rows being worked through; 'done' once finished.
  stage text not null default 'whatsapp'
    check (stage in ('whatsapp', 'inbound_log', 'events', 'attempts', 'mail', 'settle', 'done')),
  -- Rows removed or redacted, per kind: {"members": 1, "webhook_events": 12, ...}
  counts jsonb not null default '{}'::jsonb,
  steps integer not null default 0,
  finished_at timestamptz,
  check ((stage = 'done') = (finished_at is not null))
);
create index member_erasures_organization_idx on public.member_erasures (organization_id, requested_at desc);
-- One erasure of a member at a time; the cron job finds the running ones.
create unique index member_erasures_running_idx on public.member_erasures (organization_id, member_id)
  where finished_at is null;
create index member_erasures_member_idx on public.member_erasures (organization_id, member_id);

select private.create_tenant_triggers('member_erasures');

-- Admins of the organization read its records; only the functions below write them.
revoke all on public.member_erasures from anon, authenticated;
grant select on public.member_erasures to config_api;
select private.create_admin_policies('member_erasures', '{select}');

-- The work state of a running erasure: its terms and where it is. Server only; deleted at the end.
create table private.member_erasure_work (
  erasure_id uuid primary key references public.member_erasures (id) on delete cascade,
  organization_id uuid not null,
  member_id uuid not null,
  -- Lower-cased; searched for as substrings of payloads, bodies and errors.
  terms text[] not null,
  -- Normalized phone numbers and WhatsApp user ids: the keys of the member's threads.
  phones text[] not null,
  user_ids text[] not null,
  -- Keyset position of the current stage.
  cursor_at timestamptz,
  cursor_id uuid,
  -- Deliveries that were in flight when their event was redacted: their attempt's result (and response
  -- excerpt) is recorded after that, so the erasure waits for them and cleans their attempts last.
  in_flight uuid[] not null default '{}'
);
revoke all on private.member_erasure_work from public, anon, authenticated;

-- Helpers -----------------------------------------------------------------------------------------------
-- Whether a text mentions one of the (lower-cased) terms: as a whole token, not inside a longer word,
-- number or address. A term is a value staff can type (a member's e-mail or phone, a donation's provider
-- id, a thread's user id), and as a mere substring "member" or "e" would match every payload of the
-- organization and erase everyone's history. A term is bounded where the text has no letter, digit,
-- `_`, `@`, `-` or `.` next to it (a sentence's final full stop still ends a term; a `+` before a number
-- does too). strpos first: the regular expression runs only on texts that contain the term at all.
create function private.erasure_mentions(txt text, terms text[]) returns boolean
language sql immutable parallel safe
set search_path = ''
as $$
  select txt is not null and exists (
    select 1 from (select lower(txt) as l) x, unnest(terms) t
     where strpos(x.l, t) > 0
       and x.l ~ ('(?<![[:alnum:]_@.-])' || regexp_replace(t, '([^[:alnum:][:space:]])', '\\\1', 'g')
                  || '(?![[:alnum:]_@-])(?!\.[[:alnum:]_])'))
$$;

-- Whether a provider's id or a WhatsApp user id (typed by staff as often as set by a provider) can
-- be a term: at least 6 characters with a digit (event types, JSON keys, statuses and words have none),
-- no amount alone (a letter too), and neither a UUID (the organization's, a member's, an event's id are
-- in every payload about them) nor anything with JSON's punctuation.
create function private.erasure_identifier(id text, org uuid) returns boolean
language sql immutable
set search_path = ''
as $$
  select length(id) >= 6 and id ~ '[0-9]' and id ~ '[[:alpha:]]' and id !~ '["{}:,[:space:]]'
     and lower(id) !~ '^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$'
     and strpos(lower(id), org::text) = 0
$$;

-- Adds `n` to one count of the record.
create function private.erasure_add(counts jsonb, kind text, n bigint) returns jsonb
language sql immutable
set search_path = ''
as $$
  select case when n = 0 then counts
              else counts || jsonb_build_object(kind, coalesce((counts ->> kind)::bigint, 0) + n) end
$$;

-- Starting: the admin's call ------------------------------------------------------------------------------
-- An admin of the active organization erases one of its members. Returns the erasure's id. A member of
-- another organization and an id that does not exist answer alike (P0002), so ids cannot be probed;
-- asking again for a member already erased (or being erased) returns that erasure.
create function public.erase_member(member_id uuid) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  org uuid := private.admin_organization_id();
  m public.members;
  erasure uuid;
  phones text[];
  user_ids text[];
  terms text[];
  counts jsonb := '{}';
  n bigint;
begin
  if org is null then
    raise exception 'only admins of the active organization can erase people' using errcode = '42501';
  end if;
  select * into m from public.members x where x.id = erase_member.member_id and x.organization_id = org
    for update;
  if m.id is null then
    select e.id into erasure from public.member_erasures e
     where e.organization_id = org and e.member_id = erase_member.member_id
     order by e.finished_at is null desc, e.requested_at desc limit 1;
    if erasure is null then
      raise exception 'no such member' using errcode = 'P0002';
    end if;
    return erasure;
  end if;

  -- At most 20 running erasures per organization: the cron job gives every running erasure a batch in
  -- turn, so an organization erasing thousands of members at once would take every other one's turns.
  if (select count(*) from (select 1 from public.member_erasures e
                             where e.organization_id = org and e.finished_at is null limit 20) r) >= 20 then
    raise exception 'this organization has 20 erasures running; erase more once they finish'
      using errcode = '54000';
  end if;

  -- The threads linked to the member (matched through a national spelling, their key may differ from
  -- the member's own number), and the member's own number unless another member shares it.
  select coalesce(array_agg(distinct c.contact_phone) filter (where c.contact_phone is not null), '{}'),
         coalesce(array_agg(distinct c.contact_user_id) filter (where c.contact_user_id is not null), '{}')
    into phones, user_ids
    from public.whatsapp_conversations c
   where c.organization_id = org and c.member_id = m.id;
  if length(m.primary_phone_normalized) >= 7 and not exists (
    select 1 from public.members o
    where o.organization_id = org and o.id <> m.id and o.primary_phone_normalized = m.primary_phone_normalized
  ) then
    phones := array(select distinct p from unnest(phones || m.primary_phone_normalized) p);
  end if;
  -- A thread's user id is a term only when it looks like one (see private.erasure_identifier).
  -- Numbers of 7 digits or more only, as for the member's own, and none that is another member's (a
  -- thread's number is typed by staff too, and "2500" would match every amount of 2500, another member's
  -- number all of that member's rows); the threads themselves are found by exact number.
  terms := array(select p from unnest(phones) p
                  where length(p) >= 7 and not exists (
                    select 1 from public.members o
                     where o.organization_id = org and o.id <> m.id and o.primary_phone_normalized = p))
           || array(select u from unnest(user_ids) u where private.erasure_identifier(u, org));
  if length(m.primary_phone_normalized) >= 7 and m.primary_phone_normalized = any (phones)
     and lower(trim(m.primary_phone)) <> m.primary_phone_normalized then
    terms := terms || lower(trim(m.primary_phone));
  end if;
  if position('@' in coalesce(m.email, '')) > 1 and not exists (
    select 1 from public.members o
    where o.organization_id = org and o.id <> m.id and lower(trim(o.email)) = lower(trim(m.email))
  ) then
    terms := terms || lower(trim(m.email));
  end if;
  -- Provider ids of the member's payments and subscriptions: their notifications name the payer.
  terms := terms || array(
    select lower(d.gateway_payment_id) from public.donations d
     where d.organization_id = org and d.member_id = m.id and private.erasure_identifier(d.gateway_payment_id, org)
    union
    select lower(r.gateway_subscription_id) from public.recurring_donations r
     where r.organization_id = org and r.member_id = m.id
       and private.erasure_identifier(r.gateway_subscription_id, org));
  terms := array(select distinct t from unnest(terms) t where t <> '');

  select count(*) into n from public.attendance a where a.organization_id = org and a.member_id = m.id;
  counts := private.erasure_add(counts, 'attendance', n);
  select count(*) into n from public.donations d where d.organization_id = org and d.member_id = m.id;
  counts := private.erasure_add(counts, 'donations_unlinked', n);
  select count(*) into n from public.recurring_donations r where r.organization_id = org and r.member_id = m.id;
  counts := private.erasure_add(counts, 'recurring_donations_unlinked', n);
  select count(*) into n from public.workflow_runs w where w.organization_id = org and w.member_id = m.id;
  counts := private.erasure_add(counts, 'workflow_runs_unlinked', n);
  -- The row goes; its attendance with it, and the other records keep no link to it (foreign keys).
  delete from public.members x where x.id = m.id;
  counts := private.erasure_add(counts, 'members', 1);

  insert into public.member_erasures (organization_id, member_id, requested_by, counts)
  values (org, m.id, auth.uid(), counts)
  returning id into erasure;
  insert into private.member_erasure_work (erasure_id, organization_id, member_id, terms, phones, user_ids)
  values (erasure, org, m.id, terms, phones, user_ids);
  return erasure;
end;
$$;

-- One batch ---------------------------------------------------------------------------------------------
-- Does at most `batch_size` rows of the erasure's current stage in the caller's transaction, moves the
-- stage on when it is through, and returns the record as JSON. Null when another caller is working on
-- this erasure right now, or it is not running.
create function private.erasure_step(p_erasure_id uuid, batch_size integer default 500) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  w private.member_erasure_work;
  e public.member_erasures;
  org uuid;
  n bigint;
  m bigint;
  k bigint;
  last_at timestamptz;
  last_id uuid;
  done boolean := false;
  freed text[];
  late uuid[];
begin
  select * into w from private.member_erasure_work x where x.erasure_id = p_erasure_id for update skip locked;
  if w.erasure_id is null then
    return null;
  end if;
  select * into e from public.member_erasures x where x.id = p_erasure_id for update;
  org := w.organization_id;

  if e.stage = 'whatsapp' then
    -- Messages first, a batch at a time (a thread can hold thousands), with the receipts of each.
    with thread as (
      select c.id from public.whatsapp_conversations c
       where c.organization_id = org and (c.contact_phone = any (w.phones) or c.contact_user_id = any (w.user_ids))
    ), gone as (
      delete from public.whatsapp_messages x
       where x.id in (select wm.id from public.whatsapp_messages wm
                       where wm.conversation_id in (select id from thread) limit batch_size)
      returning x.provider_message_id
    )
    select coalesce(array_agg(provider_message_id), '{}') into freed from gone;
    n := cardinality(freed);
    e.counts := private.erasure_add(e.counts, 'whatsapp_messages', n);
    delete from public.whatsapp_message_receipts r
     where r.organization_id = org and r.provider_message_id = any (freed);
    get diagnostics m = row_count;
    if n < batch_size then
      delete from public.whatsapp_conversations c
       where c.organization_id = org and (c.contact_phone = any (w.phones) or c.contact_user_id = any (w.user_ids));
      get diagnostics k = row_count;
      e.counts := private.erasure_add(e.counts, 'whatsapp_conversations', k);
      -- Receipts waiting for a message that never came, addressed to the member.
      delete from public.whatsapp_message_receipts r
       where r.id in (select x.id from public.whatsapp_message_receipts x
                       where x.organization_id = org
                         and (x.recipient_phone = any (w.phones) or x.recipient_user_id = any (w.user_ids))
                       limit batch_size);
      get diagnostics k = row_count;
      m := m + k;
      done := k < batch_size;
    end if;
    e.counts := private.erasure_add(e.counts, 'whatsapp_receipts', m);

  elsif e.stage = 'inbound_log' then
    -- The organization's log, newest first, by keyset on its (organization_id, received_at, id) index:
    -- each row is read once.
    with batch as (
      select l.id, l.received_at,
             private.erasure_mentions(concat_ws(' ', l.payload::text, l.raw_body, l.error, l.result::text), w.terms)
               as hit
        from public.inbound_webhook_log l
       where l.organization_id = org
         and (l.received_at, l.id) < (coalesce(w.cursor_at, 'infinity'), coalesce(w.cursor_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
       order by l.received_at desc, l.id desc
       limit batch_size
    ), redacted as (
      update public.inbound_webhook_log l
         set payload = case when l.signature_valid then '{"redacted": true}'::jsonb end,
             raw_body = null,
             error = case when private.erasure_mentions(l.error, w.terms) then 'redacted' else l.error end,
             result = case when private.erasure_mentions(l.result::text, w.terms) then null else l.result end,
             redacted_at = now(),
             updated_at = now()
        from batch b
       where l.id = b.id and b.hit
      returning 1
    )
    select (select count(*) from batch), (select count(*) from redacted),
           (select b.received_at from batch b order by b.received_at, b.id limit 1),
           (select b.id from batch b order by b.received_at, b.id limit 1)
      into n, m, last_at, last_id;
    e.counts := private.erasure_add(e.counts, 'inbound_webhook_log', m);
    done := n < batch_size;

  elsif e.stage = 'events' then
    -- In id order on the (organization_id, id) unique index: a bulk insert's events share one
    -- created_at, and a keyset on it would sort all of them for every batch.
    with batch as (
      select ev.id,
             (ev.payload #>> '{data,row,id}' = w.member_id::text and ev.type like 'member.%')
               or ev.payload #>> '{data,row,member_id}' = w.member_id::text
               or ev.payload #>> '{data,delta,member_id}' = w.member_id::text
               or private.erasure_mentions(ev.payload::text, w.terms) as hit
        from public.webhook_events ev
       where ev.organization_id = org and ev.id > coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000')
       order by ev.id
       limit batch_size
    ), redacted as (
      update public.webhook_events ev
         set payload = jsonb_build_object(
               'id', ev.payload -> 'id', 'type', ev.payload -> 'type', 'created_at', ev.payload -> 'created_at',
               'organization_id', ev.payload -> 'organization_id', 'redacted', true,
               'data', jsonb_build_object('row', jsonb_strip_nulls(jsonb_build_object('id', ev.payload #> '{data,row,id}')),
                                          'delta', '{}'::jsonb)),
             redacted_at = now()
        from batch b
       where ev.id = b.id and b.hit
      returning ev.id
    ), ended as (
      -- Still due: never sent with a gutted body (receivers would act on an event without its data).
      update public.webhook_deliveries d
         set status = 'permanently_failed', next_attempt_at = null,
             last_error = 'not sent: the person this event is about was erased'
        from redacted r
       where d.event_id = r.id and d.status = any (private.webhook_open_states())
      returning d.id
    ), fenced as (
      -- An attempt in flight completes, but its result no longer moves the state.
      update private.webhook_leases l set token = gen_random_uuid()
        from ended x
       where l.delivery_id = x.id and l.leased_until > now()
      returning l.delivery_id
    )
    select (select count(*) from batch), (select count(*) from redacted), (select count(*) from ended),
           (select coalesce(array_agg(delivery_id), '{}') from fenced),
           (select b.id from batch b order by b.id desc limit 1)
      into n, m, k, late, last_id;
    e.counts := private.erasure_add(private.erasure_add(e.counts, 'webhook_events', m), 'webhook_deliveries_ended', k);
    w.in_flight := w.in_flight || late;
    done := n < batch_size;

  elsif e.stage = 'attempts' then
    -- Every delivery of the organization: the attempts of redacted events lose what the receiver sent
    -- back (a receiver may echo the body, in its response or its headers), and any excerpt, header or
    -- error mentioning a term goes too. The headers we sent name no one (ids, times, cut signatures).
    with batch as (
      select d.id, d.created_at, ev.redacted_at is not null as of_redacted
        from public.webhook_deliveries d
        join public.webhook_events ev on ev.id = d.event_id
       where d.organization_id = org
         and (d.created_at, d.id) > (coalesce(w.cursor_at, '-infinity'), coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000'))
       order by d.created_at, d.id
       limit batch_size
    ), scrubbed as (
      update public.webhook_delivery_attempts a
         set response_excerpt = case when b.of_redacted or private.erasure_mentions(a.response_excerpt, w.terms)
                                     then null else a.response_excerpt end,
             response_headers = case when b.of_redacted or private.erasure_mentions(a.response_headers::text, w.terms)
                                     then null else a.response_headers end,
             error = case when private.erasure_mentions(a.error, w.terms) then 'redacted' else a.error end
        from batch b
       where a.delivery_id = b.id
         and ((b.of_redacted and (a.response_excerpt is not null or a.response_headers is not null))
              or private.erasure_mentions(concat_ws(' ', a.response_excerpt, a.error, a.response_headers::text),
                                          w.terms))
      returning 1
    ), errors as (
      update public.webhook_deliveries d set last_error = 'redacted'
        from batch b
       where d.id = b.id and private.erasure_mentions(d.last_error, w.terms)
      returning 1
    )
    select (select count(*) from batch), (select count(*) from scrubbed) + (select count(*) from errors),
           (select b.created_at from batch b order by b.created_at desc, b.id desc limit 1),
           (select b.id from batch b order by b.created_at desc, b.id desc limit 1)
      into n, m, last_at, last_id;
    e.counts := private.erasure_add(e.counts, 'webhook_attempts', m);
    done := n < batch_size;

  elsif e.stage = 'mail' then
    select private.mail_erase(org, w.terms, batch_size) into n;
    e.counts := private.erasure_add(e.counts, 'mails', n);
    delete from public.organization_invitations i where i.organization_id = org and i.email = any (w.terms);
    get diagnostics m = row_count;
    e.counts := private.erasure_add(e.counts, 'invitations', m);
    done := n < batch_size;

  end if;

  e.steps := e.steps + 1;
  if done then
    e.stage := case e.stage when 'whatsapp' then 'inbound_log' when 'inbound_log' then 'events'
                            when 'events' then 'attempts' when 'attempts' then 'mail'
                            when 'mail' then 'settle' else 'done' end;
    last_at := null;
    last_id := null;
  end if;
  -- Attempts that were in flight when their event was redacted: once recorded (their lease is gone),
  -- their response excerpts go too. Leases run out within the send timeout plus 30 s.
  if e.stage = 'settle'
     and not exists (select 1 from private.webhook_live_leases l where l.delivery_id = any (w.in_flight)) then
    update public.webhook_delivery_attempts a set response_excerpt = null, response_headers = null
     where a.delivery_id = any (w.in_flight) and (a.response_excerpt is not null or a.response_headers is not null);
    get diagnostics m = row_count;
    e.counts := private.erasure_add(e.counts, 'webhook_attempts', m);
    e.stage := 'done';
  end if;
  update public.member_erasures x set stage = e.stage, counts = e.counts, steps = e.steps,
         finished_at = case when e.stage = 'done' then now() end
   where x.id = e.id;
  if e.stage = 'done' then
    -- The terms go with the work: nothing erased is kept.
    delete from private.member_erasure_work x where x.erasure_id = e.id;
  else
    update private.member_erasure_work x set cursor_at = last_at, cursor_id = last_id, in_flight = w.in_flight
     where x.erasure_id = e.id;
  end if;
  return private.erasure_json(e.id);
end;
$$;

-- An erasure as the API shows it.
create function private.erasure_json(p_erasure_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object('id', e.id, 'member_id', e.member_id, 'requested_by', e.requested_by,
           'requested_at', e.requested_at, 'finished_at', e.finished_at,
           'status', case when e.finished_at is null then 'running' else 'done' end,
           'stage', e.stage, 'steps', e.steps, 'counts', e.counts)
  from public.member_erasures e where e.id = p_erasure_id
$$;

-- The scheduled run ---------------------------------------------------------------------------------------
-- Works through every running erasure, a batch per transaction, for at most `time_budget`: one batch of
-- each in turn, so one organization's long erasure does not hold up another's. A procedure (no SET
-- clause, not security definer) so it can commit between batches; pg_cron runs it every minute.
create procedure private.erasure_run(
  batch_size integer default 500,
  time_budget interval default interval '50 seconds'
)
language plpgsql
as $$
declare
  started timestamptz := clock_timestamp();
  next_id uuid;
  progress jsonb;
  waiting uuid[] := '{}';
  this_round uuid[] := '{}';
begin
  loop
    select w.erasure_id into next_id from private.member_erasure_work w
     join public.member_erasures e on e.id = w.erasure_id
     where w.erasure_id <> all (waiting || this_round)
     order by e.requested_at
     limit 1 for update of w skip locked;
    if next_id is null and cardinality(this_round) > 0 then
      this_round := '{}';
      continue;
    end if;
    exit when next_id is null;
    this_round := this_round || next_id;
    -- The lock above is this transaction's; the step takes it again (same transaction) and commits.
    progress := private.erasure_step(next_id, batch_size);
    commit;
    -- One waiting for attempts in flight is left for the next run.
    if progress ->> 'stage' = 'settle' then
      waiting := waiting || next_id;
    end if;
    exit when clock_timestamp() - started > time_budget;
  end loop;
  commit;
end;
$$;

revoke all on function private.erasure_mentions(text, text[]), private.erasure_identifier(text, uuid),
  private.erasure_add(jsonb, text, bigint),
  private.erasure_step(uuid, integer), private.erasure_json(uuid) from public, anon, authenticated;
revoke all on procedure private.erasure_run(integer, interval) from public, anon, authenticated;
revoke all on function public.erase_member(uuid) from public, anon, authenticated;
grant execute on function public.erase_member(uuid) to config_api, service_role;

select cron.schedule('person-erasure', '* * * * *', 'call private.erasure_run()');
