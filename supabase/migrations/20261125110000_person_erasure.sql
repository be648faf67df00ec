-- Erasing a person: an organization's admin erases one member, and every row recorded as theirs goes
-- with it, in bounded batches (a hosted Edge Function has 2 s of CPU, and one person can have thousands
-- of rows). What becomes of each kind of row: See docs/configuration-api.md#erasing-a-person
--
-- Erasure follows recorded links, never a search of text. Every row that holds a person's data records
-- which members it concerns when it is written (`member_ids`: "Who a row concerns", at the end of
-- 20261122100200_domain_core.sql): an event its trigger's member, a delivery and its attempts their
-- event's, an inbound log row the members of the subscription, payment or WhatsApp threads it was
-- applied to, a thread every member it was linked to, a message its thread's, a mail or invitation the
-- members with its address. A row linked to the erased member alone is theirs: deleted or redacted. A
-- row linked to someone else too is theirs as well: kept, and only the erased member's link goes. So no
-- value staff or a provider can set (a phone, a provider id, a thread's member) widens an erasure to a
-- row recorded as another person's.
--
-- public.erase_member() deletes the member row and creates the record in one transaction;
-- private.erasure_step() then does one bounded batch, called by the configuration API while its
-- request's time allows and by the `person-erasure` cron job after that. Steps of one erasure never run
-- at once (its work row is locked, skip locked). Last, a text search of the organization's history
-- for the person's e-mail, phone and provider ids *reports* rows that may still mention them (another
-- person's message, a log row nobody was linked to): it changes nothing, and the values it looked for
-- are deleted when the erasure ends.

-- The record ---------------------------------------------------------------------------------------------
create table public.member_erasures (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null references public.organizations (id) on delete cascade,
  -- The id the member had (the row itself is gone): an opaque id, not personal data on its own, and
  -- after the erasure the only place it is kept.
  member_id uuid not null,
  requested_by uuid references auth.users (id) on delete set null,
  requested_at timestamptz not null default now(),
  -- The kind of rows being worked through; 'done' once finished.
  stage text not null default 'whatsapp'
    check (stage in ('whatsapp', 'inbound_log', 'events', 'attempts', 'money', 'mail', 'leftovers', 'settle',
                     'done')),
  -- Rows removed, redacted or kept for someone else, per kind: {"members": 1, "webhook_events": 12, ...}
  counts jsonb not null default '{}'::jsonb,
  -- Rows the erasure did not change that may still mention the person, per kind:
  -- {"inbound_webhook_log": {"count": 2, "ids": [...]}} (at most 20 ids a kind), for the admin to look at.
  leftovers jsonb not null default '{}'::jsonb,
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

-- The work state of a running erasure. Server only; deleted at the end.
create table private.member_erasure_work (
  erasure_id uuid primary key references public.member_erasures (id) on delete cascade,
  organization_id uuid not null,
  member_id uuid not null,
  -- Lower-cased values of the person (e-mail, phone, provider ids, thread numbers) that the leftover
  -- report looks for. Never used to choose a row to change.
  terms text[] not null,
  -- Keyset position in the current stage (the report: in its current part).
  report_part text,
  cursor_at timestamptz,
  cursor_id uuid,
  -- Deliveries that were in flight when their event was redacted: their attempt's result (and response
  -- excerpt) is recorded after that, so the erasure waits for them and cleans their attempts last.
  in_flight uuid[] not null default '{}'
);
alter table private.member_erasure_work enable row level security;
revoke all on private.member_erasure_work from public, anon, authenticated;

-- Helpers -----------------------------------------------------------------------------------------------
-- Whether a text mentions one of the (lower-cased) terms as a whole token, not inside a longer word,
-- number or address (for the leftover report only). A term is bounded where the text has no letter,
-- digit, `_`, `@`, `-` or `.` next to it (a sentence's final full stop still ends a term; a `+` before
-- a number does too). strpos first: the regular expression runs only on texts that contain the term.
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

-- Whether a provider's id or a WhatsApp user id is worth reporting mentions of: at least 6 characters,
-- with a digit, neither a UUID (the organization's and every row's ids are in every payload) nor
-- anything with JSON's punctuation.
create function private.erasure_identifier(id text) returns boolean
language sql immutable
set search_path = ''
as $$
  select length(id) >= 6 and id ~ '[0-9]' and id !~ '["{}:,[:space:]]'
     and lower(id) !~ '^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$'
$$;

-- Adds `n` to one count of the record.
create function private.erasure_add(counts jsonb, kind text, n bigint) returns jsonb
language sql immutable
set search_path = ''
as $$
  select case when n = 0 then counts
              else counts || jsonb_build_object(kind, coalesce((counts ->> kind)::bigint, 0) + n) end
$$;

-- Adds leftovers of one kind to the report: their number, and ids up to 20 in all.
create function private.erasure_add_leftovers(leftovers jsonb, kind text, ids uuid[]) returns jsonb
language sql immutable
set search_path = ''
as $$
  select case when cardinality(ids) = 0 then leftovers
              else leftovers || jsonb_build_object(kind, jsonb_build_object(
                     'count', coalesce((leftovers #>> array[kind, 'count'])::bigint, 0) + cardinality(ids),
                     'ids', (select coalesce(jsonb_agg(x), '[]') from (
                               select x from jsonb_array_elements(coalesce(leftovers #> array[kind, 'ids'], '[]')) x
                               union all
                               select to_jsonb(i) from unnest(ids) i
                               limit 20) y))) end
$$;

-- Every query below that finds rows by their links says `member_ids <> '{}'` too: the link indexes are
-- partial (rows about no one are not in them), and a plan made for any member must see that it may use
-- them.

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
  mine uuid[];
  erasure uuid;
  terms text[] := '{}';
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
  mine := array[m.id];

  -- At most 20 running erasures per organization: the cron job gives every running erasure a batch in
  -- turn, so an organization erasing thousands of members at once would take every other one's turns.
  if (select count(*) from (select 1 from public.member_erasures e
                             where e.organization_id = org and e.finished_at is null limit 20) r) >= 20 then
    raise exception 'this organization has 20 erasures running; erase more once they finish'
      using errcode = '54000';
  end if;

  -- What the leftover report looks for: the member's e-mail and phone (unless another member shares
  -- them: they would find the other member's rows), and the numbers, user ids and provider ids of the
  -- rows linked to them alone. At most 1,000 (a person with more payments is reported on by the first).
  if position('@' in coalesce(m.email, '')) > 1 and not exists (
    select 1 from public.members o
    where o.organization_id = org and o.id <> m.id and lower(trim(o.email)) = lower(trim(m.email))
  ) then
    terms := terms || lower(trim(m.email));
  end if;
  if length(m.primary_phone_normalized) >= 7 and not exists (
    select 1 from public.members o
    where o.organization_id = org and o.id <> m.id and o.primary_phone_normalized = m.primary_phone_normalized
  ) then
    terms := terms || m.primary_phone_normalized || lower(trim(m.primary_phone));
  end if;
  terms := terms || array(
    select t from (
      select c.contact_phone as t from public.whatsapp_conversations c
       where c.organization_id = org and c.member_ids <> '{}' and c.member_ids = mine
         and length(c.contact_phone) >= 7
      union
      select lower(c.contact_user_id) from public.whatsapp_conversations c
       where c.organization_id = org and c.member_ids <> '{}' and c.member_ids = mine
         and private.erasure_identifier(c.contact_user_id)
      union
      select lower(d.gateway_payment_id) from public.donations d
       where d.organization_id = org and d.member_ids <> '{}' and d.member_ids = mine
         and private.erasure_identifier(d.gateway_payment_id)
      union
      select lower(r.gateway_subscription_id) from public.recurring_donations r
       where r.organization_id = org and r.member_ids <> '{}' and r.member_ids = mine
         and private.erasure_identifier(r.gateway_subscription_id)
    ) x limit 1000);
  terms := array(select distinct t from unnest(terms) t where t <> '');

  select count(*) into n from public.attendance a where a.organization_id = org and a.member_id = m.id;
  counts := private.erasure_add(counts, 'attendance', n);
  select count(*) into n from public.donations d where d.organization_id = org and d.member_id = m.id;
  counts := private.erasure_add(counts, 'donations_unlinked', n);
  select count(*) into n from public.recurring_donations r where r.organization_id = org and r.member_id = m.id;
  counts := private.erasure_add(counts, 'recurring_donations_unlinked', n);
  select count(*) into n from public.workflow_runs w where w.organization_id = org and w.member_id = m.id;
  counts := private.erasure_add(counts, 'workflow_runs_unlinked', n);
  -- The row goes; its attendance with it, and the other records keep no reference to it (foreign
  -- keys). Their links stay until the batches below have followed them.
  delete from public.members x where x.id = m.id;
  counts := private.erasure_add(counts, 'members', 1);

  insert into public.member_erasures (organization_id, member_id, requested_by, counts)
  values (org, m.id, auth.uid(), counts)
  returning id into erasure;
  insert into private.member_erasure_work (erasure_id, organization_id, member_id, terms)
  values (erasure, org, m.id, terms);
  return erasure;
end;
$$;

-- One batch ---------------------------------------------------------------------------------------------
-- Does at most `batch_size` rows of the erasure's current stage in the caller's transaction (and, for
-- the report, at most 4 MiB of bodies), moves the stage on when it is through, and returns the record
-- as JSON. Null when another caller is working on this erasure right now, or it is not running. In every
-- stage: a row linked to the member alone is erased, a row linked to others too loses only the member's
-- link (counted as `shared_kept`, and named in the leftovers: it may still hold something of theirs).
create function private.erasure_step(p_erasure_id uuid, batch_size integer default 500) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  w private.member_erasure_work;
  e public.member_erasures;
  org uuid;
  mine uuid[];
  thread record;
  n bigint;
  k bigint;
  shared bigint := 0;
  kept_ids uuid[];
  ended bigint;
  refunds bigint;
  last_at timestamptz;
  last_id uuid;
  done boolean := false;
  freed text[];
  late uuid[];
  hits uuid[];
  body_budget constant bigint := 4 * 1024 * 1024;
begin
  select * into w from private.member_erasure_work x where x.erasure_id = p_erasure_id for update skip locked;
  if w.erasure_id is null then
    return null;
  end if;
  select * into e from public.member_erasures x where x.id = p_erasure_id for update;
  org := w.organization_id;
  mine := array[w.member_id];
  last_at := w.cursor_at;
  last_id := w.cursor_id;
  -- Lets the link triggers take the member out of the links of the rows this step keeps.
  perform set_config('private.erasing_member', w.member_id::text, true);

  if e.stage = 'whatsapp' then
    -- One thread at a time (in id order; a thread can hold thousands of messages): a thread done with
    -- loses the link, so the next step finds the next one. A thread linked to the member alone goes,
    -- its messages a batch at a time with their receipts. In a thread kept for someone else, the
    -- messages linked to the member alone go and the others lose the link, read in (sent_at, id) order
    -- from where the last batch stopped (the cursor).
    select c.id, c.member_ids = mine as theirs into thread from public.whatsapp_conversations c
     where c.organization_id = org and c.member_ids <> '{}' and c.member_ids @> mine
     order by c.id limit 1;
    if thread.id is null then
      -- Receipts linked to the member that no deleted message took with it (a receipt waiting for a
      -- message that never came).
      with batch as (
        select r.id, r.member_ids = mine as theirs from public.whatsapp_message_receipts r
         where r.organization_id = org and r.member_ids <> '{}' and r.member_ids @> mine limit batch_size
      ), gone as (
        delete from public.whatsapp_message_receipts r using batch b where r.id = b.id and b.theirs returning 1
      ), kept as (
        update public.whatsapp_message_receipts r set member_ids = array_remove(r.member_ids, w.member_id)
          from batch b where r.id = b.id and not b.theirs returning r.id
      )
      select (select count(*) from batch), (select count(*) from gone),
             (select coalesce(array_agg(id), '{}') from kept)
        into n, k, kept_ids;
      e.counts := private.erasure_add(e.counts, 'whatsapp_receipts', k);
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'whatsapp_message_receipts', kept_ids);
      shared := cardinality(kept_ids);
      done := n < batch_size;
    elsif thread.theirs then
      with gone as (
        delete from public.whatsapp_messages x
         where x.id in (select wm.id from public.whatsapp_messages wm
                         where wm.organization_id = org and wm.conversation_id = thread.id limit batch_size)
        returning x.provider_message_id
      )
      select coalesce(array_agg(provider_message_id), '{}') into freed from gone;
      e.counts := private.erasure_add(e.counts, 'whatsapp_messages', cardinality(freed));
      delete from public.whatsapp_message_receipts r
       where r.organization_id = org and r.provider_message_id = any (freed);
      get diagnostics k = row_count;
      e.counts := private.erasure_add(e.counts, 'whatsapp_receipts', k);
      if cardinality(freed) < batch_size then
        delete from public.whatsapp_conversations c where c.id = thread.id;
        e.counts := private.erasure_add(e.counts, 'whatsapp_conversations', 1);
      end if;
    else
      with page as (
        select wm.id, wm.sent_at, wm.member_ids = mine as theirs, wm.member_ids @> mine as linked,
               wm.provider_message_id
          from public.whatsapp_messages wm
         where wm.organization_id = org and wm.conversation_id = thread.id
           and (wm.sent_at, wm.id) > (coalesce(w.cursor_at, '-infinity'),
                                      case when w.cursor_at is null then '00000000-0000-0000-0000-000000000000'
                                           else w.cursor_id end)
         order by wm.sent_at, wm.id
         limit batch_size
      ), gone as (
        delete from public.whatsapp_messages x using page p where x.id = p.id and p.theirs
        returning x.provider_message_id
      ), kept as (
        update public.whatsapp_messages x set member_ids = array_remove(x.member_ids, w.member_id)
          from page p where x.id = p.id and p.linked and not p.theirs returning x.id
      )
      select (select count(*) from page), (select coalesce(array_agg(provider_message_id), '{}') from gone),
             (select coalesce(array_agg(id), '{}') from kept),
             (select p.sent_at from page p order by p.sent_at desc, p.id desc limit 1),
             (select p.id from page p order by p.sent_at desc, p.id desc limit 1)
        into n, freed, kept_ids, last_at, last_id;
      e.counts := private.erasure_add(e.counts, 'whatsapp_messages', cardinality(freed));
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'whatsapp_messages', kept_ids);
      shared := cardinality(kept_ids);
      delete from public.whatsapp_message_receipts r
       where r.organization_id = org and r.provider_message_id = any (freed);
      get diagnostics k = row_count;
      e.counts := private.erasure_add(e.counts, 'whatsapp_receipts', k);
      if n < batch_size then
        -- Through the thread: it stays for the others it concerns, without the member.
        update public.whatsapp_conversations c set member_ids = array_remove(c.member_ids, w.member_id)
         where c.id = thread.id;
        e.leftovers := private.erasure_add_leftovers(e.leftovers, 'whatsapp_conversations', array[thread.id]);
        shared := shared + 1;
        last_id := null;
        last_at := null;
      end if;
    end if;

  elsif e.stage = 'inbound_log' then
    -- The payloads of deliveries about the member alone go; the idempotency key, body digest, status and
    -- times stay, so a provider's retry of the same delivery is still recognized and never applied twice.
    with batch as (
      select l.id, l.member_ids = mine as theirs from public.inbound_webhook_log l
       where l.organization_id = org and l.member_ids <> '{}' and l.member_ids @> mine limit batch_size
    ), changed as (
      update public.inbound_webhook_log l
         set payload = case when b.theirs then '{"redacted": true}'::jsonb else l.payload end,
             raw_body = case when b.theirs then null else l.raw_body end,
             error = case when b.theirs and l.error is not null then 'redacted' else l.error end,
             redacted_at = case when b.theirs then now() else l.redacted_at end,
             member_ids = array_remove(l.member_ids, w.member_id),
             updated_at = now()
        from batch b
       where l.id = b.id
      returning l.id, b.theirs
    )
    select (select count(*) from batch), (select count(*) from changed where theirs),
           (select coalesce(array_agg(id), '{}') from changed where not theirs)
      into n, k, kept_ids;
    e.counts := private.erasure_add(e.counts, 'inbound_webhook_log', k);
    e.leftovers := private.erasure_add_leftovers(e.leftovers, 'inbound_webhook_log', kept_ids);
    shared := cardinality(kept_ids);
    done := n < batch_size;

  elsif e.stage = 'events' then
    -- The member's events in id order (webhook_events_member_links_idx). An event concerns one member:
    -- each is theirs alone.
    with batch as (
      select ev.id from public.webhook_events ev
       where ev.member_ids <> '{}' and ev.member_ids = mine and ev.organization_id = org
         and ev.id > coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000')
       order by ev.id
       limit batch_size
    ), redacted as (
      update public.webhook_events ev
         set payload = jsonb_build_object(
               'id', ev.payload -> 'id', 'type', ev.payload -> 'type', 'created_at', ev.payload -> 'created_at',
               'organization_id', ev.payload -> 'organization_id', 'redacted', true,
               -- The row's id, unless it is the member's own.
               'data', jsonb_build_object('row', jsonb_strip_nulls(jsonb_build_object('id',
                          nullif(ev.payload #> '{data,row,id}', to_jsonb(w.member_id)))),
                                          'delta', '{}'::jsonb)),
             redacted_at = now()
        from batch b
       where ev.id = b.id and ev.redacted_at is null
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
      into n, k, ended, late, last_id;
    e.counts := private.erasure_add(private.erasure_add(e.counts, 'webhook_events', k), 'webhook_deliveries_ended',
                                    ended);
    w.in_flight := w.in_flight || late;
    done := n < batch_size;

  elsif e.stage = 'attempts' then
    -- The attempts of the member's (now redacted) events lose what the receiver sent back: a receiver
    -- may echo the body, in its response or its headers. At most `batch_size` attempts a step; the
    -- events whose attempts are all clean lose their link, so the next step starts after them.
    with ev as (
      select x.id from public.webhook_events x
       where x.member_ids <> '{}' and x.member_ids = mine and x.organization_id = org order by x.id limit batch_size
    ), todo as (
      select a.id from ev
        join public.webhook_deliveries d on d.event_id = ev.id
        join public.webhook_delivery_attempts a on a.delivery_id = d.id
       where a.response_excerpt is not null or a.response_headers is not null
       limit batch_size
    ), scrubbed as (
      update public.webhook_delivery_attempts a set response_excerpt = null, response_headers = null
        from todo t where a.id = t.id
      returning 1
    )
    select (select count(*) from ev), (select count(*) from scrubbed) into n, k;
    e.counts := private.erasure_add(e.counts, 'webhook_attempts', k);
    if k < batch_size then
      update public.webhook_events x set member_ids = array_remove(x.member_ids, w.member_id)
       where x.id in (select y.id from public.webhook_events y
                       where y.member_ids <> '{}' and y.member_ids = mine and y.organization_id = org
                       order by y.id limit batch_size);
      done := n < batch_size;
    end if;

  elsif e.stage = 'money' then
    -- Donations and subscriptions stay, anonymous (the member reference went with the member row). The
    -- provider's ids of those linked to the member alone, and of their refunds, become keyed digests
    -- (private.erased_gateway_id): a provider's retry is still recognized, and nothing names the payer.
    with batch as (
      select d.id, d.member_ids = mine as theirs from public.donations d
       where d.organization_id = org and d.member_ids <> '{}' and d.member_ids @> mine limit batch_size
    ), refunds as (
      update public.donation_refunds r
         set gateway_payment_id = private.erased_gateway_id(r.gateway_payment_id),
             gateway_refund_id = private.erased_gateway_id(r.gateway_refund_id)
        from batch b
       where r.organization_id = org and r.donation_id = b.id and b.theirs and r.gateway_refund_id !~ '^erased:'
      returning 1
    ), changed as (
      update public.donations d
         set gateway_payment_id = case when b.theirs and d.gateway_payment_id !~ '^erased:'
                                       then private.erased_gateway_id(d.gateway_payment_id)
                                       else d.gateway_payment_id end,
             member_ids = array_remove(d.member_ids, w.member_id)
        from batch b
       where d.id = b.id
      returning d.id, b.theirs
    )
    select (select count(*) from batch), (select count(*) from changed where theirs),
           (select coalesce(array_agg(id), '{}') from changed where not theirs), (select count(*) from refunds)
      into n, k, kept_ids, refunds;
    e.counts := private.erasure_add(private.erasure_add(e.counts, 'donations_pseudonymized', k),
                                    'donation_refunds_pseudonymized', refunds);
    e.leftovers := private.erasure_add_leftovers(e.leftovers, 'donations', kept_ids);
    shared := cardinality(kept_ids);
    if n < batch_size then
      with batch as (
        select r.id, r.member_ids = mine as theirs from public.recurring_donations r
         where r.organization_id = org and r.member_ids <> '{}' and r.member_ids @> mine limit batch_size
      ), changed as (
        update public.recurring_donations r
           set gateway_subscription_id = case when b.theirs and r.gateway_subscription_id !~ '^erased:'
                                              then private.erased_gateway_id(r.gateway_subscription_id)
                                              else r.gateway_subscription_id end,
               member_ids = array_remove(r.member_ids, w.member_id)
          from batch b
         where r.id = b.id
        returning r.id, b.theirs
      )
      select (select count(*) from batch), (select count(*) from changed where theirs),
             (select coalesce(array_agg(id), '{}') from changed where not theirs)
        into n, k, kept_ids;
      e.counts := private.erasure_add(e.counts, 'recurring_donations_pseudonymized', k);
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'recurring_donations', kept_ids);
      shared := shared + cardinality(kept_ids);
      done := n < batch_size;
    end if;

  elsif e.stage = 'mail' then
    select (r ->> 'seen')::bigint, (r ->> 'redacted')::bigint,
           array(select jsonb_array_elements_text(r -> 'kept'))::uuid[]
      into n, k, kept_ids
      from private.mail_erase(org, w.member_id, batch_size) r;
    e.counts := private.erasure_add(e.counts, 'mails', k);
    e.leftovers := private.erasure_add_leftovers(e.leftovers, 'mails', kept_ids);
    shared := cardinality(kept_ids);
    if n < batch_size then
      with batch as (
        select i.id, i.member_ids = mine as theirs from public.organization_invitations i
         where i.organization_id = org and i.member_ids <> '{}' and i.member_ids @> mine limit batch_size
      ), gone as (
        delete from public.organization_invitations i using batch b where i.id = b.id and b.theirs returning 1
      ), kept as (
        update public.organization_invitations i set member_ids = array_remove(i.member_ids, w.member_id)
          from batch b where i.id = b.id and not b.theirs returning i.id
      )
      select (select count(*) from batch), (select count(*) from gone),
             (select coalesce(array_agg(id), '{}') from kept)
        into n, k, kept_ids;
      e.counts := private.erasure_add(e.counts, 'invitations', k);
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'organization_invitations', kept_ids);
      shared := shared + cardinality(kept_ids);
      done := n < batch_size;
    end if;

  elsif e.stage = 'leftovers' then
    -- The report: rows of the organization that still mention one of the person's values, counted and
    -- named by id, never changed. Part by part, each read once by keyset; a batch is at most
    -- `batch_size` rows and 4 MiB of bodies (at least one row). Outbound events are not read: each is
    -- built from one row of one member, and the others' rows hold their own e-mail and phone (a value
    -- two members share is not looked for); what a receiver answered is (the deliveries' attempts).
    if cardinality(w.terms) = 0 then
      done := true;
    elsif coalesce(w.report_part, 'inbound_log') = 'inbound_log' then
      w.report_part := 'inbound_log';
      with page as (
        select l.id, l.received_at, l.body_bytes
          from public.inbound_webhook_log l
         where l.organization_id = org
           and (l.received_at, l.id) < (coalesce(w.cursor_at, 'infinity'),
                                        coalesce(w.cursor_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
         order by l.received_at desc, l.id desc
         limit batch_size
      ), batch as (
        -- The rows that start within the byte budget (so at least the first).
        select p.* from (select p.*, sum(p.body_bytes) over (order by p.received_at desc, p.id desc) as upto
                           from page p) p
         where p.upto - p.body_bytes < body_budget
      )
      select (select count(*) from page), (select count(*) from batch),
             (select coalesce(array_agg(b.id), '{}') from batch b join public.inbound_webhook_log l on l.id = b.id
               where private.erasure_mentions(concat_ws(' ', l.payload::text, l.raw_body, l.error), w.terms)),
             (select b.received_at from batch b order by b.received_at, b.id limit 1),
             (select b.id from batch b order by b.received_at, b.id limit 1)
        into n, k, hits, last_at, last_id;
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'inbound_webhook_log', hits);
      if n < batch_size and k = n then
        w.report_part := 'attempts';
        last_at := null;
        last_id := null;
      end if;
    elsif w.report_part = 'attempts' then
      with batch as (
        select d.id, d.created_at, d.last_error from public.webhook_deliveries d
         where d.organization_id = org
           and (d.created_at, d.id) > (coalesce(w.cursor_at, '-infinity'),
                                       coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000'))
         order by d.created_at, d.id
         limit batch_size
      )
      -- Each delivery's attempts through their index (a lateral join: as an EXISTS, the planner may hash
      -- every attempt of every organization instead, once a batch).
      select (select count(*) from batch),
             (select coalesce(array_agg(b.id), '{}') from batch b
                left join lateral (
                  select true as hit from public.webhook_delivery_attempts a
                   where a.delivery_id = b.id
                     and (a.response_excerpt is not null or a.error is not null or a.response_headers is not null)
                     and private.erasure_mentions(
                           concat_ws(' ', a.response_excerpt, a.error, a.response_headers::text), w.terms)
                   limit 1) h on true
               where private.erasure_mentions(b.last_error, w.terms) or h.hit),
             (select b.created_at from batch b order by b.created_at desc, b.id desc limit 1),
             (select b.id from batch b order by b.created_at desc, b.id desc limit 1)
        into n, hits, last_at, last_id;
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'webhook_deliveries', hits);
      if n < batch_size then
        w.report_part := 'whatsapp';
        last_at := null;
        last_id := null;
      end if;
    elsif w.report_part = 'whatsapp' then
      -- Threads with the person's number or user id that nobody linked to them, and messages in other
      -- threads that mention them.
      with batch as (
        select c.id, c.contact_phone, c.contact_user_id, c.contact_name from public.whatsapp_conversations c
         where c.organization_id = org and c.id > coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000')
         order by c.id
         limit batch_size
      )
      select (select count(*) from batch),
             (select coalesce(array_agg(b.id), '{}') from batch b
               where b.contact_phone = any (w.terms) or lower(b.contact_user_id) = any (w.terms)
                  or private.erasure_mentions(b.contact_name, w.terms)),
             (select b.id from batch b order by b.id desc limit 1)
        into n, hits, last_id;
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'whatsapp_conversations', hits);
      if n < batch_size then
        w.report_part := 'mail';
        last_id := null;
      end if;
    elsif w.report_part = 'mail' then
      with batch as (
        select x.id, x.created_at, x.recipient, x.data from private.mail_outbox x
         where x.organization_id = org
           and (x.created_at, x.id) > (coalesce(w.cursor_at, '-infinity'),
                                       coalesce(w.cursor_id, '00000000-0000-0000-0000-000000000000'))
         order by x.created_at, x.id
         limit batch_size
      )
      select (select count(*) from batch),
             (select coalesce(array_agg(b.id), '{}') from batch b
               where b.recipient = any (w.terms) or private.erasure_mentions(b.data::text, w.terms)),
             (select b.created_at from batch b order by b.created_at desc, b.id desc limit 1),
             (select b.id from batch b order by b.created_at desc, b.id desc limit 1)
        into n, hits, last_at, last_id;
      e.leftovers := private.erasure_add_leftovers(e.leftovers, 'mails', hits);
      done := n < batch_size;
    end if;
  end if;

  e.counts := private.erasure_add(e.counts, 'shared_kept', shared);
  e.steps := e.steps + 1;
  if done then
    e.stage := case e.stage when 'whatsapp' then 'inbound_log' when 'inbound_log' then 'events'
                            when 'events' then 'attempts' when 'attempts' then 'money'
                            when 'money' then 'mail' when 'mail' then 'leftovers'
                            when 'leftovers' then 'settle' else 'done' end;
    last_at := null;
    last_id := null;
    w.report_part := null;
  end if;
  -- Attempts that were in flight when their event was redacted: once recorded (their lease is gone),
  -- their response excerpts go too. Leases run out within the send timeout plus 30 s.
  if e.stage = 'settle'
     and not exists (select 1 from private.webhook_live_leases l where l.delivery_id = any (w.in_flight)) then
    update public.webhook_delivery_attempts a set response_excerpt = null, response_headers = null
     where a.delivery_id = any (w.in_flight) and (a.response_excerpt is not null or a.response_headers is not null);
    get diagnostics k = row_count;
    e.counts := private.erasure_add(e.counts, 'webhook_attempts', k);
    e.stage := 'done';
  end if;
  update public.member_erasures x set stage = e.stage, counts = e.counts, leftovers = e.leftovers,
         steps = e.steps, finished_at = case when e.stage = 'done' then now() end
   where x.id = e.id;
  if e.stage = 'done' then
    -- The values it looked for go with the work: nothing erased is kept.
    delete from private.member_erasure_work x where x.erasure_id = e.id;
  else
    update private.member_erasure_work x set cursor_at = last_at, cursor_id = last_id, in_flight = w.in_flight,
           report_part = w.report_part
     where x.erasure_id = e.id;
  end if;
  perform set_config('private.erasing_member', '', true);
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
           'stage', e.stage, 'steps', e.steps, 'counts', e.counts, 'leftovers', e.leftovers)
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

revoke all on function private.erasure_mentions(text, text[]), private.erasure_identifier(text),
  private.erasure_add(jsonb, text, bigint), private.erasure_add_leftovers(jsonb, text, uuid[]),
  private.erasure_step(uuid, integer), private.erasure_json(uuid) from public, anon, authenticated;
revoke all on procedure private.erasure_run(integer, interval) from public, anon, authenticated;
revoke all on function public.erase_member(uuid) from public, anon, authenticated;
grant execute on function public.erase_member(uuid) to config_api, service_role;

select cron.schedule('person-erasure', '* * * * *', 'call private.erasure_run()');
