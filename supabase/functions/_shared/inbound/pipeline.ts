// The one inbound pipeline all three receivers run: read once, find the signers, verify, log, apply once.
// Each receiver supplies only what differs: routing, splitting, event names, normalizing, applying.
// @see docs/inbound-webhooks.md#one-pipeline (the stages and their answers)
// @see docs/architecture.md#a-providers-post-becomes-a-row (the diagram, and a connection lost midway)
import type { Sql } from "../db.ts";
import { readRawBody } from "../body.ts";
import { AppError, badRequest, isDatabaseUnavailable, notFound, unauthorized } from "../errors.ts";
import { sha256 as digest, verifyHexSignature } from "../hmac.ts";
import { jsonDepth, MAX_JSON_DEPTH, storableInPostgres } from "../storable.ts";
import {
  type LogEntry,
  logRefused,
  logRefusedFor,
  logRejected,
  logVerified,
  markFailed,
  suspendedOrganizations,
} from "./store.ts";
import type { ApplyResult, Receiver, Target } from "./types.ts";

export const INBOUND_BODY_LIMIT = 1024 * 1024;
const MAX_KEY_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The headers worth keeping with a verified payload: enough to debug a delivery, nothing secret. */
const LOGGED_HEADERS = [
  "content-type",
  "user-agent",
  "idempotency-key",
  "x-razorpay-event-id",
  "x-checkout-signature",
  "x-payments-signature",
  "x-razorpay-signature",
  "x-hub-signature-256",
];

export interface PartOutcome<C = unknown> {
  logId: string;
  target: Target;
  status: "processed" | "duplicate" | "unmatched";
  /** What the part asked for (a duplicate's too, so a receiver can say what it already had). */
  change: C;
  result?: ApplyResult;
}

export interface InboundOutcome<C = unknown> {
  parts: PartOutcome<C>[];
  /** Routing keys nothing is known for (see Routing.unknown). */
  unknown: string[];
}

export async function runInbound<C>(
  sql: Sql,
  receiver: Receiver<C>,
  req: Request,
  organizationSegment?: string,
): Promise<InboundOutcome<C>> {
  // 1. The raw body.
  const receivedAt = new Date();
  const raw = await readBody(req);
  // An organization id that is not even a UUID is just another unknown organization.
  if (organizationSegment !== undefined && !UUID.test(organizationSegment)) throw notFound();
  const { text, body, parseError, jsonbCanHold } = decode(raw);

  // 2. Who may have signed it.
  let routing;
  try {
    routing = await onAnotherConnection(() =>
      receiver.route(sql, parseError ? undefined : body, organizationSegment)
    );
  } catch (err) {
    if (err instanceof AppError && err.status === 400) {
      // Nobody to attribute it to, so no way to check its signature: counted, never kept.
      await logRefused(sql, null, receiver.provider, "rejected", err.message, raw.byteLength);
    }
    throw err;
  }
  const unknown = routing.unknown ?? [];
  if (routing.targets.length === 0) {
    if (parseError) {
      await logRefused(sql, null, receiver.provider, "rejected", parseError.message, raw.byteLength);
      throw parseError;
    }
    // Keys nobody holds are answered as a forged body for held ones is: the answer never says which
    // keys some organization holds.
    if (routing.mode === "each" && unknown.length > 0) {
      await refuseUnverified(sql, receiver, req.headers, raw, []);
    }
    return { parts: [], unknown };
  }

  // 3. Verify.
  const verified = routing.mode === "each"
    ? await verifyEach(sql, receiver, req.headers, raw, routing.targets)
    : await verify(sql, receiver, req.headers, raw, routing.targets);
  if (routing.mode === "each") {
    const held = new Set(verified.map((t) => t.key));
    for (const key of new Set(routing.targets.map((t) => t.key!))) if (!held.has(key)) unknown.push(key);
  }

  // 4. Log each part.
  const sha256 = digest(raw);
  const headerKey = receiver.keyFromHeaders ? keyFromHeaders(req.headers) : undefined;
  const headers = loggedHeaders(req.headers);
  const parts = parseError || !receiver.split
    ? [{ target: verified[0]!, body, whole: true }]
    : receiver.split(body, verified).map((p) => ({ ...p, whole: false }));

  const prepared: { entry: LogEntry; change: C; target: Target }[] = [];
  for (const part of parts) {
    const partText = part.whole ? text : JSON.stringify(part.body);
    const partBytes = part.whole ? raw : new TextEncoder().encode(partText);
    const partSha = part.whole ? sha256 : digest(partBytes);
    const canHold = part.whole ? jsonbCanHold : true;
    const entry: LogEntry = {
      organizationId: part.target.organizationId,
      accountId: part.target.accountId ?? null,
      provider: receiver.provider,
      event: parseError ? null : safeEventName(receiver, part.body),
      idempotencyKey: headerKey ?? `sha256:${partSha.toHex()}`,
      bodySha256: partSha,
      bodyBytes: partBytes.byteLength,
      // A body jsonb cannot hold (and any non-JSON one) is kept as text instead.
      payloadText: canHold ? partText : null,
      rawBody: canHold ? null : partText.replaceAll("\u0000", "\uFFFD"),
      headers,
    };
    if (entry.idempotencyKey.length > MAX_KEY_LENGTH) {
      entry.idempotencyKey = entry.idempotencyKey.slice(0, MAX_KEY_LENGTH);
      await logRejected(sql, entry, "idempotency key too long");
      throw badRequest("invalid_idempotency_key", `Idempotency key longer than ${MAX_KEY_LENGTH} characters`);
    }
    try {
      if (parseError) throw parseError;
      const change = receiver.normalize(part.body, {
        organizationId: part.target.organizationId,
        accountId: part.target.accountId ?? null,
        receivedAt,
      });
      // Ids and names go into SQL: a NUL or an unpaired surrogate in one is no id a provider sends.
      if (!storableInPostgres(change)) {
        throw badRequest("invalid_payload", "Payload fields contain characters that cannot be stored");
      }
      prepared.push({ entry, change, target: part.target });
    } catch (err) {
      if (err instanceof AppError && err.status === 400) {
        // Rejected rows stay out of the idempotency indexes: a corrected retry with the same key applies.
        await logRejected(sql, entry, err.message);
      }
      throw err;
    }
  }

  // Every part is in the log before any is applied: whatever fails later, nothing verified is lost.
  const rows = [];
  for (const p of prepared) {
    rows.push({
      ...p,
      row: await onAnotherConnection(() => logVerified(sql, p.entry)),
    });
  }

  // A suspended organization's parts stay in the log unapplied ('received'); the provider is answered
  // 503 and sends again, and the delivery after the organization is resumed applies them (or a replay
  // does). Other organizations' parts of the same body are applied as usual.
  // @see docs/platform-console.md#suspending-an-organization
  const held = await onAnotherConnection(() =>
    suspendedOrganizations(sql, [...new Set(prepared.map((p) => p.target.organizationId))])
  );

  // 5. Apply each part once.
  const outcomes: PartOutcome<C>[] = [];
  for (const { row: logged, ...p } of rows) {
    if (logged.status === "processed") {
      outcomes.push({ logId: logged.id, target: p.target, status: "duplicate", change: p.change });
      continue;
    }
    if (held.has(p.target.organizationId)) continue;
    const result = await applyAndRecord(sql, receiver, logged.id, p.change);
    outcomes.push({ logId: logged.id, target: p.target, status: statusOf(result), change: p.change, result });
  }
  if (held.size > 0) {
    throw new AppError(
      503,
      "organization_suspended",
      "The organization is suspended; the delivery is kept and applied when it is resumed. Send it again later.",
    );
  }
  return { parts: outcomes, unknown };
}

