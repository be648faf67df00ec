// SHA-256, HMAC-SHA256 and constant-time comparison over raw bytes: the one copy of each. node:crypto
// is synchronous and native, cheaper per call than Web Crypto's promise round trip on hot paths.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

type Data = string | Uint8Array;

export const sha256 = (data: Data): Uint8Array => new Uint8Array(createHash("sha256").update(data).digest());

export const sha256Hex = (data: Data): string => createHash("sha256").update(data).digest("hex");

/** A string secret is its UTF-8 bytes. */
export const hmacSha256 = (secret: Data, data: Data): Uint8Array =>
  new Uint8Array(createHmac("sha256", secret).update(data).digest());

export const hmacSha256Hex = (secret: Data, data: Data): string =>
  createHmac("sha256", secret).update(data).digest("hex");

/** Decodes lowercase or uppercase hex; anything else (odd length, other characters) is null. */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  return Uint8Array.fromHex(hex);
}

/** Constant-time comparison of two byte strings; unequal lengths are simply unequal. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  return timingSafeEqual(a, b);
}

/** Constant-time equality of two secrets of any length (their digests are compared, so lengths leak nothing). */
export const secretsEqual = (given: string, expected: string): boolean =>
  bytesEqual(sha256(given), sha256(expected));

/**
 * Verifies a hex HMAC-SHA256 signature header over the raw body. Accepts an optional `sha256=` prefix
 * (GitHub/Meta style) and hex in either case; compares the decoded bytes in constant time.
 */
export function verifyHexSignature(
  secret: string,
  rawBody: Uint8Array,
  header: string | null | undefined,
): boolean {
  if (!header || !secret) return false;
  let value = header.trim();
  if (value.toLowerCase().startsWith("sha256=")) value = value.slice(7);
  const given = fromHex(value);
  if (!given || given.byteLength !== 32) return false;
  return bytesEqual(hmacSha256(secret, rawBody), given);
}
