-- The events feed (GET /webhooks/events): an organization's events in the order their transactions
-- committed, for pollers (Zapier, Make, n8n) and `npm run listen`. See docs/configuration-api.md#the-events-feed
--
-- A cursor must never skip an event. Neither created_at (the transaction's start) nor a sequence is
-- assigned in commit order: an event written by a transaction that started first but commits last would
-- land behind a cursor that has already passed it. So each event records the id of the transaction that
-- wrote it, and the feed lists only events whose transaction is older than every transaction still
-- running (pg_snapshot_xmin of the current snapshot): each of those has ended, and any event written
-- later belongs to a transaction at or above that horizon. Ordered by (xid, id), a cursor then walks
-- every event exactly once, whatever commits concurrently. The price: an event appears once every
-- transaction that began before its own has ended (normally milliseconds; a transaction left open holds
-- the feed back, it loses nothing).

alter table public.webhook_events add column xid xid8 not null default pg_current_xact_id();

-- The feed's walk: one organization's events by (xid, id), either way, and per event type.
create index webhook_events_feed_idx on public.webhook_events (organization_id, xid, id);
create index webhook_events_feed_type_idx on public.webhook_events (organization_id, type, xid, id);

-- How many days the caller's organization keeps its delivery history, events included (the retention
-- of 20261123130000_log_retention.sql): how long a feed cursor stays good. Security definer because the
-- retention setting is for the organization's people, while the feed is for its API keys too; the
-- organization is the one the caller may configure, from the same helper the events' policy uses.
create function private.webhook_feed_retention_days() returns integer
language sql stable security definer
set search_path = ''
as $$
  select coalesce(
    (select r.webhook_log_days from public.organization_log_retention r
      where r.organization_id = private.webhook_admin_organization_id()),
    30)
$$;
revoke all on function private.webhook_feed_retention_days() from public, anon, authenticated;
grant execute on function private.webhook_feed_retention_days() to config_api;
