// Inbound WhatsApp gateway webhook (Cloud API shape).
//
//   GET  /messaging-webhook   subscription handshake: echoes hub.challenge when hub.verify_token is the
//                             verify token of one of our accounts, 403 otherwise
//   POST /messaging-webhook   messages and delivery receipts, signed x-hub-signature-256
//
// POST pipeline: raw body (1 MiB, 413) -> JSON and shape (400) -> signature header present (401) ->
// accounts of the body's phone-number ids -> signature valid for each of them (401) -> one transaction
// for everything -> 200. Changes for phone-number ids we do not know are skipped with a log line and
// still answered 200, so the gateway does not retry them for days.
import type { Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";
import { DEFAULT_BODY_LIMIT, parseJson, readRawBody } from "../_shared/body.ts";
import { badRequest, forbidden, unauthorized } from "../_shared/errors.ts";
import { loadAccounts, signedByAll, verifyTokenMatches } from "./accounts.ts";
import { parseWebhook } from "./payload.ts";
import { applyWebhook } from "./store.ts";

export const SIGNATURE_HEADER = "x-hub-signature-256";
const MAX_CHALLENGE_LENGTH = 256;

export function createApp(deps: AppDeps): Hono {
  const app = newApp("messaging-webhook", deps);

  app.get("/", async (c) => {
    const mode = c.req.query("hub.mode");
    const token = c.req.query("hub.verify_token");
    const challenge = c.req.query("hub.challenge");
    if (mode !== "subscribe" || !token || !(await verifyTokenMatches(deps.sql, token))) {
      throw forbidden("verification_failed", "Verify token does not match");
    }
    if (!challenge || challenge.length > MAX_CHALLENGE_LENGTH) {
      throw badRequest("invalid_challenge", "hub.challenge is missing or too long");
    }
    return c.text(challenge, 200, { "x-content-type-options": "nosniff" });
  });

  app.post("/", async (c) => {
    const raw = await readRawBody(c.req.raw, DEFAULT_BODY_LIMIT);
    const webhook = parseWebhook(parseJson(raw));
    const signature = c.req.header(SIGNATURE_HEADER) ?? null;
    if (!signature) throw unauthorized("invalid_signature", `Missing ${SIGNATURE_HEADER}`);

    const accounts = await loadAccounts(deps.sql, webhook.phoneNumberIds);
    const unknown = webhook.phoneNumberIds.filter((id) => !accounts.has(id));
    if (accounts.size > 0 && !(await signedByAll(accounts.values(), raw, signature))) {
      throw unauthorized("invalid_signature", "Signature does not match");
    }
    if (unknown.length > 0) {
      // Not an error of ours and nothing the gateway can fix by retrying: tell the operator, boundedly.
      warnUnknownIds(unknown);
    }

    const known = (x: { phoneNumberId: string }) => accounts.has(x.phoneNumberId);
    const messages = webhook.messages.filter(known);
    const receipts = webhook.receipts.filter(known);
    if (messages.length === 0 && receipts.length === 0) {
      return c.json({ status: "ignored" }, 200);
    }
    const result = await applyWebhook(deps.sql, accounts, messages, receipts);
    return c.json({ status: "ok", ...result, skipped_phone_number_ids: unknown.length }, 200);
  });

  return app;
}

const WARN_INTERVAL_MS = 60_000;
const WARN_SAMPLE = 3;
let lastWarnAt = -Infinity;
let suppressed = 0;

/**
 * Anyone can name phone-number ids (the body is checked against the secrets of the accounts it names,
 * and it names none of ours), so this line must not grow with the body or with the request rate: a
 * count and a few ids cut short, at most once a minute per process, with how many were left out.
 */
function warnUnknownIds(ids: string[]): void {
  const now = performance.now();
  if (now - lastWarnAt < WARN_INTERVAL_MS) {
    suppressed++;
    return;
  }
  lastWarnAt = now;
  console.warn(JSON.stringify({
    level: "warn",
    function: "messaging-webhook",
    msg: "unknown phone_number_id, changes skipped",
    count: ids.length,
    sample: ids.slice(0, WARN_SAMPLE).map((id) => id.slice(0, 32)),
    suppressed_requests: suppressed,
  }));
  suppressed = 0;
}
