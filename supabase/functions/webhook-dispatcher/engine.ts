// The delivery engine: claims due deliveries (claims.ts), sends them concurrently within its slots
// (slots.ts, send.ts), and writes outcomes back in batches (results.ts), claiming again in the same
// round trip. The Edge Function runs it for one bounded stretch per invocation; the local dev server
// keeps one running and wakes it on NOTIFY.
//
// Guarantees, and where they come from:
// - at least once: a delivery is final only once its outcome is written; a claim is a lease
//   (private.webhook_claim), so a dispatcher that dies mid-batch loses nothing, its work is due again
//   when the lease runs out;
// - never the same delivery twice at once: claims take turns, pass over deliveries with a live lease,
//   and lease what they take for longer than an attempt can take (timeout + 30 s); every claimed
//   delivery starts sending at once, never queued behind others;
// - one slow endpoint cannot starve the others: at most `perEndpoint` of its deliveries are in flight
//   at once, across every dispatcher (the claim counts the database's live leases); the rest of the
//   `maxInFlight` slots keep serving everyone else;
// - nor can one organization, however many endpoints it has: at most `perOrganization` of its
//   deliveries are in flight at once, across every dispatcher, and claims take organizations in turn;
// - memory is bounded by bytes, not only rows: the bodies in flight never exceed `maxInFlightBytes`
//   (each claim is given what is still free, and a send's bytes are free again once it ends).
import type { Agent } from "undici";
import type { Sql } from "../_shared/db.ts";
import { claimDue, type Claimed, type ClaimLimits, recordAndClaim, type ResultRow } from "./claims.ts";
import { Pacer } from "./pacing.ts";
import { Slots } from "./slots.ts";
import { ResultWriter } from "./results.ts";
import { exponential, retry } from "./retry.ts";
import { type AttemptResult, DEFAULT_TIMEOUT_MS, failedAttempt, sendAttempt } from "./send.ts";
import { signedHeaders } from "./signing.ts";
import { TargetCache } from "./targets.ts";
import { createAgent } from "./transport.ts";

export interface EngineOptions {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: allow loopback/private addresses and http (dev, tests). */
  allowPrivateTargets: boolean;
  /** Per-attempt timeout; a 2xx must arrive within it. Default 10 s (the contract). */
  timeoutMs?: number;
  /** Deliveries in flight at once from this engine. */
  maxInFlight?: number;
  /** Deliveries in flight at once to one endpoint, from all dispatchers together. */
  perEndpoint?: number;
  /** Deliveries in flight at once for one organization, from all dispatchers together. */
  perOrganization?: number;
  /** Bytes of bodies in flight at once from this engine (default 32 MiB). */
  maxInFlightBytes?: number;
  /** Most rows claimed per query. */
  claimBatch?: number;
  /** How long a claim holds; must exceed the timeout with room to record the result. */
  leaseSeconds?: number;
  /** Most results per write (default 1000); the first result waits `flushDelayMs` for company. */
  flushBatch?: number;
  flushDelayMs?: number;
  /** Resolves host names for the target check (tests); the system resolver by default. */
  resolve?: (host: string) => Promise<string[]>;
  /** Extra trusted CA certificates (PEM), for tests with their own CA. */
  ca?: string[];
  log?: (event: Record<string, unknown>) => void;
}

export interface RunOptions {
  /** Stop claiming new work at this time (epoch ms); in-flight sends still finish and are recorded. */
  deadline?: number;
  /** Return once nothing is due and nothing is in flight (the Edge Function); otherwise keep waiting. */
  stopWhenIdle?: boolean;
  /**
   * With stopWhenIdle: stay this long after going idle, still polling, before returning. A run started
   * by a debounced wake-up outlives the debounce interval, so work made during it is not left waiting.
   */
  idleGraceMs?: number;
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

const encoder = new TextEncoder();

/**
 * Deliveries one organization may have in flight at once, across every dispatcher: a quarter of one
 * dispatcher's default 256 slots, so even three organizations with huge backlogs to slow endpoints
 * leave room for everyone else's deliveries to go out at once.
 */
export const DEFAULT_PER_ORGANIZATION = 64;
/**
 * Bytes of bodies one dispatcher holds in flight. A body is held about three times over (the claim's
 * result, the string, the bytes sent), so 32 MiB keeps a dispatcher well inside a hosted Edge
 * Function's 256 MB, whatever the bodies (each is at most 256 KiB: private.webhook_max_body_bytes).
 */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;

/** What the sends and writes of one run share. */
interface Run {
  agent: Agent;
  writer: ResultWriter;
  /** How many rows a claim may take now (0 once the run is stopping). */
  room(): number;
}

export class DeliveryEngine {
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly perEndpoint: number;
  readonly perOrganization: number;
  readonly maxInFlightBytes: number;
  readonly claimBatch: number;
  readonly leaseSeconds: number;
  private readonly slots: Slots;
  private readonly pacer = new Pacer();
  private readonly sends = new Set<Promise<void>>();
  private readonly targets: TargetCache;
  private current: Run | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private stats: RunStats = { claimed: 0, delivered: 0, failed: 0, recorded: 0 };

