-- Applying one verified WhatsApp webhook: threads, messages and receipts in ONE statement.
--
-- The messaging-webhook function validates and flattens the body, logs each account's part, then
-- calls private.process_whatsapp_webhook once per part. A single statement is atomic on the server by
-- itself: if the connection dies halfway, PostgreSQL rolls everything back, and no client-side ROLLBACK
-- is needed on a connection that is already gone (postgres.js 3.4.9 can crash the process or run later
-- queries outside the transaction in that case: porsager/postgres#1208, #1216). The part stays in the
-- log; the gateway's retry or a replay applies it, cleanly, because every write is idempotent.

-- The thread of one contact, created at most once, refreshed on every message. Returns its id.
--
-- Upserted on (organization_id, contact_phone) so concurrent first messages meet in one row; a thread
-- known by user id alone is adopted rather than duplicated. A member is linked only when exactly one
-- matches (normalized phone, or a national spelling where the default country dials its code).
-- See docs/whatsapp.md#messages-and-receipts-post (threads and member matching)
create function private.whatsapp_upsert_thread(
  org uuid, phone text, user_id text, name text, last_at timestamptz,
  dial_countries text[] default '{}', national_forms text[] default '{}'
) returns uuid
language plpgsql volatile
set search_path = ''
as $$
declare
  thread uuid;
  candidates uuid[];
begin
  if phone is not null then
    if user_id is not null then
      update public.whatsapp_conversations c set contact_phone = phone
      where c.organization_id = org and c.contact_user_id = whatsapp_upsert_thread.user_id
        and c.contact_phone is null
        and not exists (
          select 1 from public.whatsapp_conversations o
          where o.organization_id = org and o.contact_phone = phone);
    end if;
    select array(
      select m.id from public.members m
      where m.organization_id = org
        and (m.primary_phone_normalized = phone
             or (m.primary_phone_normalized = any(national_forms) and exists (
                   select 1 from public.organization_settings s
                   where s.organization_id = org and s.default_country = any(dial_countries))))
      order by m.created_at, m.id
      limit 2) into candidates;
    insert into public.whatsapp_conversations as c
      (organization_id, contact_phone, contact_user_id, contact_name, member_id, member_match, last_message_at)
    values (
      org, phone, whatsapp_upsert_thread.user_id, name,
      case when cardinality(candidates) = 1 then candidates[1] end,
      case cardinality(candidates) when 0 then 'none' when 1 then 'matched' else 'ambiguous' end,
      last_at)
    on conflict (organization_id, contact_phone) do update set
      contact_user_id = coalesce(excluded.contact_user_id, c.contact_user_id),
      contact_name = coalesce(excluded.contact_name, c.contact_name),
      member_id = coalesce(c.member_id, excluded.member_id),
      member_match = case when c.member_id is not null then c.member_match else excluded.member_match end,
      last_message_at = greatest(c.last_message_at, excluded.last_message_at)
    returning c.id into thread;
    return thread;
  end if;

  select c.id into thread
  from public.whatsapp_conversations c
  where c.organization_id = org and c.contact_user_id = whatsapp_upsert_thread.user_id
    and c.contact_phone is not null
  order by c.last_message_at desc nulls last, c.created_at
  limit 1;
  if thread is not null then
    update public.whatsapp_conversations c set
      contact_name = coalesce(name, c.contact_name),
      last_message_at = greatest(c.last_message_at, last_at)
    where c.id = thread;
    return thread;
  end if;

  insert into public.whatsapp_conversations as c
    (organization_id, contact_user_id, contact_name, member_match, last_message_at)
  values (org, whatsapp_upsert_thread.user_id, name, 'none', last_at)
  on conflict (organization_id, contact_user_id) where contact_phone is null do update set
    contact_name = coalesce(excluded.contact_name, c.contact_name),
    last_message_at = greatest(c.last_message_at, excluded.last_message_at)
  returning c.id into thread;
  return thread;
end;
$$;

-- A contact changed their number (a WhatsApp "user_changed_number" system message): their thread moves to
-- the new number, keeping its id and member. If the new number already has a thread (the system
-- message's own, at least), its messages join the old thread and it goes.
create function private.whatsapp_move_thread(org uuid, old_phone text, new_phone text) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  old_thread uuid;
  new_thread public.whatsapp_conversations%rowtype;
begin
  select c.id into old_thread from public.whatsapp_conversations c
  where c.organization_id = org and c.contact_phone = old_phone
  for update;
  if old_thread is null then
    return;
  end if;
  select * into new_thread from public.whatsapp_conversations c
  where c.organization_id = org and c.contact_phone = new_phone
  for update;
  if new_thread.id is not null then
    update public.whatsapp_messages set conversation_id = old_thread
    where organization_id = org and conversation_id = new_thread.id;
    delete from public.whatsapp_conversations where id = new_thread.id;
  end if;
  update public.whatsapp_conversations c set
    contact_phone = new_phone,
    member_id = coalesce(c.member_id, new_thread.member_id),
    member_match = case when c.member_id is null and new_thread.member_id is not null
                        then new_thread.member_match else c.member_match end,
    contact_user_id = coalesce(c.contact_user_id, new_thread.contact_user_id),
    contact_name = coalesce(new_thread.contact_name, c.contact_name),
    last_message_at = greatest(c.last_message_at, new_thread.last_message_at)
  where c.id = old_thread;
end;
$$;

-- Applies inbound messages and delivery receipts (JSON arrays, shapes below) and returns what happened:
--   {"messages": {"stored", "duplicates"}, "receipts": {"applied", "waiting", "duplicates"}}
-- messages[]: organization_id, account_id, provider_message_id, phone, moved_from, phone_countries,
--             phone_national, user_id, name, sent_at, type, text, content, raw
--             (moved_from: a number change; the thread of moved_from joins phone's)
-- receipts[]: organization_id, provider_message_id, status, occurred_at, recipient_phone,
--             recipient_user_id, errors, raw
-- Everything is taken in a fixed order (threads by contact, messages and receipts by message id) so
-- that two requests touching the same rows lock them in the same order.
create function private.whatsapp_apply_webhook(messages jsonb, receipts jsonb) returns jsonb
language plpgsql volatile
set search_path = ''
as $$
declare
  t record;
  m record;
  r record;
  threads jsonb := '{}';
  n int;
  stored int := 0;
  duplicate_messages int := 0;
  applied int := 0;
  waiting int := 0;
  duplicate_receipts int := 0;
begin
  for t in
    select x.organization_id, x.phone, x.user_id,
           (array_agg(x.name order by x.sent_at desc) filter (where x.name is not null))[1] as name,
           max(x.sent_at) as last_at,
           (array_agg(x.phone_countries))[1] as dial_countries,
           (array_agg(x.phone_national))[1] as national_forms
    from jsonb_to_recordset(messages) as x(organization_id uuid, phone text, user_id text, name text,
                                           sent_at timestamptz, phone_countries jsonb, phone_national jsonb)
    group by x.organization_id, x.phone, x.user_id
    order by x.organization_id, x.phone, x.user_id
  loop
    threads := threads || jsonb_build_object(
      concat_ws('|', t.organization_id, coalesce(t.phone, ''), coalesce(t.user_id, '')),
      private.whatsapp_upsert_thread(t.organization_id, t.phone, t.user_id, t.name, t.last_at,
        array(select jsonb_array_elements_text(coalesce(t.dial_countries, '[]'))),
        array(select jsonb_array_elements_text(coalesce(t.national_forms, '[]')))));
  end loop;

  for m in
    select x.*
    from jsonb_to_recordset(messages) as x(organization_id uuid, account_id uuid, provider_message_id text,
                                           phone text, moved_from text, user_id text, sent_at timestamptz,
                                           type text, text text, content jsonb, raw jsonb)
    order by x.organization_id, x.provider_message_id
  loop
    insert into public.whatsapp_messages
      (organization_id, conversation_id, account_id, provider_message_id, direction, type, text, content,
       status, sender_phone, sender_user_id, sent_at, raw)
    values (
      m.organization_id,
      (threads ->> concat_ws('|', m.organization_id, coalesce(m.phone, ''), coalesce(m.user_id, '')))::uuid,
      m.account_id, m.provider_message_id, 'inbound', m.type, m.text, m.content, 'received',
      coalesce(m.moved_from, m.phone), m.user_id, m.sent_at, m.raw)
    on conflict (organization_id, provider_message_id) do nothing;
    get diagnostics n = row_count;
    if n > 0 then stored := stored + 1; else duplicate_messages := duplicate_messages + 1; end if;
  end loop;

  -- Number changes last: the new number's thread exists by now (the system message is in it), and the
  -- old number's thread, with every message of this request from before the change, joins it.
  for t in
    select distinct x.organization_id, x.moved_from, x.phone
    from jsonb_to_recordset(messages) as x(organization_id uuid, moved_from text, phone text)
    where x.moved_from is not null and x.phone is not null and x.moved_from <> x.phone
    order by x.organization_id, x.moved_from, x.phone
  loop
    perform private.whatsapp_move_thread(t.organization_id, t.moved_from, t.phone);
  end loop;

  -- Receipts: recorded once each; the message moves forward only (private.whatsapp_status_rank), and
  -- takes the error of a failure that it actually moved to. A receipt whose message is not stored yet
  -- waits in whatsapp_message_receipts for the message's insert trigger.
  for r in
    select x.*
    from jsonb_to_recordset(receipts) as x(organization_id uuid, provider_message_id text, status text,
                                           occurred_at timestamptz, recipient_phone text,
                                           recipient_user_id text, errors jsonb, raw jsonb)
    order by x.organization_id, x.provider_message_id, x.status
  loop
    perform private.lock_whatsapp_message(r.organization_id, r.provider_message_id);
    insert into public.whatsapp_message_receipts
      (organization_id, provider_message_id, status, occurred_at, recipient_phone, recipient_user_id, errors, raw)
    values (r.organization_id, r.provider_message_id, r.status, r.occurred_at, r.recipient_phone,
            r.recipient_user_id, r.errors, r.raw)
    on conflict (organization_id, provider_message_id, status) do nothing;
    get diagnostics n = row_count;
    if n = 0 then
      duplicate_receipts := duplicate_receipts + 1;
      continue;
    end if;
    update public.whatsapp_messages w set
      status = r.status,
      status_updated_at = r.occurred_at,
      error = case when r.status = 'failed' then r.errors else w.error end
    where w.organization_id = r.organization_id and w.provider_message_id = r.provider_message_id
      and private.whatsapp_status_rank(r.status) > coalesce(private.whatsapp_status_rank(w.status), -1);
    if exists (
      select 1 from public.whatsapp_messages w
      where w.organization_id = r.organization_id and w.provider_message_id = r.provider_message_id
    ) then
      applied := applied + 1;
    else
      waiting := waiting + 1;
    end if;
  end loop;

  return jsonb_build_object(
    'messages', jsonb_build_object('stored', stored, 'duplicates', duplicate_messages),
    'receipts', jsonb_build_object('applied', applied, 'waiting', waiting, 'duplicates', duplicate_receipts));
end;
$$;

-- Applies one logged WhatsApp part (one account's changes, see the inbound log) at most once, in the
-- same statement that marks its log row: private.claim_inbound_webhook locks the row and a processed one
-- is answered as a duplicate. Every row must belong to the log row's organization, so a part can never
-- write into another organization, whatever it contains.
create function private.process_whatsapp_webhook(p_log_id uuid, messages jsonb, receipts jsonb)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
declare
  log public.inbound_webhook_log%rowtype;
  applied jsonb;
begin
  log := private.claim_inbound_webhook(p_log_id);
  if log.status = 'processed' then
    return jsonb_build_object('outcome', 'duplicate');
  end if;
  if log.provider <> 'whatsapp' or exists (
    select 1 from jsonb_array_elements(messages || receipts) x
    where (x ->> 'organization_id')::uuid is distinct from log.organization_id
  ) then
    raise exception 'webhook log row % does not own these changes', p_log_id using errcode = '22023';
  end if;
  applied := private.whatsapp_apply_webhook(messages, receipts) || jsonb_build_object('outcome', 'applied');
  -- The row concerns the members of the threads its messages and receipts belong to (by number, and
  -- by user id: each on its own index).
  perform private.link_inbound_webhook(p_log_id, array(
    select x from public.whatsapp_conversations c, unnest(c.member_ids) x
     where c.organization_id = log.organization_id
       and c.contact_phone = any (array(select coalesce(e ->> 'phone', e ->> 'recipient_phone')
                                          from jsonb_array_elements(messages || receipts) e))
    union all
    select x from public.whatsapp_conversations c, unnest(c.member_ids) x
     where c.organization_id = log.organization_id
       and c.contact_user_id = any (array(select coalesce(e ->> 'user_id', e ->> 'recipient_user_id')
                                            from jsonb_array_elements(messages || receipts) e))));
  perform private.finish_inbound_webhook(p_log_id, applied, false);
  return applied;
end;
$$;

-- Receipts for messages that never arrive ------------------------------------------------------------------
-- A receipt for an outbound message not stored yet waits for it (see whatsapp_message_receipts). One
-- whose message never comes (sent by another system on the same number, or never recorded) would wait
-- forever: after the retention period it is dropped. Receipts of stored messages are their delivery
-- history and stay. Runs daily with pg_cron (as Supabase's Cron module installs it).
create function private.whatsapp_drop_orphan_receipts(retention interval default interval '30 days')
returns integer
language sql volatile
set search_path = ''
as $$
  with dropped as (
    delete from public.whatsapp_message_receipts r
    where r.received_at < now() - retention
      and not exists (
        select 1 from public.whatsapp_messages m
        where m.organization_id = r.organization_id and m.provider_message_id = r.provider_message_id)
    returning 1
  )
  select count(*)::integer from dropped
$$;

create extension if not exists pg_cron with schema pg_catalog;
select cron.schedule('whatsapp-orphan-receipts', '17 3 * * *', 'select private.whatsapp_drop_orphan_receipts()');

-- The server only: these write across organizations.
revoke all on function private.whatsapp_upsert_thread(uuid, text, text, text, timestamptz, text[], text[]),
  private.whatsapp_move_thread(uuid, text, text),
  private.whatsapp_apply_webhook(jsonb, jsonb), private.process_whatsapp_webhook(uuid, jsonb, jsonb),
  private.whatsapp_drop_orphan_receipts(interval)
  from public;
