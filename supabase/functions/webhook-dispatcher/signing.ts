// The headers every outbound delivery carries, in two schemes at once:
//
//   x-webhook-signature   lowercase hex HMAC-SHA256(secret string, raw body)       (our contract)
//   x-webhook-id / -event / -timestamp
//   webhook-id, webhook-timestamp, webhook-signature: "v1,<base64 HMAC-SHA256(key, id.timestamp.body)>"
//                         with key = base64-decoded part after "whsec_"           (Standard Webhooks)
//
// During a secret rotation both secrets sign: Standard Webhooks carries both as space-separated
// "v1," entries (receivers accept any one), and the hex scheme adds x-webhook-signature-previous.
import { toHex } from "../_shared/hmac.ts";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(cacheKey: string, raw: () => Uint8Array): Promise<CryptoKey> {
  let key = keys.get(cacheKey);
  if (!key) {
    // Bounded: a few thousand active endpoints at most; start over rather than grow without limit.
    if (keys.size > 10_000) keys.clear();
    key = crypto.subtle.importKey("raw", raw() as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
    ]);
    keys.set(cacheKey, key);
  }
  return key;
}

/** The Standard Webhooks key: the bytes base64-encoded after `whsec_` (or the whole string). */
export function standardWebhooksKey(secret: string): Uint8Array {
  const b64 = secret.startsWith("whsec_") ? secret.slice(6) : secret;
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

async function sign(key: Promise<CryptoKey>, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await key, data as BufferSource));
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

export async function hexSignature(secret: string, body: Uint8Array): Promise<string> {
  return toHex(await sign(hmacKey(`hex:${secret}`, () => encoder.encode(secret)), body));
}

export async function standardSignature(
  secret: string,
  id: string,
  timestamp: number,
  body: Uint8Array,
): Promise<string> {
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.byteLength + body.byteLength);
  signed.set(prefix);
  signed.set(body, prefix.byteLength);
  const key = hmacKey(`std:${secret}`, () => standardWebhooksKey(secret));
  return `v1,${toBase64(await sign(key, signed))}`;
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

export async function signedHeaders(input: SignInput): Promise<Record<string, string>> {
  const { eventId, eventType, secret, previousSecret, body, timestamp } = input;
  const secrets = previousSecret && previousSecret !== secret ? [secret, previousSecret] : [secret];
  const [hex, ...std] = await Promise.all([
    hexSignature(secret, body),
    ...secrets.map((s) => standardSignature(s, eventId, timestamp, body)),
  ]);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "church-integration-webhooks/1",
    "x-webhook-id": eventId,
    "x-webhook-event": eventType,
    "x-webhook-timestamp": String(timestamp),
    "x-webhook-signature": hex!,
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": std.join(" "),
  };
  if (secrets.length > 1) headers["x-webhook-signature-previous"] = await hexSignature(previousSecret!, body);
  return headers;
}
