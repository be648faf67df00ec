// One HTTP attempt of one delivery, reduced to an outcome the database understands. Never throws.
//
// - success is a 2xx status within the timeout (10 s by default); 3xx is a failure (redirects are not
//   followed: a redirect could point anywhere, including at our own network);
// - 410 Gone is "stop sending": the endpoint gets disabled;
// - Retry-After (seconds or an HTTP date) on a failure is passed on; the database decides within the
//   24-hour window;
// - at most RESPONSE_READ_LIMIT bytes of the response are read (the first 1 KiB is kept), whatever the
//   receiver sends, then the body is cancelled: memory stays flat against a huge or endless response.

import type { Http1Client } from "./http1.ts";

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
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
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

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no response within ${timeoutMs} ms`;
  if (err instanceof Error) {
    // The name plus a short message: enough for Webhook Logs, no request data.
    const msg = err.message.replace(/\s+/g, " ").slice(0, 300);
    return `connection error: ${err.name}: ${msg}`;
  }
  return "connection error";
}

/** Reads up to RESPONSE_READ_LIMIT bytes, keeping the first EXCERPT_BYTES; cancels the rest. */
async function readExcerpt(res: Response): Promise<string | null> {
  const body = res.body;
  if (!body) return null;
  // A declared small length bounds the body (HTTP framing), so it can be read in one go.
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared >= 0 && declared <= RESPONSE_READ_LIMIT) {
    try {
      return decodeExcerpt(new Uint8Array(await res.arrayBuffer()).subarray(0, EXCERPT_BYTES));
    } catch {
      return null;
    }
  }
  const reader = body.getReader();
  const kept = new Uint8Array(EXCERPT_BYTES);
  let keptLen = 0;
  let total = 0;
  try {
    while (total < RESPONSE_READ_LIMIT) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (keptLen < EXCERPT_BYTES) {
        const take = value.subarray(0, EXCERPT_BYTES - keptLen);
        kept.set(take, keptLen);
        keptLen += take.byteLength;
      }
    }
    if (total >= RESPONSE_READ_LIMIT) await reader.cancel().catch(() => {});
  } catch {
    // A body cut short (timeout, reset) still leaves what arrived as the excerpt.
    await reader.cancel().catch(() => {});
  } finally {
    reader.releaseLock();
  }
  return decodeExcerpt(kept.subarray(0, keptLen));
}

function decodeExcerpt(bytes: Uint8Array): string | null {
  if (bytes.byteLength === 0) return null;
  // Postgres text cannot hold NUL; invalid UTF-8 becomes U+FFFD.
  return new TextDecoder().decode(bytes).replaceAll("\u0000", "");
}

function classify(
  base: { attempted_at: string; started: number },
  status: number,
  header: (name: string) => string | null | undefined,
  excerpt: string | null,
): AttemptResult {
  const common = {
    attempted_at: base.attempted_at,
    duration_ms: Date.now() - base.started,
    response_status: status,
    response_excerpt: excerpt,
  };
  if (status >= 200 && status < 300) {
    return { ...common, outcome: "delivered", error: null, retry_after_seconds: null };
  }
  const location = header("location");
  const error = status >= 300 && status < 400
    ? `redirect ${status} not followed${location ? ` (location: ${location.slice(0, 200)})` : ""}`
    : `HTTP ${status}`;
  return {
    ...common,
    outcome: status === 410 ? "gone" : "failed",
    error,
    retry_after_seconds: parseRetryAfter(header("retry-after") ?? null),
  };
}

function failure(base: { attempted_at: string; started: number }, error: string): AttemptResult {
  return {
    outcome: "failed",
    attempted_at: base.attempted_at,
    duration_ms: Date.now() - base.started,
    response_status: null,
    error,
    response_excerpt: null,
    retry_after_seconds: null,
  };
}

/** Runs `fn` with an AbortSignal that fires after `timeoutMs`; reports whether it fired. */
async function withTimeout<T>(
  timeoutMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<{ value?: T; error?: unknown; timedOut: boolean }> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error("timeout"));
  }, timeoutMs);
  try {
    return { value: await fn(controller.signal), timedOut };
  } catch (error) {
    return { error, timedOut };
  } finally {
    clearTimeout(timer);
  }
}

/** One attempt over fetch (used when WEBHOOKS_TRANSPORT=fetch). */
export async function sendOnce(req: SendRequest, fetchFn: typeof fetch = fetch): Promise<AttemptResult> {
  const started = Date.now();
  const base = { attempted_at: new Date(started).toISOString(), started };
  let result: AttemptResult | undefined;
  const run = await withTimeout(req.timeoutMs, async (signal) => {
    const res = await fetchFn(req.url, {
      method: "POST",
      headers: req.headers,
      body: req.body as BodyInit,
      redirect: "manual",
      signal,
    });
    // Status and headers arrived in time: that decides the outcome; the excerpt is best effort.
    result = classify(base, res.status, (n) => res.headers.get(n), null);
    result.response_excerpt = await readExcerpt(res);
  });
  if (result) return result;
  return failure(base, describe(run.error, run.timedOut, req.timeoutMs));
}

/** One attempt over the pinned HTTP/1.1 client (the default). */
export async function sendHttp1(
  client: Http1Client,
  req: SendRequest & { address?: string },
): Promise<AttemptResult> {
  const started = Date.now();
  const base = { attempted_at: new Date(started).toISOString(), started };
  let head: { status: number; headers: Map<string, string> } | undefined;
  const run = await withTimeout(req.timeoutMs, (signal) =>
    client.post({
      onHead: (status, headers) => (head = { status, headers }),
      url: new URL(req.url),
      address: req.address,
      headers: req.headers,
      body: req.body,
      signal,
      readLimit: RESPONSE_READ_LIMIT,
      excerptBytes: EXCERPT_BYTES,
    }));
  if (run.value) {
    const res = run.value;
    return classify(base, res.status, (n) => res.headers.get(n), decodeExcerpt(res.excerpt));
  }
  // The status arrived in time and only the body was slow or cut: the status decides, as with fetch.
  if (head) return classify(base, head.status, (n) => head!.headers.get(n), null);
  return failure(base, describe(run.error, run.timedOut, req.timeoutMs));
}