  constructor(private readonly sql: Sql, private readonly opts: EngineOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxInFlight = opts.maxInFlight ?? 256;
    this.perEndpoint = opts.perEndpoint ?? 16;
    this.perOrganization = opts.perOrganization ?? DEFAULT_PER_ORGANIZATION;
    this.maxInFlightBytes = opts.maxInFlightBytes ?? DEFAULT_MAX_IN_FLIGHT_BYTES;
    this.claimBatch = opts.claimBatch ?? 500;
    this.leaseSeconds = Math.max(opts.leaseSeconds ?? 0, Math.ceil(this.timeoutMs / 1000) + 30);
    this.slots = new Slots(this.maxInFlight, this.maxInFlightBytes);
    this.targets = new TargetCache(opts.allowPrivateTargets);
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
    const agent = createAgent({
      allowPrivate: this.opts.allowPrivateTargets,
      resolve: this.opts.resolve,
      timeoutMs: this.timeoutMs,
      ca: this.opts.ca,
    });
    const pollMs = options.pollMs ?? 1000;
    const max = options.maxDeliveries ?? Infinity;
    // Aborted by the caller's signal or at the deadline: ends claim retries and waits at once.
    const stop = new AbortController();
    const onAbort = () => {
      stop.abort();
      this.wakeUp?.();
    };
    options.signal?.addEventListener("abort", onAbort);
    if (options.signal?.aborted) stop.abort();
    const deadlineTimer = options.deadline === undefined
      ? undefined
      : setTimeout(onAbort, Math.max(0, options.deadline - Date.now()));
    let ending = false;
    const stopping = () => ending || stop.signal.aborted || this.stats.claimed >= max;
    const writer = new ResultWriter(
      (batch) => this.write(batch),
      this.opts.flushBatch ?? 1000,
      this.opts.flushDelayMs ?? 10,
      () => this.wakeUp?.(), // an idle run may stop now
    );
    const room = () =>
      stopping() || this.slots.freeBytes <= 0
        ? 0
        : Math.max(0, Math.min(this.slots.free, this.claimBatch, max - this.stats.claimed));
    this.current = { agent, writer, room };
    let mayHaveWork = true;
    let idleSince: number | undefined;
    // Claim in batches: while busy, wait until a useful number of slots is free rather than
    // querying once per finished send.
    const minClaim = Math.max(1, Math.min(this.claimBatch, Math.floor(this.maxInFlight / 8)));
    try {
      while (!stopping()) {
        this.woken = false;
        const limit = room();
        if (mayHaveWork && (limit >= minClaim || (limit > 0 && this.slots.total === 0))) {
          // Database unreachable: back off and try again; nothing is lost, nothing was claimed.
          const bytes = this.slots.freeBytes;
          this.slots.reserve(limit, bytes);
          const rows = await retry(() => claimDue(this.sql, this.limits(limit, bytes)), {
            delayMs: exponential(200, 5000),
            signal: stop.signal,
            onError: (err) => this.log({ level: "error", msg: "claim failed", error: errorText(err) }),
          }).catch(() => null);
          this.take(rows ?? [], limit, bytes);
          if (rows === null) break; // stopped while the database was away
          if (rows.length > 0) idleSince = undefined;
          // A full batch means there is probably more. Otherwise wait for a reason to look again: a
          // result for a full endpoint written, a wake-up, the poll.
          mayHaveWork = rows.length === limit;
          if (mayHaveWork || this.woken) {
            mayHaveWork = true;
            continue;
          }
        }
        if (!mayHaveWork && this.slots.total === 0 && writer.idle && options.stopWhenIdle) {
          idleSince ??= Date.now();
          if (Date.now() - idleSince >= (options.idleGraceMs ?? 0)) break;
        }
        // Busy: wait for sends to finish. Idle: wait for a wake-up (NOTIFY, a result written for a full
        // endpoint) or the poll interval, which also picks up retries and expired leases.
        const timedOut = await this.sleep(mayHaveWork ? undefined : pollMs);
        if (this.woken || timedOut) mayHaveWork = true;
      }
    } finally {
      ending = true; // writes from here on only record
      options.signal?.removeEventListener("abort", onAbort);
      clearTimeout(deadlineTimer);
      while (this.sends.size > 0) await Promise.allSettled([...this.sends]);
      await writer.flush();
      this.current = undefined;
      await agent.close().catch(() => {});
    }
    return { ...this.stats };
  }