/**
 * The target whose secret signed these bytes: the first (in the receiver's order) whose secret
 * verifies; every candidate is tried, each distinct secret once, so no number of other organizations
 * claiming the same ids keeps the genuine one from being found. Otherwise 401, counted as unverified
 * (attributed to an organization only when there is one candidate).
 */
async function verify<C>(
  sql: Sql,
  receiver: Receiver<C>,
  headers: Headers,
  raw: Uint8Array,
  targets: Target[],
): Promise<Target[]> {
  const signature = signatureOf(receiver, headers);
  if (signature) {
    const ok = verifier(raw, signature, Infinity);
    const found = targets.find(ok);
    if (found) return [found];
  }
  const organizations = new Set(targets.map((t) => t.organizationId));
  const organizationId = organizations.size === 1 ? targets[0]!.organizationId : null;
  await logRefused(sql, organizationId, receiver.provider, "unverified", reasonOf(signature), raw.byteLength);
  throw unauthorized("invalid_signature", "Signature missing or invalid");
}

/**
 * Bytes of HMAC one request may compute over its body, across all the candidates it names: 8 MiB is
 * about 10 ms of CPU. A gateway's bodies are a few KiB, so thousands of candidates fit; a 1 MiB body
 * gets 8. Secrets past the budget are not tried (their key is skipped, or the body refused).
 */
export const HMAC_BYTE_BUDGET = 8 * 1024 * 1024;

/**
 * Mode "each": for every key, its first candidate (in the receiver's order) whose secret verifies,
 * each distinct secret tried once, within HMAC_BYTE_BUDGET. None for any key: 401.
 */
