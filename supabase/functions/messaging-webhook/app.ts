// Inbound WhatsApp gateway webhook (Cloud API shape).
//
//   GET  /messaging-webhook[/<organization_id>]   subscription handshake: echoes hub.challenge when
//                                    hub.verify_token is the verify token of a registration (of that
//                                    organization, at its own URL), which records that it passed; 403
//                                    otherwise, 429 for a client or URL that presented too many wrong
//                                    tokens (handshake_limit.ts)
//   POST /messaging-webhook[/<organization_id>]   messages and delivery receipts, signed x-hub-signature-256
//   POST /messaging-webhook/replay   the configuration API's replay of logged payloads (replay secret)
//
// POST runs the shared inbound pipeline with the WhatsApp receiver (receiver.ts). Each phone-number id
// a body names goes to the registration whose app secret signed it (only the organization's own at its
// URL); ids none verifies for are skipped. A body that verifies for no id is 401, whether or not anyone
// registered its ids, so the answer never tells who holds a number.
// @see docs/whatsapp.md#who-a-number-belongs-to
import type { Context, Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { AppError, badRequest, forbidden, notFound } from "../_shared/errors.ts";
import { secretsEqual } from "../_shared/hmac.ts";
import { runInbound } from "../_shared/inbound/pipeline.ts";
import { mountReplay } from "../_shared/inbound/replay_route.ts";
import { markReceived, passHandshake } from "./accounts.ts";
import { clientOf, handshakeLimiter } from "./handshake_limit.ts";
import { whatsappReceiver } from "./receiver.ts";

export { SIGNATURE_HEADER } from "./receiver.ts";
export const receiver = whatsappReceiver;
const MAX_CHALLENGE_LENGTH = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isOwnCheck(header: string | undefined, replaySecret: string | undefined): boolean {
  const given = header?.startsWith("Bearer ") ? header.slice(7) : "";
  return !!replaySecret && !!given && secretsEqual(given, replaySecret);
}

interface ApplyCounts {
  messages?: { stored?: number; duplicates?: number };
  receipts?: { applied?: number; waiting?: number; duplicates?: number };
}

export function createApp(deps: AppDeps): Hono {
  const app = newApp("messaging-webhook", deps);

  const limiter = handshakeLimiter();
  const handshake = async (c: Context) => {
    const organizationId = c.req.param("organizationId");
    if (organizationId !== undefined && !UUID.test(organizationId)) throw notFound();
    const client = clientOf(c.req.raw);
    const url = organizationId ?? "shared";
    const wait = limiter.retryAfter(client, url);
    if (wait > 0) {
      throw new AppError(
        429,
        "too_many_attempts",
        "Too many wrong verify tokens; try again later",
        undefined,
        {
          "retry-after": String(wait),
        },
      );
    }
    const mode = c.req.query("hub.mode");
    const token = c.req.query("hub.verify_token");
    const challenge = c.req.query("hub.challenge");
    // The configuration API's "Check the handshake" (routes/whatsapp_checks.ts) says so with the replay
    // secret: answered the same, without recording that Meta did it.
    const ours = isOwnCheck(c.req.header("authorization"), deps.config.replaySecret);
    if (
      mode !== "subscribe" || !token ||
      (await passHandshake(deps.sql, token, organizationId, { record: !ours })).length === 0
    ) {
      if (mode === "subscribe" && token) limiter.failed(client, url);
      throw forbidden("verification_failed", "Verify token does not match");
    }
    if (!challenge || challenge.length > MAX_CHALLENGE_LENGTH) {
      throw badRequest("invalid_challenge", "hub.challenge is missing or too long");
    }
    return c.text(challenge, 200, { "x-content-type-options": "nosniff" });
  };
  app.get("/", handshake);
  app.get("/:organizationId", handshake);

  mountReplay(app, deps.sql, whatsappReceiver, deps.config.replaySecret);

  const receive = async (c: Context) => {
    const outcome = await runInbound(deps.sql, whatsappReceiver, c.req.raw, c.req.param("organizationId"));
    // Verified and logged: these registrations work (their page says so). The settings page's own test
    // proves only that the secret signs, not that Meta reaches us: it marks nothing.
    const real = outcome.parts.filter((p) => !p.change.test);
    await markReceived(deps.sql, real.map((p) => p.target.accountId!)).catch(() => {});
    if (outcome.parts.length > 0 && real.length === 0) {
      return c.json({ status: "test", log_ids: outcome.parts.map((p) => p.logId) }, 200);
    }
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
  };
  app.post("/", receive);
  app.post("/:organizationId", receive);

  return app;
}
