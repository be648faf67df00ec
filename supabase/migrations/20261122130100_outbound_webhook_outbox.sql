-- Outbound webhooks, part 2: the outbox. Domain changes raise events in the same transaction as the
-- change itself, so an event exists exactly when its change committed: never lost, never invented by a
-- rolled-back write. See docs/events/README.md
--
-- The triggers are statement-level with transition tables: a 1,000-row insert runs each trigger once
-- and fans out with two set-based inserts, with no per-row round trip. An organization without an
-- enabled endpoint subscribed to the event pays for one indexed lookup and stores nothing.
--
--   member.created       insert into members
--   member.lost          members.status changes to 'lost' (no other update raises it)
--   donation.recorded    insert into donations (manual, online or recurring)
--   attendance.marked    insert into attendance
--   workflow.completed   a workflow_runs row reaches a finished state: 'completed' or 'failed' (the
--                        finished states of domain_core), on insert or update; data.row.status says
--                        which. 'cancelled' is a stop, not a finish, and raises nothing.

-- The fields of `new` that differ from `old` (for an insert, call it with '{}' to get every field).
create function private.jsonb_changed_fields(old jsonb, new jsonb) returns jsonb
language sql immutable
set search_path = ''
as $$
  select coalesce(jsonb_object_agg(n.key, n.value), '{}'::jsonb)
  from jsonb_each(new) n
  where old -> n.key is distinct from n.value
$$;

-- The body every delivery carries, built in this one place (the outbox and the test event):
-- {"id","type","created_at","organization_id","data":{"row","delta"}}, at most
-- private.webhook_max_body_bytes() of JSON text; a larger one is sent trimmed, with a `truncated`
-- marker. See docs/outbound-webhooks.md#body-size
create function private.webhook_envelope(event_id uuid, event_type text, organization_id uuid, "row" jsonb,
                                         delta jsonb)
returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  head jsonb := jsonb_build_object('id', event_id, 'type', event_type, 'created_at', now(),
                                   'organization_id', organization_id);
  body jsonb := head || jsonb_build_object('data', jsonb_build_object('row', "row", 'delta', delta));
  full_bytes integer := octet_length(body::text);
  kept_row jsonb;
  kept_delta jsonb;
  omitted jsonb;
begin
  if full_bytes <= private.webhook_max_body_bytes() then
    return body;
  end if;
  select coalesce(jsonb_object_agg(f.key, f.value) filter (where f.part = 'row' and f.small), '{}'),
         coalesce(jsonb_object_agg(f.key, f.value) filter (where f.part = 'delta' and f.small), '{}'),
         coalesce(jsonb_agg(distinct f.key order by f.key) filter (where not f.small), '[]')
    into kept_row, kept_delta, omitted
    from (
      select p.part, x.key, x.value, octet_length(x.value::text) <= 1024 as small
      from (values ('row', "row"), ('delta', delta)) p(part, fields)
      cross join lateral jsonb_each(case when jsonb_typeof(p.fields) = 'object' then p.fields else '{}' end) x
    ) f;
  body := head || jsonb_build_object(
    'data', jsonb_build_object('row', kept_row, 'delta', kept_delta),
    'truncated', jsonb_build_object('max_body_bytes', private.webhook_max_body_bytes(),
                                    'original_body_bytes', full_bytes, 'omitted_fields', omitted));
  if octet_length(body::text) <= private.webhook_max_body_bytes() then
    return body;
  end if;
  return head || jsonb_build_object(
    'data', jsonb_build_object('row', jsonb_strip_nulls(jsonb_build_object('id', kept_row -> 'id')),
                               'delta', '{}'::jsonb),
    'truncated', jsonb_build_object('max_body_bytes', private.webhook_max_body_bytes(),
                                    'original_body_bytes', full_bytes, 'omitted_fields', null));
end;
$$;

-- Stores one event per item and one delivery per subscribed enabled endpoint, then wakes local
-- dispatchers (NOTIFY is delivered at commit, when the rows are visible). Items are
-- [{organization_id, row, delta, member_id, except_endpoint_id}] (member_id: the member the event is
-- about, if any; except_endpoint_id: an endpoint the event must not go to, the one an alert is about).
-- Returns the number of deliveries created.
create function private.webhook_enqueue(event_type text, items jsonb) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  created integer;
begin
  if items is null or jsonb_array_length(items) = 0 then
    return 0;
  end if;
  with item as materialized (
    select gen_random_uuid() as id, (i ->> 'organization_id')::uuid as organization_id, i -> 'row' as row,
           i -> 'delta' as delta, i ->> 'member_id' as member_id,
           (i ->> 'except_endpoint_id')::uuid as except_endpoint_id
    from jsonb_array_elements(items) i
  ), event as (
    insert into public.webhook_events (id, organization_id, type, payload, created_at, member_ids)
    select item.id, item.organization_id, event_type,
           private.webhook_envelope(item.id, event_type, item.organization_id, item.row, item.delta), now(),
           case when item.member_id is null then '{}'::uuid[] else array[item.member_id::uuid] end
    from item
    returning id, organization_id, body_bytes
  ), delivery as (
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, event_type, body_bytes,
                                           status, next_attempt_at)
    select event.organization_id, event.id, e.id, event_type, event.body_bytes, 'pending', now()
    from event
    join item on item.id = event.id
    join public.webhook_endpoints e
      on e.organization_id = event.organization_id and e.enabled and event_type = any (e.events)
     and e.id is distinct from item.except_endpoint_id
    returning 1
  )
  select count(*) into created from delivery;
  if created > 0 then
    perform pg_notify('webhook_deliveries', event_type);
  end if;
  return created;
