// One HTTP attempt of one delivery, reduced to an outcome the database understands; never throws.
// Success is a 2xx within the timeout; 3xx is a failure (redirects could point anywhere, our own network
// included); 410 disables the endpoint; a failure's Retry-After is passed on as a lower bound on the
// backoff. At most RESPONSE_READ_LIMIT bytes of a response are read and the first 1 KiB kept, so memory
// stays flat against a huge or endless one. The headers sent and received are kept for Webhook Logs,
// bounded, signatures cut short wherever they appear (a stored signature would let whoever reads the
// logs replay a request): masking.ts.
import type { Dispatcher } from "undici";
import type { PreparedHeaders } from "./custom_headers.ts";
import { maskEchoes, maskedRequestHeaders, sentSignatures } from "./masking.ts";
import { TARGET_REFUSED } from "./transport.ts";

export const DEFAULT_TIMEOUT_MS = 10_000;
export const EXCERPT_BYTES = 1024;
/** Small bodies are read to the end so the connection can be reused; larger ones are cut off. */
const RESPONSE_READ_LIMIT = 16 * 1024;

export type Outcome = "delivered" | "failed" | "gone";

export interface AttemptResult {
  outcome: Outcome;
  attempted_at: string;
  duration_ms: number;
  response_status: number | null;
  error: string | null;
  response_excerpt: string | null;
  retry_after_seconds: number | null;
  /** What we sent, signatures masked; null when no request went out (a refused target). */
  request_headers: Record<string, string> | null;
  /** What the receiver answered with, bounded; null without a response. */
  response_headers: Record<string, string> | null;
}

type ResponseHeaders = Record<string, string | string[] | undefined>;

export interface SendRequest {
  url: string;
  /** Shared by the attempts started together (a claimed batch); a timer of its own otherwise. */
  deadline?: Deadline;
  /** The URL's origin and path when the caller has them already (the engine's per-URL cache). */
  target?: { origin: string; path: string };
  headers: Record<string, string>;
  /** The endpoint's custom headers among `headers`: their values are masked in what is kept. */
  custom?: PreparedHeaders;
  body: Uint8Array;
  timeoutMs: number;
}

/** Parses Retry-After: delta-seconds or an HTTP date; null when absent or unusable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), 7 * 86400);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.min(Math.ceil((at - now) / 1000), 7 * 86400));
}

/** A failed attempt that got no status: refused target, timeout, connection or TLS error. */
export function failedAttempt(
  started: number,
  error: string,
  requestHeaders: Record<string, string> | null = null,
): AttemptResult {
  return {
    outcome: "failed",
    attempted_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    response_status: null,
    error,
    response_excerpt: null,
    retry_after_seconds: null,
    request_headers: requestHeaders,
    response_headers: null,
  };
}

/** Response headers kept per attempt: at most this many, each value cut, all of them within the bytes. */
export const RESPONSE_HEADERS_MAX = 50;
export const RESPONSE_HEADER_VALUE_MAX = 512;
export const RESPONSE_HEADERS_BYTES = 4096;
// Credentials the receiver hands out are not ours to keep.
const HIDDEN_RESPONSE_HEADERS = new Set(["set-cookie", "authorization", "proxy-authorization"]);

/**
 * The receiver's headers, bounded by count and bytes whatever it sends (a hostile receiver may send many),
 * any of our signatures in them masked.
 */
