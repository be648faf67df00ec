// The headers every outbound delivery carries, in two schemes at once (docs/receiving-webhooks.md#what-arrives):
// x-webhook-signature, lowercase hex HMAC-SHA256(secret string, raw body), our contract; and Standard
// Webhooks' webhook-signature, "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>", the key being the
// base64 after "whsec_" or, for a secret the organization chose, its UTF-8 bytes (the libraries' "raw"
// format). During a rotation both secrets sign: two "v1," entries, and x-webhook-signature-previous.
import { createHash, type Hash } from "node:crypto";

/**
 * HMAC-SHA256 (RFC 2104) with the key's two padded blocks hashed once: each message then costs two
 * copies of a hash state and two digests. node:crypto's createHmac processes the key again on every
 * call, which made signing a sixth of the dispatcher's CPU; this takes about 60% of its time per
 * signature (checked against createHmac in tests/outbound_signing_test.ts).
 */
export class PreparedHmac {
  private readonly inner: Hash;
  private readonly outer: Hash;

  constructor(key: Uint8Array) {
    const block = new Uint8Array(64);
    block.set(key.byteLength > 64 ? createHash("sha256").update(key).digest() : key);
    this.inner = createHash("sha256").update(block.map((b) => b ^ 0x36));
    this.outer = createHash("sha256").update(block.map((b) => b ^ 0x5c));
  }

  /** The MAC of the parts, concatenated (strings as UTF-8). */
  digest(...parts: (string | Uint8Array)[]): Uint8Array {
    const h = this.inner.copy();
    for (const p of parts) h.update(p);
    return this.outer.copy().update(h.digest()).digest();
  }
}

const encoder = new TextEncoder();
type PreparedKeys = { hex: PreparedHmac; standard: PreparedHmac };
const prepared = new Map<string, PreparedKeys>();

/** The Standard Webhooks key: the bytes base64-encoded after `whsec_`, else the secret's UTF-8 bytes. */
function standardWebhooksKey(secret: string): Uint8Array {
  return secret.startsWith("whsec_")
    ? Uint8Array.from(atob(secret.slice(6)), (c) => c.charCodeAt(0))
    : encoder.encode(secret);
}

/** A secret's two keys: its UTF-8 bytes for the hex scheme, its Standard Webhooks key. */
function keysOf(secret: string): PreparedKeys {
  let keys = prepared.get(secret);
  if (!keys) {
    keys = {
      hex: new PreparedHmac(encoder.encode(secret)),
      standard: new PreparedHmac(standardWebhooksKey(secret)),
    };
    if (prepared.size > 10_000) prepared.clear(); // a few thousand active endpoints at most
    prepared.set(secret, keys);
  }
  return keys;
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
  const current = keysOf(secret);
  const previous = previousSecret && previousSecret !== secret ? keysOf(previousSecret) : undefined;
  const standard = (keys: PreparedKeys) =>
    `v1,${keys.standard.digest(`${eventId}.${timestamp}.`, body).toBase64()}`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "church-integration-webhooks/1",
    "x-webhook-id": eventId,
    "x-webhook-event": eventType,
    "x-webhook-timestamp": String(timestamp),
    "x-webhook-signature": current.hex.digest(body).toHex(),
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": previous ? `${standard(current)} ${standard(previous)}` : standard(current),
  };
  if (previous) headers["x-webhook-signature-previous"] = previous.hex.digest(body).toHex();
  return headers;
}