end;
$$;

-- The organizations among `organization_ids` with an enabled endpoint subscribed to the event. The
-- triggers build JSON only for rows of these; usually there are none and nothing else happens.
create function private.webhook_subscribed_organizations(event_type text, organization_ids uuid[])
returns uuid[]
language sql stable security definer
set search_path = ''
as $$
  select coalesce(array_agg(distinct e.organization_id), '{}')
  from public.webhook_endpoints e
  where e.organization_id = any (organization_ids) and e.enabled and event_type = any (e.events)
$$;

-- The member an event about this row concerns: the member row itself, or the row's member. The row's
-- links (member_ids) are ours, never part of the body.
create function private.webhook_member_of(tbl text, "row" jsonb) returns text
language sql immutable
set search_path = ''
as $$
  select case when tbl = 'members' then "row" ->> 'id' else "row" ->> 'member_id' end
$$;

-- The one outbox trigger function (security definer: the inserting user may not write the outbox
-- tables), attached per table and event with its arguments:
--   tg_argv[0]        the event type;
--   tg_argv[1]        optional: a column whose value decides (e.g. status);
--   tg_argv[2..]      the values that raise the event when a row enters one of them: inserted with
--                     one, or updated into one from a value outside them.
-- Without a column every inserted row raises the event. `delta` is the whole row for an insert and the
-- changed fields for an update. PL/pgSQL compiles a trigger function separately for each table it is
-- attached to, so the transition tables new_rows/old_rows can be read with static SQL.
create function private.webhook_outbox() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  event_type text := tg_argv[0];
  col text := tg_argv[1];
  raising text[] := tg_argv[2:];
  orgs uuid[];
  items jsonb;
begin
  if tg_op = 'INSERT' then
    select private.webhook_subscribed_organizations(event_type, array_agg(distinct n.organization_id))
      into orgs from new_rows n where col is null or to_jsonb(n) ->> col = any (raising);
    if cardinality(orgs) = 0 then
      return null;
    end if;
    select jsonb_agg(jsonb_build_object('organization_id', n.organization_id, 'row', r.j, 'delta', r.j,
                                        'member_id', private.webhook_member_of(tg_table_name, r.j)))
      into items
      from new_rows n, lateral (select to_jsonb(n) - 'member_ids' as j) r
     where n.organization_id = any (orgs) and (col is null or r.j ->> col = any (raising));
  else
    select private.webhook_subscribed_organizations(event_type, array_agg(distinct n.organization_id))
      into orgs from new_rows n where to_jsonb(n) ->> col = any (raising);
    if cardinality(orgs) = 0 then
      return null;
    end if;
    select jsonb_agg(jsonb_build_object('organization_id', n.organization_id, 'row', r.j,
                                        'delta', private.jsonb_changed_fields(r.o, r.j),
                                        'member_id', private.webhook_member_of(tg_table_name, r.j)))
      into items
      from new_rows n
      join old_rows o on o.id = n.id
      cross join lateral (select to_jsonb(n) - 'member_ids' as j, to_jsonb(o) - 'member_ids' as o) r
     where n.organization_id = any (orgs) and r.j ->> col = any (raising)
       and not coalesce(r.o ->> col = any (raising), false);
  end if;
  perform private.webhook_enqueue(event_type, items);
  return null;
end;
$$;

create trigger members_webhook_created after insert on public.members
  referencing new table as new_rows
  for each statement execute function private.webhook_outbox('member.created');
create trigger members_webhook_lost after update on public.members
  referencing old table as old_rows new table as new_rows
  for each statement execute function private.webhook_outbox('member.lost', 'status', 'lost');
create trigger donations_webhook_recorded after insert on public.donations
  referencing new table as new_rows
  for each statement execute function private.webhook_outbox('donation.recorded');
create trigger attendance_webhook_marked after insert on public.attendance
  referencing new table as new_rows
  for each statement execute function private.webhook_outbox('attendance.marked');
create trigger workflow_runs_webhook_completed_insert after insert on public.workflow_runs
  referencing new table as new_rows
  for each statement execute function private.webhook_outbox('workflow.completed', 'status', 'completed', 'failed');
create trigger workflow_runs_webhook_completed_update after update on public.workflow_runs
  referencing old table as old_rows new table as new_rows
  for each statement execute function private.webhook_outbox('workflow.completed', 'status', 'completed', 'failed');

-- None of this is callable by users directly; the triggers run as their owner.
revoke all on function private.jsonb_changed_fields(jsonb, jsonb), private.webhook_enqueue(text, jsonb),
  private.webhook_subscribed_organizations(text, uuid[]), private.webhook_outbox(),
  private.webhook_member_of(text, jsonb),
  private.webhook_envelope(uuid, text, uuid, jsonb, jsonb) from public, authenticated;
grant execute on function private.webhook_enqueue(text, jsonb) to service_role;
