// The replay endpoint every receiver serves: POST /<function>/replay, called by the configuration API
// with INBOUND_REPLAY_SECRET (its own secret rather than the service-role key: all it can do is replay
// what is logged), so replay runs the owning function's live code. @see docs/inbound-webhooks.md#replay
//   {"organization_id": uuid, "log_id": uuid}  one row of that organization
//   {"organization_id": uuid}                  its failed, unmatched and interrupted rows, oldest first
import type { Context, Hono } from "hono";
import { z } from "zod";
import type { Sql } from "../db.ts";
import { badRequest, notFound, serviceUnavailable, unauthorized } from "../errors.ts";
import { secretsEqual } from "../hmac.ts";
import { replayFailed, replayLogged } from "./replay.ts";
import type { Receiver } from "./types.ts";

const ReplayRequest = z.object({
  organization_id: z.uuid(),
  log_id: z.uuid().optional(),
  stale_after_seconds: z.number().int().min(0).max(86400).optional(),
});

export function mountReplay<C>(app: Hono, sql: Sql, receiver: Receiver<C>, replaySecret?: string): void {
  app.post("/replay", async (c: Context) => {
    requireReplaySecret(c, replaySecret);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw badRequest("invalid_json", "Body is not valid JSON");
    }
    const parsed = ReplayRequest.safeParse(body);
    if (!parsed.success) {
      throw badRequest("invalid_request", "Expected organization_id and optionally log_id");
    }
    const { organization_id, log_id, stale_after_seconds } = parsed.data;
    if (log_id) {
      const outcome = await replayLogged(sql, receiver, log_id, organization_id);
      if (!outcome) throw notFound("not_found", "No such log entry");
      return c.json({ data: [outcome] });
    }
    return c.json({
      data: await replayFailed(sql, receiver, organization_id, { staleAfterSeconds: stale_after_seconds }),
    });
  });
}

/** Bearer <replay secret>, compared in constant time. */
function requireReplaySecret(c: Context, replaySecret: string | undefined): void {
  if (!replaySecret) throw serviceUnavailable("Replay is not configured (INBOUND_REPLAY_SECRET)");
  const header = c.req.header("authorization") ?? "";
  const given = header.startsWith("Bearer ") ? header.slice(7) : "";
  if (!given || !secretsEqual(given, replaySecret)) throw unauthorized();
}