  private limits(limit: number, maxBytes: number): ClaimLimits {
    return {
      limit,
      maxBytes,
      perEndpoint: this.perEndpoint,
      perOrganization: this.perOrganization,
      leaseSeconds: this.leaseSeconds,
    };
  }

  /** A claim that held `reserved` slots and `reservedBytes` came back: its rows start sending at once. */
  private take(rows: Claimed[], reserved: number, reservedBytes: number): void {
    this.slots.claimed(rows, reserved, reservedBytes);
    this.stats.claimed += rows.length;
    for (const row of rows) this.start(row);
  }

  private start(row: Claimed): void {
    const { agent, writer } = this.current!;
    const p: Promise<void> = this.attempt(row, agent)
      // An unexpected error is still an attempt: recorded as a failure, retried with backoff.
      .catch((err) => failedAttempt(Date.now(), `internal error: ${errorText(err)}`.slice(0, 300)))
      .then((result) => {
        if (result.outcome === "delivered") this.stats.delivered++;
        else this.stats.failed++;
        writer.add({
          ...result,
          delivery_id: row.delivery_id,
          endpoint_id: row.endpoint_id,
          lease_token: row.lease_token,
        });
      })
      .finally(() => {
        this.sends.delete(p);
        // The last send in flight ended, to a full endpoint or at all: no result will come to keep these
        // company, so waiting would only hold the endpoints' leases (and the next claim) for nothing.
        if (this.slots.finished(row.endpoint_id, row.body_bytes) || this.slots.total === 0) writer.writeNow();
        this.wakeUp?.();
      });
    this.sends.add(p);
  }

  /**
   * Records a batch of results and claims along with it: the leases these results end may be all that
   * kept endpoints from more work, and the claim then costs no round trip of its own. A batch that cannot
   * be written after a few tries is dropped: its leases run out and those deliveries are sent again (at
   * least once, never lost).
   */
  private async write(batch: ResultRow[]): Promise<void> {
    const limit = this.current!.room();
    const bytes = limit > 0 ? this.slots.freeBytes : 0;
    this.slots.reserve(limit, bytes);
    let along = limit;
    let rows: Claimed[] | undefined;
    try {
      rows = await retry(() => recordAndClaim(this.sql, batch, this.limits(along, bytes)), {
        tries: 3,
        delayMs: (n) => 200 * n,
        // The tries after a failure only record: a claim that keeps failing must not keep these results
        // from being written (their deliveries would be sent again once the leases ran out).
        onError: (err) => {
          along = 0;
          this.log({ level: "error", msg: "writing results failed; recording alone", error: errorText(err) });
        },
      });
      this.stats.recorded += batch.length;
    } catch (err) {
      this.log({
        level: "error",
        msg: "recording results failed",
        count: batch.length,
        error: errorText(err),
      });
    }
    // Leases ended (or will run out): endpoints that were full may have room. Marked before the new rows
    // are taken, which may fill them again.
    let freed = false;
    for (const r of batch) if (this.slots.written(r.endpoint_id)) freed = true;
    this.take(rows ?? [], limit, bytes);
    // The run loop looks again unless this claim already saw all there was (it took less than it could).
    const sawAll = rows !== undefined && rows.length < along;
    if (!sawAll && (freed || (along > 0 && rows?.length === along))) this.woken = true;
    this.wakeUp?.();
  }

  private async attempt(row: Claimed, agent: Agent): Promise<AttemptResult> {
    await this.pacer.turn(row.endpoint_id, row.send_at);
    // The URL's form and any IP literal in it (cached per URL: targets.ts); names are checked when the
    // agent connects (transport.ts).
    const target = this.targets.get(row.url);
    if (!target.ok) return failedAttempt(Date.now(), `target refused: ${target.reason}`);
    const body = encoder.encode(row.body);
    const headers = signedHeaders({
      eventId: row.event_id,
      eventType: row.event_type,
      secret: row.secret,
      previousSecret: row.previous_secret,
      body,
      timestamp: Math.floor(Date.now() / 1000),
    });
    return await sendAttempt(agent, { url: row.url, target, headers, body, timeoutMs: this.timeoutMs });
  }

  /** Resolves true when the time ran out, false when woken (or stopped) first. */
  private sleep(ms?: number): Promise<boolean> {
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      this.wakeUp = () => {
        this.wakeUp = undefined;
        clearTimeout(timer);
        resolve(false);
      };
      if (ms !== undefined) {
        timer = setTimeout(() => {
          this.wakeUp = undefined;
          resolve(true);
        }, ms);
      }
    });
  }

  private log = (event: Record<string, unknown>): void => {
    (this.opts.log ?? ((e) => console.error(JSON.stringify(e))))(event);
  };
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
