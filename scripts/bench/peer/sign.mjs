// The peer's signing: the same headers our dispatcher sends (supabase/functions/webhook-dispatcher/
// signing.ts, without secret rotation): lowercase hex HMAC-SHA256 of the body with the secret string, and
// the Standard Webhooks v1 signature over "id.timestamp.body" with the whsec_ key. outbound_vs_peer.ts
// checks at start that both produce the same signatures.
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";

const keys = new Map();
function standardKey(secret) {
  let key = keys.get(secret);
  if (!key) {
    key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret);
    keys.set(secret, key);
  }
  return key;
}

/** Headers for one attempt; `body` is a Buffer/Uint8Array, `timestamp` Unix seconds. */
export function signedHeaders(eventId, eventType, secret, body, timestamp) {
  const ts = String(timestamp);
  const std = createHmac("sha256", standardKey(secret)).update(`${eventId}.${ts}.`).update(body)
    .digest("base64");
  return {
    "content-type": "application/json",
    "content-length": String(body.length),
    "user-agent": "graphile-worker-peer/1",
    "x-webhook-id": eventId,
    "x-webhook-event": eventType,
    "x-webhook-timestamp": ts,
    "x-webhook-signature": createHmac("sha256", secret).update(body).digest("hex"),
    "webhook-id": eventId,
    "webhook-timestamp": ts,
    "webhook-signature": `v1,${std}`,
  };
}
