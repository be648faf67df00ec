// The headers every outbound delivery carries, in two schemes at once:
//
//   x-webhook-signature   lowercase hex HMAC-SHA256(secret string, raw body)       (our contract)
//   x-webhook-id / -event / -timestamp
//   webhook-id, webhook-timestamp, webhook-signature: "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"
//                         with key = base64-decoded part after "whsec_"           (Standard Webhooks)
//                         or, for a secret the organization chose itself (no whsec_ prefix), its
//                         UTF-8 bytes: the standardwebhooks libraries' "raw" secret format
//
// During a secret rotation both secrets sign: Standard Webhooks carries both as space-separated
// "v1," entries (receivers accept any one), and the hex scheme adds x-webhook-signature-previous.
// node:crypto's HMAC is synchronous and native: at thousands of deliveries a second it costs less than
// half of Web Crypto's promise round trip per signature.
import { createHmac } from "node:crypto";
import { hmacSha256Hex } from "../_shared/hmac.ts";

const stdKeys = new Map<string, Uint8Array>();

/** The Standard Webhooks key: the bytes base64-encoded after `whsec_`, else the secret's UTF-8 bytes. */
export function standardWebhooksKey(secret: string): Uint8Array {
  let key = stdKeys.get(secret);
  if (!key) {
    key = secret.startsWith("whsec_")
      ? Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0))
      : new TextEncoder().encode(secret);
    // Bounded: a few thousand active endpoints at most; start over rather than grow without limit.
    if (stdKeys.size > 10_000) stdKeys.clear();
    stdKeys.set(secret, key);
  }
  return key;
}

export function standardSignature(secret: string, id: string, timestamp: number, body: Uint8Array): string {
  const mac = createHmac("sha256", standardWebhooksKey(secret));
  mac.update(`${id}.${timestamp}.`);
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

export interface SignInput {
  eventId: string;
  eventType: string;
  secret: string;
  previousSecret?: string | null;
  body: Uint8Array;
  /** Unix seconds; a fresh value per attempt (receivers reject old timestamps). */
  timestamp: number;
}

export function signedHeaders(input: SignInput): Record<string, string> {
  const { eventId, eventType, secret, previousSecret, body, timestamp } = input;
  const secrets = previousSecret && previousSecret !== secret ? [secret, previousSecret] : [secret];
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "church-integration-webhooks/1",
    "x-webhook-id": eventId,
    "x-webhook-event": eventType,
    "x-webhook-timestamp": String(timestamp),
    "x-webhook-signature": hmacSha256Hex(secret, body),
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => standardSignature(s, eventId, timestamp, body)).join(" "),
  };
  if (secrets.length > 1) headers["x-webhook-signature-previous"] = hmacSha256Hex(previousSecret!, body);
  return headers;
}
