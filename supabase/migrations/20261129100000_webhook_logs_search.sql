-- Webhook Logs, search by what is inside: find the deliveries whose body contains a value (a member's
-- e-mail, a donation id), as GET /webhooks/deliveries?contains=… does. The body is the event's payload,
-- sent as payload::text; a trigram index on that text answers "contains" (ILIKE '%value%') without
-- reading every body. Row-level security bounds the search to the caller's organization (the events
-- policy), and the listing then pages the matching deliveries as any other.
-- See docs/outbound-webhooks.md#webhook-logs and docs/benchmarks/history.md (content search).

-- pg_trgm is one of the extensions Supabase offers (created in schema extensions, as Supabase keeps
-- them); Debian's PostgreSQL ships it in the server package.
create extension if not exists pg_trgm with schema extensions;

-- Every trigram of every body. Events are written once and never updated (only erasure rewrites one),
-- so the index costs the outbox's insert and nothing after.
create index webhook_events_body_trgm_idx
  on public.webhook_events using gin ((payload::text) extensions.gin_trgm_ops);
