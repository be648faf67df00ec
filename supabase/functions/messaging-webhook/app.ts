// Inbound WhatsApp gateway webhook (Cloud API shape).
//
//   GET  /messaging-webhook          subscription handshake: echoes hub.challenge when hub.verify_token
//                                    is the verify token of a registration (which records that it
//                                    passed), 403 otherwise
//   POST /messaging-webhook          messages and delivery receipts, signed x-hub-signature-256
//   POST /messaging-webhook/replay   the configuration API's replay of logged payloads (replay secret)
//
// POST runs the shared inbound pipeline with the WhatsApp receiver (receiver.ts). Each phone-number id
// a body names goes to the registration whose app secret signed it; ids none verifies for are skipped.
// A body that verifies for no id is 401, whether or not anyone registered its ids, so the answer never
// tells who holds a number. @see docs/whatsapp.md#who-a-number-belongs-to
import type { Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { badRequest, forbidden } from "../_shared/errors.ts";
import { runInbound } from "../_shared/inbound/pipeline.ts";
import { mountReplay } from "../_shared/inbound/replay_route.ts";
import { markReceived, passHandshake } from "./accounts.ts";
import { whatsappReceiver } from "./receiver.ts";

export { SIGNATURE_HEADER } from "./receiver.ts";
export const receiver = whatsappReceiver;
const MAX_CHALLENGE_LENGTH = 256;

interface ApplyCounts {
  messages?: { stored?: number; duplicates?: number };
  receipts?: { applied?: number; waiting?: number; duplicates?: number };
}

export function createApp(deps: AppDeps): Hono {
  const app = newApp("messaging-webhook", deps);

  app.get("/", async (c) => {
    const mode = c.req.query("hub.mode");
    const token = c.req.query("hub.verify_token");
    const challenge = c.req.query("hub.challenge");
    if (mode !== "subscribe" || !token || (await passHandshake(deps.sql, token)).length === 0) {
      throw forbidden("verification_failed", "Verify token does not match");
    }
    if (!challenge || challenge.length > MAX_CHALLENGE_LENGTH) {
      throw badRequest("invalid_challenge", "hub.challenge is missing or too long");
    }
    return c.text(challenge, 200, { "x-content-type-options": "nosniff" });
  });

  mountReplay(app, deps.sql, whatsappReceiver, deps.config.replaySecret);

  app.post("/", async (c) => {
    const outcome = await runInbound(deps.sql, whatsappReceiver, c.req.raw);
    // Verified and logged: these registrations work (their page says so).
    await markReceived(deps.sql, outcome.parts.map((p) => p.target.accountId!)).catch(() => {});
    if (outcome.parts.every((p) => p.change.messages.length === 0 && p.change.receipts.length === 0)) {
      return c.json({ status: "ignored" }, 200);
    }
    const total = {
      messages: { stored: 0, duplicates: 0 },
      receipts: { applied: 0, waiting: 0, duplicates: 0 },
    };
    for (const part of outcome.parts) {
      if (part.status === "duplicate") {
        // Already applied as a whole: everything in it is a duplicate.
        total.messages.duplicates += part.change.messages.length;
        total.receipts.duplicates += part.change.receipts.length;
        continue;
      }
      const r = (part.result ?? {}) as ApplyCounts;
      total.messages.stored += r.messages?.stored ?? 0;
      total.messages.duplicates += r.messages?.duplicates ?? 0;
      total.receipts.applied += r.receipts?.applied ?? 0;
      total.receipts.waiting += r.receipts?.waiting ?? 0;
      total.receipts.duplicates += r.receipts?.duplicates ?? 0;
    }
    return c.json({
      status: "ok",
      ...total,
      log_ids: outcome.parts.map((p) => p.logId),
      skipped_phone_number_ids: outcome.unknown.length,
    }, 200);
  });

  return app;
}
