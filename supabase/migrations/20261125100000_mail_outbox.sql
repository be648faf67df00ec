-- E-mail to the people who must act: invitations to the invitee, and to an organization's admins when
-- one of its webhook endpoints has been failing for an hour, will be disabled in a day, or was disabled.
-- Every mail is a row of private.mail_outbox, written in the same transaction as what causes it, so
-- nothing is lost while the mail server is unreachable. How a mail travels: See docs/operations.md#e-mail
--
-- An invitation's token is in its mail's `data` only until the mail is sent, given up, or cancelled
-- (the invitation was revoked, replaced, accepted or expired first): then it is removed from the row.
-- The invitation itself keeps only the token's SHA-256.

create table private.mail_outbox (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid references public.organizations (id) on delete cascade,
  kind text not null
    check (kind in ('invitation', 'endpoint_failing', 'endpoint_disable_soon', 'endpoint_disabled')),
  recipient text not null check (length(recipient) <= 320),
  -- What the template needs (supabase/functions/mail-sender/templates.ts).
  data jsonb not null default '{}'::jsonb,
  -- At most one mail per key: an episode of failures and a recipient, say.
  dedupe_key text unique,
  -- pending -> sent | failed (given up) | cancelled (no longer wanted)
  status text not null default 'pending' check (status in ('pending', 'sent', 'failed', 'cancelled')),
  attempts integer not null default 0,
  next_attempt_at timestamptz default now(),
  give_up_at timestamptz not null default now() + interval '3 days',
  last_attempt_at timestamptz,
  last_error text,
  sent_at timestamptz,
  -- The SMTP Message-ID or the HTTP API's id of the sent mail.
  provider_message_id text,
  -- A sender holds a claimed row until then; a sender that died lets it run out.
  lease_token uuid,
  leased_until timestamptz,
  -- An invitation's: the members with the recipient's address when it is queued ("Who a row concerns",
  -- 20261122100200_domain_core.sql). Mails about endpoints go to admins' accounts and concern no member.
  member_ids uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  check ((status = 'pending') = (next_attempt_at is not null))
);
create index mail_outbox_due_idx on private.mail_outbox (next_attempt_at) where status = 'pending';
create index mail_outbox_organization_idx on private.mail_outbox (organization_id, created_at);
create index mail_outbox_finished_idx on private.mail_outbox (created_at) where status <> 'pending';
-- What one address was sent lately (private.mail_recipient_next_at).
create index mail_outbox_recipient_idx on private.mail_outbox (recipient, created_at);
create trigger mail_outbox_member_links before insert on private.mail_outbox
  for each row when (new.kind = 'invitation') execute function private.link_member_email('recipient');
create index mail_outbox_member_links_idx on private.mail_outbox using gin (member_ids) where member_ids <> '{}';
revoke all on private.mail_outbox from public, anon, authenticated;

