// Custom request headers an endpoint carries on every delivery (an API gateway's key, n8n's header auth):
// the rule for a name and a value, checked by the configuration API when they are saved and by the
// dispatcher when it reads them, and the masked form every answer and log shows instead of a value.
// The database keeps the same rule (private.webhook_custom_headers_acceptable in
// supabase/migrations/20261207170000_webhook_custom_headers.sql).
// @see docs/custom-headers.md

/** At most this many headers per endpoint. */
export const MAX_CUSTOM_HEADERS = 10;
/** A value's most characters (printable ASCII, so as many bytes): 1 KiB. */
export const MAX_HEADER_VALUE = 1024;
export const MAX_HEADER_NAME = 100;

// RFC 9110 token characters.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Hop-by-hop headers (RFC 9110 7.6.1), and those our HTTP client refuses or decides itself.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "http2-settings",
]);
// What the dispatcher sets on every delivery itself (webhook-dispatcher/signing.ts, undici).
const OURS = new Set(["host", "content-length", "content-type", "content-encoding", "user-agent"]);

/** Why a header name cannot be used, or null when it can. */
export function headerNameRefusal(name: string): string | null {
  if (name.length === 0 || name.length > MAX_HEADER_NAME) {
    return `must be 1 to ${MAX_HEADER_NAME} characters`;
  }
  if (!TOKEN.test(name)) {
    return "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only, no spaces or colons)";
  }
  const lower = name.toLowerCase();
  if (HOP_BY_HOP.has(lower) || lower.startsWith("proxy-")) {
    return "is a hop-by-hop or proxy header, which a receiver never sees as sent";
  }
  if (lower.startsWith("webhook-") || lower.startsWith("x-webhook-")) {
    return "is one of the delivery's own headers (id, timestamp, signatures)";
  }
  if (OURS.has(lower)) return "is set by the dispatcher on every delivery";
  return null;
}

/** Why a header value cannot be used, or null when it can. */
export function headerValueRefusal(value: string): string | null {
  if (/[\r\n]/.test(value)) return "must not contain a line break (CR or LF)";
  if (value.includes("\u0000")) return "must not contain a NUL character";
  if (value.length === 0) return "must not be empty";
  if (value.length > MAX_HEADER_VALUE) return `must be at most ${MAX_HEADER_VALUE} characters (1 KB)`;
  if (!/^[\t\x20-\x7e]+$/.test(value)) {
    return "must be printable ASCII (letters, digits, punctuation, spaces); no control or non-ASCII characters";
  }
  if (/^[\t ]|[\t ]$/.test(value)) return "must not start or end with a space or tab";
  return null;
}

/**
 * What is shown instead of a value: its last 4 characters after an ellipsis, and only the ellipsis for a
 * value under 12 characters (4 of a short value would be most of it).
 */
export function valueHint(value: string): string {
  return value.length >= 12 ? `…${value.slice(-4)}` : "…";
}

export interface CustomHeader {
  name: string;
  value: string;
}