async function verifyEach<C>(
  sql: Sql,
  receiver: Receiver<C>,
  headers: Headers,
  raw: Uint8Array,
  targets: Target[],
): Promise<Target[]> {
  const signature = signatureOf(receiver, headers);
  const verified: Target[] = [];
  if (signature) {
    const ok = verifier(
      raw,
      signature,
      Math.max(1, Math.floor(HMAC_BYTE_BUDGET / Math.max(1, raw.byteLength))),
    );
    const byKey = Map.groupBy(targets, (t) => t.key!);
    for (const candidates of byKey.values()) {
      const found = candidates.find(ok);
      if (found) verified.push(found);
    }
  }
  if (verified.length > 0) return verified;
  return await refuseUnverified(sql, receiver, headers, raw, targets);
}

/**
 * Counts a body no candidate verified in the log of every candidate's organization (none: the
 * unattributed row), so what an organization sees never depends on who else holds the same key; 401.
 */
async function refuseUnverified<C>(
  sql: Sql,
  receiver: Receiver<C>,
  headers: Headers,
  raw: Uint8Array,
  targets: Target[],
): Promise<never> {
  const reason = reasonOf(signatureOf(receiver, headers));
  const organizations = [...new Set(targets.map((t) => t.organizationId))];
  if (organizations.length === 0) {
    await logRefused(sql, null, receiver.provider, "unverified", reason, raw.byteLength);
  } else {
    await logRefusedFor(sql, organizations, receiver.provider, reason, raw.byteLength);
  }
  throw unauthorized("invalid_signature", "Signature missing or invalid");
}

const signatureOf = <C>(receiver: Receiver<C>, headers: Headers) =>
  receiver.signatureHeaders.map((h) => headers.get(h)).find((v) => v !== null) ?? null;

const reasonOf = (signature: string | null) => signature ? "signature mismatch" : "signature missing";

/** Whether a target's secret signed `raw`: each distinct secret computed once, at most `budget` of them. */
function verifier(raw: Uint8Array, signature: string, budget: number): (t: Target) => boolean {
  const results = new Map<string, boolean>();
  return (t) => {
    let r = results.get(t.secret);
    if (r === undefined) {
      if (results.size >= budget) return false;
      results.set(t.secret, r = verifyHexSignature(t.secret, raw, signature));
    }
    return r;
  };
}

const CONNECTION_ATTEMPTS = 5;

/**
 * Runs one step that reaches the database again, on another connection, when the connection it used
 * was lost (a killed backend takes the other requests queued on its connection down with it). For the
 * steps before a payload is in the log: finding its organizations and secrets (a read) and writing the
 * log row, which is idempotent by key and by bytes (a retry after a commit whose answer was lost finds
 * the same row and counts the delivery once more). Only with the database itself unreachable does the
 * sender get a 503 and send again.
 */
async function onAnotherConnection<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (attempt >= CONNECTION_ATTEMPTS || !isDatabaseUnavailable(err)) throw err;
      await new Promise((r) => setTimeout(r, 25 * attempt));
    }
  }
}

/** Deadlocks and unique-key races abort the whole statement; running it again is safe. */
const RETRYABLE = new Set(["40P01", "40001", "23505"]);
const APPLY_ATTEMPTS = 4;

/** Applies a logged change once; a failure is recorded on the log row and rethrown (-> 5xx). */
export async function applyAndRecord<C>(
  sql: Sql,
  receiver: Receiver<C>,
  logId: string,
  change: C,
): Promise<ApplyResult> {
  for (let attempt = 1;; attempt++) {
    try {
      return await receiver.apply(sql, logId, change);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (attempt < APPLY_ATTEMPTS && RETRYABLE.has(code)) {
        await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 10));
        continue;
      }
      // With the database gone the row stays 'received': the provider's retry or a replay applies it.
      if (!isDatabaseUnavailable(err)) {
        await markFailed(sql, logId, describe(err)).catch(() => {});
      }
      throw err;
    }
  }
}

export function statusOf(result: ApplyResult): PartOutcome["status"] {
  return result.outcome === "duplicate"
    ? "duplicate"
    : result.outcome === "unmatched"
    ? "unmatched"
    : "processed";
}

export function describe(err: unknown): string {
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  const e = err as { code?: string; message?: string } | null;
  return e?.message ? `${e.code ? `${e.code}: ` : ""}${e.message}` : String(err);
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

function safeEventName<C>(receiver: Receiver<C>, body: unknown): string | null {
  try {
    const name = receiver.eventName(body);
    return name === null ? null : name.slice(0, 100).toWellFormed().replaceAll("\u0000", "\uFFFD");
  } catch {
    return null;
  }
}

/**
 * The provider's delivery id: Idempotency-Key, else Razorpay's x-razorpay-event-id. A delivery with
 * neither is keyed by the hash of its bytes (which is always its second key anyway).
 */
function keyFromHeaders(headers: Headers): string | undefined {
  const given = headers.get("idempotency-key") ?? headers.get("x-razorpay-event-id");
  return given && given.trim() !== "" ? given.trim() : undefined;
}

function loggedHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of LOGGED_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value.slice(0, 500);
  }
  return out;
}