-- Mails to one address --------------------------------------------------------------------------------
-- Nobody can make this service mail one person over and over: not an admin re-inviting an address six
-- times in 20 seconds, nor several organizations inviting the same stranger, nor a flood of endpoint
-- notices to one admin. Counted over the last 24 hours, per address, from what was queued to be sent
-- (a mail cancelled before sending, or recorded as not sent, does not count):
--   * invitations from one organization: one a minute, and five a day;
--   * invitations from other organizations: ten established organizations (a day old or more) a day,
--     and, apart from those, three new ones (the invitee consented to none of them). Organizations
--     are counted, not mails, and the two kinds apart: anyone can make new organizations in minutes
--     (five a day per account), so new ones can use up only their own small share, never an established
--     church's invitation to the same person;
--   * every other mail (notices to an organization's admins): twenty a day, so invitations from strangers
--     never use up an admin's notices.
-- Returns when the next such mail may be queued, or null when it may be now.
-- See docs/operations.md#e-mail
create function private.mail_recipient_next_at(organization_id uuid, kind text, recipient text)
returns timestamptz
language plpgsql stable security definer
set search_path = ''
as $$
declare
  address text := lower(trim(mail_recipient_next_at.recipient));
  invitation boolean := mail_recipient_next_at.kind = 'invitation';
  young boolean;
  next_at timestamptz;
  nth timestamptz;
begin
  -- Each query walks this address's rows of the last day only (mail_outbox_recipient_idx).
  if invitation then
    select max(m.created_at) + interval '1 minute' into next_at
      from private.mail_outbox m
     where m.recipient = address and m.created_at > now() - interval '24 hours' and m.kind = 'invitation'
       and m.organization_id = mail_recipient_next_at.organization_id
       and m.status <> 'cancelled' and not (m.status = 'failed' and m.attempts = 0);
    select m.created_at + interval '24 hours' into nth
      from private.mail_outbox m
     where m.recipient = address and m.created_at > now() - interval '24 hours' and m.kind = 'invitation'
       and m.organization_id = mail_recipient_next_at.organization_id
       and m.status <> 'cancelled' and not (m.status = 'failed' and m.attempts = 0)
     order by m.created_at desc offset 4 limit 1;
    next_at := greatest(next_at, nth);
    -- An organization that invited this address today is counted already; another waits until fewer
    -- organizations of its own standing did.
    young := exists (select 1 from public.organizations o
                      where o.id = mail_recipient_next_at.organization_id and o.created_at > now() - interval '1 day');
    if not exists (
      select 1 from private.mail_outbox m
       where m.recipient = address and m.created_at > now() - interval '24 hours' and m.kind = 'invitation'
         and m.organization_id = mail_recipient_next_at.organization_id
         and m.status <> 'cancelled' and not (m.status = 'failed' and m.attempts = 0)
    ) then
      select s.last_at + interval '24 hours' into nth
        from (select max(m.created_at) as last_at
                from private.mail_outbox m join public.organizations o on o.id = m.organization_id
               where m.recipient = address and m.created_at > now() - interval '24 hours' and m.kind = 'invitation'
                 and m.status <> 'cancelled' and not (m.status = 'failed' and m.attempts = 0)
                 and (o.created_at > now() - interval '1 day') = young
               group by m.organization_id) s
       order by s.last_at desc offset (case when young then 2 else 9 end) limit 1;
    end if;
  else
    select m.created_at + interval '24 hours' into nth
      from private.mail_outbox m
     where m.recipient = address and m.created_at > now() - interval '24 hours' and m.kind <> 'invitation'
       and m.status <> 'cancelled' and not (m.status = 'failed' and m.attempts = 0)
     order by m.created_at desc offset 19 limit 1;
  end if;
  next_at := greatest(next_at, nth);
  return case when next_at > now() then next_at end;
end;
$$;

-- Queues a mail (nothing when a mail with the same dedupe key exists) and wakes local senders at
-- commit. Returns the new row's id, or null. An organization's mails go out at most 100 an hour: each
-- mail is due one hour later for every 100 the organization queued in the last 24 hours (an admin
-- inviting a whole address book, say, is spread over the day, not sent in one burst an hour later), so
-- nobody can make this service send mail without bound, nor hold up other organizations' mail. Past
-- a day's worth (2,400) an invitation is refused (54000: the API's 429), and a mail about an endpoint
-- (an organization with thousands of failing endpoints) is recorded as not sent, with the reason. An
-- organization less than a day old sends at most 50 invitations a day (made in minutes, it has no
-- standing yet: hint young_organization).
create function private.mail_enqueue(
  organization_id uuid, kind text, recipient text, data jsonb,
  dedupe_key text default null, give_up_at timestamptz default null
) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  created uuid;
  recent integer;
  next_at timestamptz;