export function boundedResponseHeaders(
  headers: ResponseHeaders,
  signatures: string[] = [],
  customValues: readonly string[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  let bytes = 0;
  let count = 0;
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (rawValue === undefined) continue;
    if (count++ >= RESPONSE_HEADERS_MAX) break;
    const name = rawName.toLowerCase().slice(0, 100);
    let value = Array.isArray(rawValue) ? rawValue.join(", ") : rawValue;
    if (HIDDEN_RESPONSE_HEADERS.has(name)) value = "(not kept)";
    else {
      // A receiver that echoes our signatures back (echo services do), under any name, must not have
      // them stored whole, nor cut where the value is.
      const cut = value.length > RESPONSE_HEADER_VALUE_MAX;
      value = maskEchoes(cut ? value.slice(0, RESPONSE_HEADER_VALUE_MAX) : value, signatures, customValues) +
        (cut ? "…" : "");
    }
    value = value.replaceAll("\u0000", "");
    bytes += name.length + value.length;
    if (bytes > RESPONSE_HEADERS_BYTES) break;
    out[name] = value;
  }
  return out;
}

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no response within ${timeoutMs} ms`;
  const e = err as { code?: string; message?: string; name?: string; cause?: unknown } | null;
  if (e?.code === TARGET_REFUSED) return `target refused: ${e.message}`;
  if (err instanceof Error) {
    // The name plus a short message: enough for Webhook Logs, no request data.
    const msg = err.message.replace(/\s+/g, " ").slice(0, 300);
    return `connection error: ${err.name}: ${msg}`;
  }
  return "connection error";
}

const decoder = new TextDecoder();

function decodeExcerpt(bytes: Uint8Array): string | null {
  if (bytes.byteLength === 0) return null;
  // Postgres text cannot hold NUL; invalid UTF-8 becomes U+FFFD.
  return decoder.decode(bytes).replaceAll("\u0000", "");
}

function header(headers: ResponseHeaders, name: string): string | null {
  const v = headers[name];
  return Array.isArray(v) ? v[0] ?? null : v ?? null;
}

function originAndPath(raw: string): { origin: string; path: string } {
  const url = new URL(raw);
  return { origin: url.origin, path: `${url.pathname}${url.search}` };
}

/** One POST over the agent; the timeout covers the status and headers, then whatever body arrives. */
export function sendAttempt(agent: Dispatcher, req: SendRequest): Promise<AttemptResult> {
  return new Promise((resolve) => startAttempt(agent, req, resolve));
}

/** sendAttempt without a promise: `done` gets the result, once. */
export function startAttempt(agent: Dispatcher, req: SendRequest, done: (r: AttemptResult) => void): void {
  const deadline = req.deadline ?? new Deadline(req.timeoutMs);
  deadline.add(new Attempt(agent, req, deadline, done));
}

/**
 * One timer for attempts started together, in the same tick (a claimed batch): each times out
 * `ms` after that, as with a timer of its own, for one timer per batch instead of one per attempt.
 */
export class Deadline {
  private readonly pending = new Set<Attempt>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly ms: number) {}

  add(attempt: Attempt): void {
    if (attempt.settled) return;
    this.timer ??= setTimeout(() => {
      for (const a of this.pending) a.timeout();
    }, this.ms);
    this.pending.add(attempt);
  }

  /** An attempt ended; the timer goes with the last one. */
  settled(attempt: Attempt): void {
    this.pending.delete(attempt);
    if (this.pending.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * undici's dispatch handler for one attempt: its lowest-level interface, with no response stream,
 * abort signal or promise per request (a third less CPU per delivery than `request`). Reads at most
 * RESPONSE_READ_LIMIT bytes, keeps the first EXCERPT_BYTES, then drops the connection.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = Date.now();
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: ResponseHeaders = {};
  private kept: Uint8Array | undefined;
  private keptLen = 0;
  private total = 0;
  private timedOut = false;
  settled = false;

  constructor(
    agent: Dispatcher,
    private readonly req: SendRequest,
    private readonly deadline: Deadline,
    private readonly done: (r: AttemptResult) => void,
  ) {
    const target = req.target ?? originAndPath(req.url);
    agent.dispatch(
      { origin: target.origin, path: target.path, method: "POST", headers: req.headers, body: req.body },
      this,
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error("timeout"));
  }

  onResponseStart(_c: unknown, status: number, headers: ResponseHeaders): void {
    // Status and headers arrived in time: that decides the outcome; the excerpt is best effort.
    if (status >= 200) [this.status, this.headers] = [status, headers];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    if (this.keptLen < EXCERPT_BYTES) {
      const take = chunk.subarray(0, EXCERPT_BYTES - this.keptLen);
      (this.kept ??= new Uint8Array(EXCERPT_BYTES)).set(take, this.keptLen);
      this.keptLen += take.byteLength;
    }
    if (this.total >= RESPONSE_READ_LIMIT) {
      this.finish();
      controller.abort(new Error("response read limit"));
    }
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_c: unknown, err: Error): void {
    // A body cut short (timeout, reset) still leaves the status and what arrived as the excerpt.
    if (this.status) this.finish();
    else this.fail(describe(err, this.timedOut, this.req.timeoutMs));
  }

  timeout(): void {
    this.timedOut = true;
    if (this.status) this.finish();
    else this.fail(describe(null, true, this.req.timeoutMs));
    this.controller?.abort(new Error("timeout"));
  }

  /** No status: the request went out (or was about to), and no answer came. */
  private fail(error: string): void {
    this.settle(
      failedAttempt(this.started, error, maskedRequestHeaders(this.req.headers, this.req.custom?.names)),
    );
  }

  private finish(): void {
    if (this.settled) return;
    const status = this.status;
    const signatures = sentSignatures(this.req.headers);
    const values = this.req.custom?.values;
    const excerpt = this.kept ? decodeExcerpt(this.kept.subarray(0, this.keptLen)) : null;
    const common = {
      attempted_at: new Date(this.started).toISOString(),
      duration_ms: Date.now() - this.started,
      response_status: status,
      // Echo services put what they got, our signatures too, in the body they answer with.
      response_excerpt: excerpt === null ? null : maskEchoes(excerpt, signatures, values),
      request_headers: maskedRequestHeaders(this.req.headers, this.req.custom?.names),
      response_headers: boundedResponseHeaders(this.headers, signatures, values),
    };
    if (status >= 200 && status < 300) {
      return this.settle({ ...common, outcome: "delivered", error: null, retry_after_seconds: null });
    }
    const location = header(this.headers, "location");
    this.settle({
      ...common,
      outcome: status === 410 ? "gone" : "failed",
      error: status >= 300 && status < 400
        ? `redirect ${status} not followed${
          location ? ` (location: ${maskEchoes(location.slice(0, 200), signatures, values)})` : ""
        }`
        : `HTTP ${status}`,
      retry_after_seconds: parseRetryAfter(header(this.headers, "retry-after")),
    });
  }

  private settle(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    this.deadline.settled(this);
    this.done(result);
  }
}
