// The delivery engine: claims due deliveries, sends them concurrently, and writes outcomes back in
// batches. The Edge Function runs it for one bounded stretch per invocation; the local dev server
// keeps one running and wakes it on NOTIFY.
//
// Guarantees, and where they come from:
// - at least once: a delivery is final only once its outcome is written; a claim is a lease
//   (private.webhook_claim), so a dispatcher that dies mid-batch loses nothing, its work is due again
//   when the lease runs out;
// - never the same delivery twice at once: rows are claimed with FOR NO KEY UPDATE SKIP LOCKED (the
//   FOR UPDATE lock that does not block foreign-key checks) and stay leased for longer than an attempt
//   can take (timeout + 30 s); every claimed delivery starts sending at once, never queued behind others;
// - one slow endpoint cannot starve the others: at most `perEndpoint` of its deliveries are in flight
//   from one dispatcher; the rest of the `maxInFlight` slots keep serving everyone else.
import type { Sql } from "../_shared/db.ts";
import { checkTargetUrl, type TargetVerdict } from "../_shared/webhook_targets.ts";
import { Http1Client } from "./http1.ts";
import { type AttemptResult, DEFAULT_TIMEOUT_MS, sendHttp1, sendOnce } from "./send.ts";
import { signedHeaders } from "./signing.ts";

export interface EngineOptions {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: allow loopback/private addresses and http (dev, tests). */
  allowPrivateTargets: boolean;
  /** Per-attempt timeout; a 2xx must arrive within it. Default 10 s (the contract). */
  timeoutMs?: number;
  /** Deliveries in flight at once from this engine. */
  maxInFlight?: number;
  /** Deliveries in flight at once to one endpoint from this engine. */
  perEndpoint?: number;
  /** Most rows claimed per query. */
  claimBatch?: number;
  /** How long a claim holds; must exceed the timeout with room to record the result. */
  leaseSeconds?: number;
  /** Results are written when this many are waiting, or after `flushDelayMs`. */
  flushBatch?: number;
  flushDelayMs?: number;
  /**
   * "http1" (default): our HTTP/1.1 client, connecting to the exact address the target check approved.
   * "fetch": the runtime's fetch (resolves the name again itself). Passing `fetch` implies "fetch".
   */
  transport?: "http1" | "fetch";
  fetch?: typeof fetch;
  resolve?: (host: string) => Promise<string[]>;
  log?: (event: Record<string, unknown>) => void;
}

export interface RunOptions {
  /** Stop claiming new work at this time (epoch ms); in-flight sends still finish and are recorded. */
  deadline?: number;
  /** Return once nothing is due and nothing is in flight (the Edge Function); otherwise keep waiting. */
  stopWhenIdle?: boolean;
  signal?: AbortSignal;
  /** While idle, look for due work (retries, expired leases) this often even without a wake-up. */
  pollMs?: number;
  /** Claim at most this many in this run (an Edge Function invocation has 2 s of CPU time). */
  maxDeliveries?: number;
}

export interface RunStats {
  claimed: number;
  delivered: number;
  failed: number;
  recorded: number;
}

interface Claimed {
  delivery_id: string;
  lease_token: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  attempt_number: number;
  body: string;
}

type ResultRow = AttemptResult & { delivery_id: string; endpoint_id: string; lease_token: string };

const encoder = new TextEncoder();
const TARGET_CACHE_MS = 30_000;