begin
  -- The every-minute alerts ask again for every failing endpoint: a key already used costs one probe.
  if mail_enqueue.dedupe_key is not null
     and exists (select 1 from private.mail_outbox m where m.dedupe_key = mail_enqueue.dedupe_key) then
    return null;
  end if;
  -- One address is not mailed over and over (private.mail_recipient_next_at): an invitation is refused
  -- (54000 with hint recipient_limit and the time it may go as detail: the API's 429 with Retry-After),
  -- a notice is recorded as not sent, with the reason.
  next_at := private.mail_recipient_next_at(mail_enqueue.organization_id, mail_enqueue.kind, mail_enqueue.recipient);
  if next_at is not null then
    if mail_enqueue.kind = 'invitation' then
      raise exception 'this address was sent invitation mails recently; the next one can go at %', next_at
        using errcode = '54000', hint = 'recipient_limit',
              detail = to_char(next_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
    end if;
    insert into private.mail_outbox (organization_id, kind, recipient, data, dedupe_key, status, next_attempt_at,
                                     last_error)
    values (mail_enqueue.organization_id, mail_enqueue.kind, lower(trim(mail_enqueue.recipient)),
            mail_enqueue.data, mail_enqueue.dedupe_key, 'failed', null,
            'not sent: this address was sent 20 notices in the last 24 hours')
    on conflict do nothing;
    return null;
  end if;
  if mail_enqueue.kind = 'invitation'
     and exists (select 1 from public.organizations o
                  where o.id = mail_enqueue.organization_id and o.created_at > now() - interval '1 day')
     and (select count(*) from (
            select 1 from private.mail_outbox m
             where m.organization_id = mail_enqueue.organization_id and m.created_at > now() - interval '24 hours'
               and m.kind = 'invitation' limit 50) r) >= 50 then
    raise exception 'an organization less than a day old can send 50 invitations a day; invite more tomorrow'
      using errcode = '54000', hint = 'young_organization';
  end if;
  -- Bounded: at most 2,400 index entries of mail_outbox_organization_idx, whatever was queued.
  select count(*) into recent from (
    select 1 from private.mail_outbox m
     where m.organization_id = mail_enqueue.organization_id and m.created_at > now() - interval '24 hours'
     limit 2400) r;
  if recent >= 2400 then
    if mail_enqueue.kind = 'invitation' then
      raise exception 'this organization queued 2400 mails in the last 24 hours; invite more later'
        using errcode = '54000';
    end if;
    insert into private.mail_outbox (organization_id, kind, recipient, data, dedupe_key, status, next_attempt_at,
                                     last_error)
    values (mail_enqueue.organization_id, mail_enqueue.kind, lower(trim(mail_enqueue.recipient)),
            mail_enqueue.data, mail_enqueue.dedupe_key, 'failed', null,
            'not sent: the organization queued 2400 mails in the last 24 hours')
    on conflict do nothing;
    return null;
  end if;
  insert into private.mail_outbox (organization_id, kind, recipient, data, dedupe_key, give_up_at, next_attempt_at)
  values (mail_enqueue.organization_id, mail_enqueue.kind, lower(trim(mail_enqueue.recipient)), mail_enqueue.data,
          mail_enqueue.dedupe_key, coalesce(mail_enqueue.give_up_at, now() + interval '3 days'),
          now() + make_interval(hours => recent / 100))
  on conflict do nothing
  returning id into created;
  if created is not null then
    perform pg_notify('mail_outbox', mail_enqueue.kind);
  end if;
  return created;
end;
$$;

-- The addresses of an organization's admins, where Supabase Auth has confirmed them.
create function private.organization_admin_emails(org uuid)
returns table (user_id uuid, email text)
language sql stable security definer
set search_path = ''
as $$
  select p.user_id, lower(u.email)
  from public.profiles p join auth.users u on u.id = p.user_id
  where p.organization_id = org and p.role = 'admin' and u.email is not null and u.email_confirmed_at is not null
  order by p.user_id
$$;

-- Ends mails nobody should get any more: invitations no longer open (revoked, replaced by a newer one,
-- accepted, expired). Their token goes with them.
create function private.mail_cancel_stale() returns integer
language sql volatile security definer
set search_path = ''
as $$
  with stale as (
    update private.mail_outbox m
       set status = 'cancelled', next_attempt_at = null, data = m.data - 'token', lease_token = null,
           leased_until = null
     where m.status = 'pending' and m.kind = 'invitation'
       and not exists (
         select 1 from public.organization_invitations i
          where i.id = (m.data ->> 'invitation_id')::uuid
            and i.accepted_at is null and i.revoked_at is null and i.expires_at > now())
    returning 1
  )
  select count(*)::integer from stale
$$;

-- Claiming and recording (the mail-sender) ---------------------------------------------------------------
-- Due mails for one sender, oldest first, each leased for `lease_seconds`.
create function private.mail_claim(max_rows integer, lease_seconds integer)
returns table (id uuid, lease_token uuid, kind text, recipient text, data jsonb, attempts integer,
               organization_id uuid)
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  perform private.mail_cancel_stale();
  return query
  with due as (
    select m.id from private.mail_outbox m
     where m.status = 'pending' and m.next_attempt_at <= now()
       and (m.leased_until is null or m.leased_until <= now())
     order by m.next_attempt_at
     limit max_rows
     for update skip locked
  )
  update private.mail_outbox m
     set lease_token = gen_random_uuid(), leased_until = now() + make_interval(secs => lease_seconds)
    from due
   where m.id = due.id
  returning m.id, m.lease_token, m.kind, m.recipient, m.data, m.attempts, m.organization_id;
end;
$$;

-- Delay before the next attempt after `failed` failed ones: 30 s doubling, at most an hour.
create function private.mail_retry_delay(failed integer) returns interval
language sql immutable
set search_path = ''
as $$ select make_interval(secs => least(30 * power(2, greatest(failed, 1) - 1), 3600)) $$;

-- Records what the sender did: [{id, lease_token, ok, message_id, error, permanent}]. A sent mail loses
-- its token; a failed one is retried after the backoff, or given up (permanent refusal, or past its
-- give-up time) and loses its token too. A result whose lease ran out still counts as an attempt, and
-- moves the state only if the mail was sent.
create function private.mail_record(results jsonb) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  updated integer;
begin
  with r as (
    select x.*, m.lease_token = x.lease_token and m.leased_until > now() as holds_lease, m.attempts as before,
           m.give_up_at
      from jsonb_to_recordset(results) as x(id uuid, lease_token uuid, ok boolean, message_id text,
                                             error text, permanent boolean)
      join private.mail_outbox m on m.id = x.id
     where m.status = 'pending'
  ), decided as (
    select r.*,
           case when r.ok then 'sent'
                when not r.holds_lease then 'pending'
                when coalesce(r.permanent, false)
                     or now() + private.mail_retry_delay(r.before + 1) > r.give_up_at then 'failed'
                else 'pending' end as new_status
      from r
  )
  update private.mail_outbox m
     set status = d.new_status,
         attempts = m.attempts + 1,
         last_attempt_at = now(),
         last_error = case when d.ok then m.last_error else left(d.error, 1000) end,
         sent_at = case when d.ok then now() end,
         provider_message_id = case when d.ok then left(d.message_id, 300) end,
         data = case when d.new_status = 'pending' then m.data else m.data - 'token' end,
         next_attempt_at = case
           when d.new_status <> 'pending' then null
           when not d.holds_lease then m.next_attempt_at
           else now() + private.mail_retry_delay(d.before + 1) end,
         lease_token = case when d.holds_lease then null else m.lease_token end,
         leased_until = case when d.holds_lease then null else m.leased_until end
    from decided d
   where m.id = d.id;
  get diagnostics updated = row_count;
  return updated;
end;
$$;

-- Failing endpoints ----------------------------------------------------------------------------------
-- What the mails about an endpoint say, and the one place an admin mail about it is queued. One mail per
-- admin and episode: the key names the episode (when the run of failures began, or when the endpoint
-- was disabled) and the admin.
create function private.mail_endpoint_admins(kind text, endpoint_id uuid, episode timestamptz, extra jsonb)
returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  ep public.webhook_endpoints;
  org_name text;
  a record;
  queued integer := 0;
begin
  select * into ep from public.webhook_endpoints e where e.id = mail_endpoint_admins.endpoint_id;
  if ep.id is null then
    return 0;
  end if;
  select o.name into org_name from public.organizations o where o.id = ep.organization_id;
  for a in select * from private.organization_admin_emails(ep.organization_id) loop
    if private.mail_enqueue(ep.organization_id, kind, a.email,
         jsonb_build_object('endpoint_id', ep.id, 'url', ep.url, 'description', ep.description,
                            'organization_name', org_name) || extra,
         format('%s:%s:%s:%s', kind, ep.id, extract(epoch from episode), a.user_id)) is not null then
      queued := queued + 1;
    end if;
  end loop;
  return queued;
end;
$$;

-- An endpoint failing for an hour, and one a day away from being disabled for 5 days of failures
-- (private.webhook_disable_failing_endpoints counts from the later of the first failure and the
-- endpoint's last change): called every minute by private.mail_housekeeping(), on the partial index of
-- failing endpoints. Keys already used queue nothing.
create function private.mail_endpoint_alerts() returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  f record;
  queued integer := 0;
begin
  for f in
    select h.endpoint_id, h.failing_since, h.consecutive_failures,
           greatest(h.failing_since, e.updated_at) + private.webhook_failing_disable_after() as disable_at
      from public.webhook_endpoint_health h
      join public.webhook_endpoints e on e.id = h.endpoint_id
     where h.failing_since <= now() - private.webhook_failing_alert_after() and h.last_outcome = 'failed'
       and e.enabled
  loop
    queued := queued + private.mail_endpoint_admins('endpoint_failing', f.endpoint_id, f.failing_since,
      jsonb_build_object('failing_since', f.failing_since, 'consecutive_failures', f.consecutive_failures,
                         'disable_at', f.disable_at));
    if f.disable_at <= now() + interval '1 day' then
      queued := queued + private.mail_endpoint_admins('endpoint_disable_soon', f.endpoint_id, f.failing_since,
        jsonb_build_object('failing_since', f.failing_since, 'consecutive_failures', f.consecutive_failures,
                           'disable_at', f.disable_at));
    end if;
  end loop;
  return queued;
end;
$$;

-- The system disabled an endpoint (410 Gone, or 5 days of failures: private.webhook_disable_endpoints):
-- its admins get a mail, in the same transaction. An admin's own disable (through the API or PostgREST,
-- as `authenticated`) sends none: whoever did it knows.
create function private.mail_endpoint_disabled() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if coalesce(current_setting('role', true), 'none') in ('authenticated', 'anon', 'config_api') then
    return null;
  end if;
  perform private.mail_endpoint_admins('endpoint_disabled', new.id, new.disabled_at,
    jsonb_build_object('disabled_reason', new.disabled_reason, 'disabled_at', new.disabled_at));
  return null;
end;
$$;
create trigger webhook_endpoints_mail_disabled after update of enabled on public.webhook_endpoints
  for each row when (old.enabled and not new.enabled)
  execute function private.mail_endpoint_disabled();

-- Erasing a person (20261125110000_person_erasure.sql): at most `batch_size` mails linked to the member.
-- Those linked to them alone lose recipient and content (pending ones are cancelled); those linked to
-- someone else too lose only the link. Returns {"seen": n, "redacted": n, "kept": [ids]}.
create function private.mail_erase(org uuid, member uuid, batch_size integer) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  result jsonb;
begin
  with batch as (
    select x.id, x.member_ids = array[member] as theirs from private.mail_outbox x
     where x.organization_id = org and x.member_ids <> '{}' and x.member_ids @> array[member]
     limit batch_size
  ), changed as (
    update private.mail_outbox m
       set recipient = case when b.theirs then 'redacted' else m.recipient end,
           data = case when b.theirs then '{"redacted": true}'::jsonb else m.data end,
           status = case when b.theirs and m.status = 'pending' then 'cancelled' else m.status end,
           next_attempt_at = case when b.theirs then null else m.next_attempt_at end,
           last_error = case when b.theirs then null else m.last_error end,
           lease_token = case when b.theirs then null else m.lease_token end,
           leased_until = case when b.theirs then null else m.leased_until end,
           member_ids = array_remove(m.member_ids, member)
      from batch b
     where m.id = b.id
    returning m.id, b.theirs
  )
  select jsonb_build_object('seen', (select count(*) from batch),
                            'redacted', (select count(*) from changed where theirs),
                            'kept', (select coalesce(jsonb_agg(id), '[]') from changed where not theirs))
    into result;
  return result;
end;
$$;

-- Housekeeping, every minute --------------------------------------------------------------------------
--   stale invitation mails are cancelled, mails past their give-up time fail (losing any token),
--   endpoint alerts are queued, finished mails older than 30 days are removed (1,000 at a time), and
--   on a hosted project the sender is invoked when something is due.
create function private.mail_housekeeping() returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  cancelled integer;
  expired integer;
  alerts integer;
  removed integer;
begin
  cancelled := private.mail_cancel_stale();
  update private.mail_outbox m
     set status = 'failed', next_attempt_at = null, data = m.data - 'token',
         last_error = coalesce(m.last_error || '; ', '') || 'gave up: not sent before ' || m.give_up_at
   where m.status = 'pending' and m.give_up_at <= now()
     and (m.leased_until is null or m.leased_until <= now());
  get diagnostics expired = row_count;
  alerts := private.mail_endpoint_alerts();
  delete from private.mail_outbox m
   where m.id in (select x.id from private.mail_outbox x
                   where x.status <> 'pending' and x.created_at < now() - interval '30 days' limit 1000);
  get diagnostics removed = row_count;
  perform private.mail_invoke_sender();
  return jsonb_build_object('cancelled', cancelled, 'given_up', expired, 'alerts_queued', alerts,
                            'removed', removed);
end;
$$;

-- Hosted: starting the sender -------------------------------------------------------------------------
-- As for the webhook dispatcher (20261122130400_outbound_webhook_schedule.sql): a pg_net POST to the
-- mail-sender Edge Function with the project URL and the bearer secret from Vault (the same
-- `webhook_dispatch_secret`, which the function reads as WEBHOOK_DISPATCH_SECRET), while mail is due.
-- Null where pg_net, Vault or the secrets are missing (locally the dev server sends on NOTIFY).
create function private.mail_invoke_sender() returns bigint
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not exists (select 1 from private.mail_outbox m where m.status = 'pending' and m.next_attempt_at <= now()) then
    return null;
  end if;
  return private.post_function('mail-sender', '{}'::jsonb);
end;
$$;

-- New mails start the sender at once (at most every 2 s across sessions), so an invitation arrives in
-- seconds, not at the next minute. A failing wake-up never fails the change that queued the mail
-- (private.wake_on_insert). True: requested; false: debounced, nothing due, or no pg_net or secrets.
insert into private.function_wakes (function_name) values ('mail-sender');

create function private.mail_wake_sender() returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not private.take_wake('mail-sender', interval '2 seconds') then
    return false;
  end if;
  return private.mail_invoke_sender() is not null;
end;
$$;
create trigger mail_outbox_wake_sender after insert on private.mail_outbox
  for each statement execute function private.wake_on_insert('private.mail_wake_sender', 'mail-sender');

-- The operator's view -----------------------------------------------------------------------------------
-- Is mail going out? For the SQL editor and monitoring (postgres, service_role), like
-- public.webhook_operator_health(): the queue, what was sent and given up, the last error, the mail cron
-- jobs' last runs, and alerts.
create function public.mail_operator_health(max_due_age interval default interval '10 minutes')
returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  q record;
  last_failure jsonb;
  alerts jsonb := '[]';
  cron_runs jsonb := private.cron_job_runs('mail-%');
begin
  select count(*) filter (where m.status = 'pending') as pending,
         count(*) filter (where m.status = 'pending' and m.next_attempt_at <= now()) as due,
         count(*) filter (where m.status = 'pending' and m.attempts > 0) as retrying,
         min(m.created_at) filter (where m.status = 'pending' and m.next_attempt_at <= now()) as oldest_due,
         count(*) filter (where m.status = 'sent' and m.sent_at > now() - interval '24 hours') as sent_24h,
         count(*) filter (where m.status = 'failed' and m.last_attempt_at > now() - interval '24 hours') as failed_24h,
         max(m.sent_at) as last_sent_at
    into q
    from private.mail_outbox m;
  select jsonb_build_object('at', m.last_attempt_at, 'kind', m.kind, 'attempts', m.attempts,
                            'status', m.status, 'error', m.last_error)
    into last_failure
    from private.mail_outbox m
   where m.last_error is not null and m.last_attempt_at is not null
   order by m.last_attempt_at desc limit 1;
  if q.oldest_due < now() - max_due_age then
    alerts := alerts || jsonb_build_object('severity', 'critical', 'code', 'mail_behind',
      'message', format('%s mails are due, the oldest for %s; last error: %s', q.due,
                        date_trunc('second', now() - q.oldest_due), coalesce(last_failure ->> 'error', 'none')));
  end if;
  if q.failed_24h > 0 then
    alerts := alerts || jsonb_build_object('severity', 'warning', 'code', 'mail_given_up',
      'message', format('%s mails were given up in the last 24 hours', q.failed_24h));
  end if;
  -- The mail jobs (named mail-*, so a new one is watched too); webhook_operator_health watches every job.
  alerts := alerts || private.cron_job_alerts(cron_runs);
  return jsonb_build_object(
    'checked_at', now(),
    'status', case when alerts @> '[{"severity": "critical"}]' then 'critical'
                   when jsonb_array_length(alerts) > 0 then 'warning' else 'ok' end,
    'alerts', alerts,
    'cron', cron_runs,
    'queue', jsonb_build_object('pending', q.pending, 'due', q.due, 'retrying', q.retrying,
                                'oldest_due_at', q.oldest_due,
                                'oldest_due_age_seconds', floor(extract(epoch from now() - q.oldest_due))),
    'sent_24h', q.sent_24h, 'failed_24h', q.failed_24h, 'last_sent_at', q.last_sent_at,
    'last_failure', last_failure);
end;
$$;

revoke all on function private.mail_enqueue(uuid, text, text, jsonb, text, timestamptz),
  private.mail_recipient_next_at(uuid, text, text),
  private.organization_admin_emails(uuid), private.mail_cancel_stale(), private.mail_claim(integer, integer),
  private.mail_retry_delay(integer), private.mail_record(jsonb),
  private.mail_endpoint_admins(text, uuid, timestamptz, jsonb), private.mail_endpoint_alerts(),
  private.mail_endpoint_disabled(), private.mail_erase(uuid, uuid, integer), private.mail_housekeeping(),
  private.mail_invoke_sender(), private.mail_wake_sender()
  from public, anon, authenticated;
revoke all on function public.mail_operator_health(interval) from public, anon, authenticated;
grant execute on function public.mail_operator_health(interval) to service_role;

select cron.schedule('mail-housekeeping', '* * * * *', 'select private.mail_housekeeping()');
