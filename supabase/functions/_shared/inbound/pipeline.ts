// The inbound pipeline both payment receivers share (ARCHITECTURE.md section 6):
//   raw body once (1 MiB, 413) -> organization (URL segment, else payload) -> HMAC over the raw bytes,
//   constant time (401, counted as unverified, nothing kept) -> log row committed (deduplicated by key
//   and by the body's SHA-256) -> apply once -> processed | failed.
// Provider specifics (shapes, event names, headers) come in through a ProviderSpec.
import type { Sql } from "../db.ts";
import { readRawBody } from "../body.ts";
import { AppError, badRequest, isDatabaseUnavailable, notFound, unauthorized } from "../errors.ts";
import { verifyHexSignatureSync } from "../hmac.ts";
import { jsonDepth, MAX_JSON_DEPTH, storableInPostgres, storableString } from "../storable.ts";
import {
  applyLogged,
  type ApplyResult,
  findTargets,
  type LogEntry,
  logRefused,
  logRejected,
  logVerified,
  markFailed,
} from "./store.ts";
import type { Change, ProviderSpec, RoutingHints } from "./types.ts";

export const INBOUND_BODY_LIMIT = 1024 * 1024;
const MAX_KEY_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InboundResponse {
  status: 200 | 202;
  body: { status: "processed" | "duplicate" | "unmatched"; log_id: string; outcome?: string };
}

/** The headers worth keeping with a payload: enough to debug a delivery, nothing secret. */
const LOGGED_HEADERS = [
  "content-type",
  "user-agent",
  "idempotency-key",
  "x-razorpay-event-id",
  "x-checkout-signature",
  "x-payments-signature",
  "x-razorpay-signature",
];

export async function handleInbound(
  sql: Sql,
  spec: ProviderSpec,
  req: Request,
  organizationSegment?: string,
): Promise<InboundResponse> {
  const raw = await readBody(req);
  // An organization id that is not even a UUID is just another unknown organization.
  if (organizationSegment !== undefined && !UUID.test(organizationSegment)) throw notFound();

  const { text, body, parseError, jsonbCanHold } = decode(raw);
  const hints: RoutingHints = parseError ? {} : safeHints(spec, body);
  const claimedOrganization = organizationSegment ?? hints.organizationId;
  if (parseError && !claimedOrganization) {
    // No way to tell whose it is, so no way to check its signature: counted, never kept.
    await logRefused(sql, null, spec.provider, "rejected", parseError.message, raw.byteLength);
    throw parseError;
  }

  const organizationId = await verifiedOrganization(sql, spec, req.headers, raw, claimedOrganization, hints);
  const sha256 = new Uint8Array(await crypto.subtle.digest("SHA-256", raw as BufferSource));
  const entry: LogEntry = {
    organizationId,
    provider: spec.provider,
    event: parseError ? null : eventName(body),
    idempotencyKey: idempotencyKey(req.headers, sha256),
    bodySha256: sha256,
    bodyBytes: raw.byteLength,
    // A body jsonb cannot hold (and any non-JSON one) is kept as text instead.
    payloadText: jsonbCanHold ? text : null,
    rawBody: jsonbCanHold ? null : text.replaceAll("\u0000", "\uFFFD"),
    headers: loggedHeaders(req.headers),
  };

  if (entry.idempotencyKey.length > MAX_KEY_LENGTH) {
    entry.idempotencyKey = entry.idempotencyKey.slice(0, MAX_KEY_LENGTH);
    await logRejected(sql, entry, "idempotency key too long");
    throw badRequest("invalid_idempotency_key", `Idempotency key longer than ${MAX_KEY_LENGTH} characters`);
  }

  let change: Change;
  try {
    if (parseError) throw parseError;
    ({ change } = spec.normalize(body));
    // Ids and names go into SQL: a NUL or an unpaired surrogate in one is no id a provider sends.
    if (!storableInPostgres(change)) {
      throw badRequest("invalid_payload", "Payload fields contain characters that cannot be stored");
    }
  } catch (err) {
    if (err instanceof AppError && err.status === 400) {
      // Rejected rows stay out of the idempotency indexes: a corrected retry with the same key applies.
      await logRejected(sql, entry, err.message);
    }
    throw err;
  }

  const logged = await logVerified(sql, entry);
  if (logged.status === "processed") {
    return { status: 200, body: { status: "duplicate", log_id: logged.id } };
  }
  const result = await applyAndRecord(sql, logged.id, change);
  return toResponse(logged.id, result);
}

/**
 * The organization whose secret signed these bytes. No candidate at all is a 404 (the same answer for
 * "no such organization", "no secret configured" and "nothing routes this payload"); candidates whose
 * secrets all fail are a 401, counted as unverified. Every candidate is tried (each distinct secret
 * once, each compare in constant time), so no number of other organizations claiming the same ids can
 * keep the genuine one from being found.
 */