export class DeliveryEngine {
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly perEndpoint: number;
  readonly claimBatch: number;
  readonly leaseSeconds: number;
  private readonly flushBatch: number;
  private readonly flushDelayMs: number;
  private readonly inFlight = new Map<string, number>();
  private inFlightTotal = 0;
  private readonly sends = new Set<Promise<void>>();
  private pending: ResultRow[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  /** Endpoints the per-endpoint cap held back in the last claim; a slot freeing there means work. */
  private saturated = new Set<string>();
  private readonly targetCache = new Map<string, { verdict: TargetVerdict; until: number }>();
  private stats: RunStats = { claimed: 0, delivered: 0, failed: 0, recorded: 0 };
  private readonly http = new Http1Client();

  constructor(private readonly sql: Sql, private readonly opts: EngineOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.perEndpoint = opts.perEndpoint ?? 16;
    this.claimBatch = opts.claimBatch ?? 500;
    this.leaseSeconds = Math.max(opts.leaseSeconds ?? 0, Math.ceil(this.timeoutMs / 1000) + 30);
    this.flushBatch = opts.flushBatch ?? 200;
    this.flushDelayMs = opts.flushDelayMs ?? 10;
  }

  /** Wakes a waiting run loop: new work was announced (NOTIFY) or may be due. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * Claims and sends until the deadline, the signal, or (with stopWhenIdle) until nothing is left.
   * Always waits for its in-flight sends and writes every outcome before returning.
   */
  async run(options: RunOptions = {}): Promise<RunStats> {
    this.stats = { claimed: 0, delivered: 0, failed: 0, recorded: 0 };
    const pollMs = options.pollMs ?? 1000;
    const max = options.maxDeliveries ?? Infinity;
    const stopping = () =>
      options.signal?.aborted || (options.deadline !== undefined && Date.now() >= options.deadline) ||
      this.stats.claimed >= max;
    const onAbort = () => this.wakeUp?.();
    options.signal?.addEventListener("abort", onAbort);
    let mayHaveWork = true;
    let claimErrors = 0;
    // Claim in batches: while busy, wait until a useful number of slots is free rather than
    // querying once per finished send.
    const minClaim = Math.max(1, Math.min(this.claimBatch, Math.floor(this.maxInFlight / 8)));
    try {
      while (!stopping()) {
        this.woken = false;
        const free = Math.min(this.maxInFlight - this.inFlightTotal, max - this.stats.claimed);
        if (mayHaveWork && (free >= minClaim || (free > 0 && this.inFlightTotal === 0))) {
          let rows: Claimed[];
          try {
            rows = await this.claim(Math.min(free, this.claimBatch));
            claimErrors = 0;
          } catch (err) {
            // Database unreachable: back off and try again; nothing is lost, nothing was claimed.
            claimErrors++;
            this.log({ level: "error", msg: "claim failed", error: errorText(err) });
            if (!stopping()) await this.sleep(Math.min(100 * 2 ** claimErrors, 5000), options.deadline);
            continue;
          }
          for (const row of rows) this.start(row);
          // A full batch means there is probably more; so does an endpoint the cap held back that
          // already has a free slot again. Otherwise wait for a reason to look again.
          mayHaveWork = rows.length === Math.min(free, this.claimBatch) ||
            [...this.saturated].some((id) => (this.inFlight.get(id) ?? 0) < this.perEndpoint);
          if (mayHaveWork || this.woken) {
            mayHaveWork = true;
            continue;
          }
        }
        if (!mayHaveWork && this.inFlightTotal === 0 && options.stopWhenIdle) break;
        // Busy: wait for sends to finish. Idle: wait for a wake-up (NOTIFY, a slot on a full
        // endpoint) or the poll interval, which also picks up retries and expired leases.
        const timedOut = await this.sleep(mayHaveWork ? undefined : pollMs, options.deadline);
        if (this.woken || timedOut) mayHaveWork = true;
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      while (this.sends.size > 0) await Promise.allSettled([...this.sends]);
      await this.flush();
      await this.flushing;
      this.http.close();
    }
    return { ...this.stats };
  }

  private async claim(limit: number): Promise<Claimed[]> {
    const snapshot = new Map(this.inFlight);
    const rows = await this.sql<Claimed[]>`
      select * from private.webhook_claim(${limit}, ${this.perEndpoint},
                                          ${
      this.sql.json(Object.fromEntries(snapshot))
    }, ${this.leaseSeconds})`;
    this.stats.claimed += rows.length;
    // Endpoints the cap held back in this claim (left out, or filled up to it): they may have more due
    // work, so a slot freeing there is a reason to claim again.
    const load = new Map(snapshot);
    for (const row of rows) load.set(row.endpoint_id, (load.get(row.endpoint_id) ?? 0) + 1);
    this.saturated = new Set([...load].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id));
    return rows;
  }

  private start(row: Claimed): void {
    this.inFlight.set(row.endpoint_id, (this.inFlight.get(row.endpoint_id) ?? 0) + 1);
    this.inFlightTotal++;
    const p: Promise<void> = this.attempt(row)
      // An unexpected error is still an attempt: recorded as a failure, retried with backoff.
      .catch((err): AttemptResult => ({
        outcome: "failed",
        attempted_at: new Date().toISOString(),
        duration_ms: 0,
        response_status: null,
        error: `internal error: ${errorText(err)}`.slice(0, 300),
        response_excerpt: null,
        retry_after_seconds: null,
      }))
      .then((result) =>
        this.record({
          ...result,
          delivery_id: row.delivery_id,
          endpoint_id: row.endpoint_id,
          lease_token: row.lease_token,
        })
      )
      .finally(() => {
        const n = (this.inFlight.get(row.endpoint_id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(row.endpoint_id);
        else this.inFlight.set(row.endpoint_id, n);
        this.inFlightTotal--;
        this.sends.delete(p);
        if (this.saturated.has(row.endpoint_id)) this.woken = true;
        this.wakeUp?.();
      });
    this.sends.add(p);
  }

  private async attempt(row: Claimed): Promise<AttemptResult> {
    const started = Date.now();
    const verdict = await this.checkTarget(row.url);
    if (!verdict.ok) {
      return {
        outcome: "failed",
        attempted_at: new Date(started).toISOString(),
        duration_ms: Date.now() - started,
        response_status: null,
        error: `target refused: ${verdict.reason}`,
        response_excerpt: null,
        retry_after_seconds: null,
      };
    }
    const body = encoder.encode(row.body);
    const headers = signedHeaders({
      eventId: row.event_id,
      eventType: row.event_type,
      secret: row.secret,
      previousSecret: row.previous_secret,
      body,
      timestamp: Math.floor(Date.now() / 1000),
    });
    const request = { url: row.url, headers, body, timeoutMs: this.timeoutMs };
    if (this.opts.transport === "fetch" || this.opts.fetch) return await sendOnce(request, this.opts.fetch);
    // Connect to the address that was checked (prefer IPv4), not to whatever DNS says next.
    const address = verdict.addresses.find((a) => !a.includes(":")) ?? verdict.addresses[0];
    return await sendHttp1(this.http, { ...request, address });
  }

  /**
   * Send-time target check, after DNS resolution. Verdicts are cached briefly per URL so a burst to
   * one endpoint costs one lookup. See README "Target safety" for what this does against rebinding.
   */
  private async checkTarget(url: string): Promise<TargetVerdict> {
    const now = Date.now();
    const cached = this.targetCache.get(url);
    if (cached && cached.until > now) return cached.verdict;
    const verdict = await checkTargetUrl(url, {
      allowPrivate: this.opts.allowPrivateTargets,
      resolve: this.opts.resolve,
      alwaysResolve: true,
    });
    if (this.targetCache.size > 10_000) this.targetCache.clear();
    this.targetCache.set(url, { verdict, until: now + TARGET_CACHE_MS });
    return verdict;
  }

  private record(row: ResultRow): void {
    if (row.outcome === "delivered") this.stats.delivered++;
    else this.stats.failed++;
    this.pending.push(row);
    if (this.pending.length >= this.flushBatch) {
      void this.flush();
    } else if (this.flushTimer === undefined) {
      this.flushTimer = setTimeout(() => void this.flush(), this.flushDelayMs);
    }
  }

  /** Writes waiting outcomes, one batch at a time, in order. */
  private flush(): Promise<void> {
    if (this.flushTimer !== undefined) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.pending.length === 0) return this.flushing;
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  private async write(batch: ResultRow[]): Promise<void> {
    for (let tries = 1;; tries++) {
      try {
        await this.sql`select private.webhook_record_results(${this.sql.json(batch as never)})`;
        this.stats.recorded += batch.length;
        return;
      } catch (err) {
        if (tries >= 3) {
          // The leases run out and these deliveries are sent again: at least once, never lost.
          this.log({
            level: "error",
            msg: "recording results failed",
            count: batch.length,
            error: errorText(err),
          });
          return;
        }
        await new Promise((r) => setTimeout(r, 200 * tries));
      }
    }
  }

  /** Resolves true when the time ran out, false when woken first. */
  private sleep(ms?: number, deadline?: number): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const limit = deadline !== undefined ? Math.max(0, deadline - Date.now()) : undefined;
      const wait = ms === undefined ? limit : limit === undefined ? ms : Math.min(ms, limit);
      this.wakeUp = () => {
        this.wakeUp = undefined;
        if (timer !== undefined) clearTimeout(timer);
        resolve(false);
      };
      if (wait !== undefined) {
        timer = setTimeout(() => {
          this.wakeUp = undefined;
          resolve(true);
        }, wait);
      }
    });
  }

  private log(event: Record<string, unknown>): void {
    (this.opts.log ?? ((e) => console.error(JSON.stringify(e))))(event);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
