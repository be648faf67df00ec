// HMAC-SHA256 signing and constant-time verification over raw bytes.
import { createHmac, timingSafeEqual } from "node:crypto";

const encoder = new TextEncoder();
const keyCache = new Map<string, Promise<CryptoKey>>();

function importKey(secret: string | Uint8Array): Promise<CryptoKey> {
  const cacheKey = typeof secret === "string" ? `s:${secret}` : null;
  const cached = cacheKey ? keyCache.get(cacheKey) : undefined;
  if (cached) return cached;
  const raw = typeof secret === "string" ? encoder.encode(secret) : secret;
  const key = crypto.subtle.importKey("raw", raw as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  if (cacheKey) {
    // Bounded: secrets are per organization/endpoint; keep the most recent few thousand.
    if (keyCache.size > 5000) keyCache.clear();
    keyCache.set(cacheKey, key);
  }
  return key;
}

export async function hmacSha256(
  secret: string | Uint8Array,
  data: Uint8Array | string,
): Promise<Uint8Array> {
  const key = await importKey(secret);
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes as BufferSource));
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export async function hmacSha256Hex(secret: string | Uint8Array, data: Uint8Array | string): Promise<string> {
  return toHex(await hmacSha256(secret, data));
}

/** Decodes lowercase or uppercase hex; anything else (odd length, other characters) is null. */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Constant-time comparison of two byte strings; unequal lengths are simply unequal. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  return timingSafeEqual(a, b);
}

/**
 * Verifies a hex HMAC-SHA256 signature header over the raw body. Accepts an optional `sha256=` prefix
 * (GitHub/Meta style) and hex in either case; compares the decoded bytes in constant time.
 */
export async function verifyHexSignature(
  secret: string,
  rawBody: Uint8Array,
  header: string | null | undefined,
): Promise<boolean> {
  if (!header || !secret) return false;
  let value = header.trim();
  if (value.toLowerCase().startsWith("sha256=")) value = value.slice(7);
  const given = fromHex(value);
  if (!given || given.byteLength !== 32) return false;
  const expected = await hmacSha256(secret, rawBody);
  return bytesEqual(expected, given);
}

/**
 * Synchronous twin of verifyHexSignature (node:crypto): the same rules, without an async hop through
 * Web Crypto, for receivers that verify every request on a hot path.
 */
export function verifyHexSignatureSync(
  secret: string,
  rawBody: Uint8Array,
  header: string | null | undefined,
): boolean {
  if (!header || !secret) return false;
  let value = header.trim();
  if (value.toLowerCase().startsWith("sha256=")) value = value.slice(7);
  const given = fromHex(value);
  if (!given || given.byteLength !== 32) return false;
  const expected = new Uint8Array(createHmac("sha256", secret).update(rawBody).digest());
  return bytesEqual(expected, given);
}
