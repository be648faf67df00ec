-- The graphile-worker peer's own tables and trigger (scripts/bench/peer/worker.mjs applies this to the
-- benchmark's throwaway database once graphile_worker's schema exists). It does what our outbox does
-- for member.created: one event with the same envelope body (private.webhook_envelope, from our
-- migrations), one delivery per subscribed endpoint, and one job per delivery, all in the inserting
-- transaction; a statement-level trigger with one add_jobs call per statement, the cheapest way
-- graphile-worker offers to enqueue a batch from SQL.
create schema if not exists peer;

create table if not exists peer.endpoints (
  id uuid primary key default gen_random_uuid(),
  organization_id uuid not null,
  url text not null,
  secret text not null,
  events text[] not null,
  enabled boolean not null default true
);
create index if not exists endpoints_organization on peer.endpoints (organization_id);

create table if not exists peer.events (
  id uuid primary key,
  organization_id uuid not null,
  type text not null,
  body text not null,
  created_at timestamptz not null default now()
);

create table if not exists peer.deliveries (
  id bigint generated always as identity primary key,
  event_id uuid not null references peer.events (id),
  endpoint_id uuid not null references peer.endpoints (id),
  status text not null default 'pending',
  attempts integer not null default 0,
  response_status integer,
  last_error text,
  delivered_at timestamptz
);

create or replace function peer.members_created() returns trigger
language plpgsql
as $$
declare
  jobs integer;
begin
  with item as materialized (
    select gen_random_uuid() as id, n.organization_id, to_jsonb(n) as r
    from new_rows n
    where exists (select 1 from peer.endpoints e
                  where e.organization_id = n.organization_id and e.enabled
                    and 'member.created' = any (e.events))
  ), event as (
    insert into peer.events (id, organization_id, type, body)
    select id, organization_id, 'member.created',
           private.webhook_envelope(id, 'member.created', organization_id, r, r)::text
    from item
    returning id, organization_id, body
  ), delivery as (
    insert into peer.deliveries (event_id, endpoint_id)
    select event.id, e.id
    from event
    join peer.endpoints e
      on e.organization_id = event.organization_id and e.enabled and 'member.created' = any (e.events)
    returning id, event_id, endpoint_id
  )
  select count(*) into jobs from graphile_worker.add_jobs((
    select array_agg(row('deliver_webhook',
                         json_build_object('delivery_id', d.id, 'endpoint_id', d.endpoint_id,
                                           'event_id', d.event_id, 'type', 'member.created',
                                           'url', e.url, 'body', event.body),
                         null, null, null, null, null, null)::graphile_worker.job_spec)
    from delivery d
    join event on event.id = d.event_id
    join peer.endpoints e on e.id = d.endpoint_id));
  return null;
end;
$$;

-- The textbook variant (worker.mjs with PEER_TRIGGER=row): a row-level trigger that calls add_job once
-- per subscribed endpoint, as graphile-worker's documentation shows triggers enqueueing jobs.
create or replace function peer.member_created() returns trigger
language plpgsql
as $$
declare
  event_id uuid := gen_random_uuid();
  body text;
  ep record;
  delivery_id bigint;
begin
  if not exists (select 1 from peer.endpoints x
                 where x.organization_id = new.organization_id and x.enabled
                   and 'member.created' = any (x.events)) then
    return null;
  end if;
  body := private.webhook_envelope(event_id, 'member.created', new.organization_id, to_jsonb(new),
                                   to_jsonb(new))::text;
  insert into peer.events (id, organization_id, type, body)
  values (event_id, new.organization_id, 'member.created', body);
  for ep in select id, url from peer.endpoints
           where organization_id = new.organization_id and enabled and 'member.created' = any (events) loop
    insert into peer.deliveries (event_id, endpoint_id) values (event_id, ep.id) returning id into delivery_id;
    perform graphile_worker.add_job('deliver_webhook',
      json_build_object('delivery_id', delivery_id, 'endpoint_id', ep.id, 'event_id', event_id,
                        'type', 'member.created', 'url', ep.url, 'body', body));
  end loop;
  return null;
end;
$$;

-- Ours is not in this database's way: the peer is the only webhook system here.
alter table public.members disable trigger members_webhook_created;

-- The statement-level trigger by default; worker.mjs swaps in the row-level one for PEER_TRIGGER=row.
drop trigger if exists members_peer_created on public.members;
drop trigger if exists members_peer_created_row on public.members;
create trigger members_peer_created after insert on public.members
  referencing new table as new_rows
  for each statement execute function peer.members_created();