async function verifiedOrganization(
  sql: Sql,
  spec: ProviderSpec,
  headers: Headers,
  raw: Uint8Array,
  claimedOrganization: string | undefined,
  hints: RoutingHints,
): Promise<string> {
  const targets = await findTargets(
    sql,
    spec.provider,
    claimedOrganization,
    hints.subscriptionId,
    hints.paymentId,
  );
  if (targets.length === 0) throw notFound();
  const signature = spec.signatureHeaders.map((h) => headers.get(h)).find((v) => v !== null);
  if (signature) {
    const tried = new Set<string>();
    for (const target of targets) {
      if (tried.has(target.secret)) continue;
      tried.add(target.secret);
      if (verifyHexSignatureSync(target.secret, raw, signature)) return target.organization_id;
    }
  }
  const organizationId = targets.length === 1 ? targets[0]!.organization_id : null;
  const reason = signature ? "signature mismatch" : "signature missing";
  await logRefused(sql, organizationId, spec.provider, "unverified", reason, raw.byteLength);
  throw unauthorized("invalid_signature", "Signature missing or invalid");
}

interface Decoded {
  text: string;
  body?: unknown;
  parseError?: AppError;
  /** False for JSON that jsonb refuses: NUL, unpaired surrogates, or nesting deep enough to exhaust its stack. */
  jsonbCanHold: boolean;
}

function decode(raw: Uint8Array): Decoded {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    return {
      text: new TextDecoder("utf-8").decode(raw),
      parseError: badRequest("invalid_json", "Body is not valid UTF-8"),
      jsonbCanHold: false,
    };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { text, parseError: badRequest("invalid_json", "Body is not valid JSON"), jsonbCanHold: false };
  }
  return { text, body, jsonbCanHold: jsonDepth(text) <= MAX_JSON_DEPTH && storableInPostgres(body) };
}

/**
 * The raw body, read once. With a declared Content-Length within the limit the HTTP layer already
 * guarantees the size, so the body is taken in one piece; otherwise (chunked, or too large) the
 * streaming reader enforces the limit as it goes.
 */
function readBody(req: Request): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isInteger(declared) && declared >= 0 && declared <= INBOUND_BODY_LIMIT && req.body) {
    return req.arrayBuffer().then((b) => new Uint8Array(b));
  }
  return readRawBody(req, INBOUND_BODY_LIMIT);
}

/** Applies a logged change once; a failure is recorded on the log row and rethrown (-> 5xx). */
export async function applyAndRecord(sql: Sql, logId: string, change: Change): Promise<ApplyResult> {
  try {
    return await applyLogged(sql, logId, change);
  } catch (err) {
    // With the database gone the row stays 'received': the provider's retry or a replay applies it.
    if (!isDatabaseUnavailable(err)) {
      await markFailed(sql, logId, describe(err)).catch(() => {});
    }
    throw err;
  }
}

export function toResponse(logId: string, result: ApplyResult): InboundResponse {
  switch (result.outcome) {
    case "duplicate":
      return { status: 200, body: { status: "duplicate", log_id: logId } };
    case "unmatched":
      return { status: 202, body: { status: "unmatched", log_id: logId } };
    default:
      return { status: 200, body: { status: "processed", log_id: logId, outcome: result.outcome } };
  }
}

function describe(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  const e = err as { code?: string; message?: string } | null;
  return e?.message ? `${e.code ? `${e.code}: ` : ""}${e.message}` : String(err);
}

function safeHints(spec: ProviderSpec, body: unknown): RoutingHints {
  try {
    const hints = spec.hints(body);
    if (hints.organizationId && !UUID.test(hints.organizationId)) delete hints.organizationId;
    // A hint is a query parameter: one PostgreSQL cannot hold routes nowhere rather than failing.
    for (const key of ["subscriptionId", "paymentId"] as const) {
      if (hints[key] !== undefined && !storableInPostgres(hints[key])) delete hints[key];
    }
    return hints;
  } catch {
    return {};
  }
}

function eventName(body: unknown): string | null {
  const event = (body as { event?: unknown } | null)?.event;
  return typeof event === "string" ? storableString(event.slice(0, 100)) : null;
}

/**
 * The provider's delivery id: Idempotency-Key, else Razorpay's x-razorpay-event-id. A delivery with
 * neither is keyed by the hash of its body (which is also always its second key).
 */
function idempotencyKey(headers: Headers, sha256: Uint8Array): string {
  const given = headers.get("idempotency-key") ?? headers.get("x-razorpay-event-id");
  if (given && given.trim() !== "") return given.trim();
  return `sha256:${Array.from(sha256, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function loggedHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of LOGGED_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value.slice(0, 500);
  }
  return out;
}
