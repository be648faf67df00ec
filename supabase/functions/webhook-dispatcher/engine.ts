// The delivery engine: a run loop over a lease queue (lease_queue.ts) and the attempt itself (sign,
// send). The Edge Function runs it for one bounded stretch per invocation; the local dev server keeps one
// running, woken on NOTIFY. Its guarantees come from the database's claim and lease:
// docs/architecture.md#the-dispatcher. Every claimed delivery starts sending at once, never queued behind
// others (a paced one waits for its `send_at`).
import type { Agent } from "undici";
import type { Sql } from "../_shared/db.ts";
import type { Claimed } from "./claims.ts";
import { RunBudget } from "./budget.ts";
import { errorText, LeaseQueue, type QueueLimits, type QueueStats } from "./lease_queue.ts";
import { CustomHeaderCache } from "./custom_headers.ts";
import { Pacer } from "./pacing.ts";
import { Deadline, DEFAULT_TIMEOUT_MS, failedAttempt, type SendRequest, startAttempt } from "./send.ts";
import { signedHeaders } from "./signing.ts";
import { TargetCache } from "./targets.ts";
import { createAgent } from "./transport.ts";

export interface EngineOptions extends Partial<QueueLimits> {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: allow loopback/private addresses and http (dev, tests). */
  allowPrivateTargets: boolean;
  /** Per-attempt timeout; a 2xx must arrive within it. Default 10 s (the contract). */
  timeoutMs?: number;
  /** After the run's signal, how long attempts in flight may still take before they are cut short. */
  stopGraceMs?: number;
  /** Resolves host names for the target check (tests); the system resolver by default. */
  resolve?: (host: string) => Promise<string[]>;
  /** Extra trusted CA certificates (PEM), for tests with their own CA. */
  ca?: string[];
  log?: (event: Record<string, unknown>) => void;
}

export interface RunOptions {
  /** Stop claiming at this time (epoch ms); sends in flight still finish and are recorded. */
  deadline?: number;
  /** Return once nothing is due or in flight, after `idleGraceMs` more of polling (outlasting a debounce). */
  stopWhenIdle?: boolean;
  idleGraceMs?: number;
  /**
   * Stops the run (the runtime's shutdown notice, SIGTERM): nothing more is claimed or starts sending;
   * leases not sending yet, paced ones waiting for their turn and any a claim still brings, are given back
   * (due again at once, no attempt counted); attempts in flight get `stopGraceMs`, then are cut short and
   * recorded as failed; every outcome is written before run() returns.
   */
  signal?: AbortSignal;
  /** While idle, look for due work (retries, expired leases) this often even without a wake-up. */
  pollMs?: number;
  /** Claim at most this many rows, and stop claiming with a margin before this much CPU (budget.ts). */
  maxDeliveries?: number;
  cpuBudgetMs?: number;
  /**
   * Called once, while the run is still claiming, when its budget will soon be spent (budget.ts
   * handOver): the hosted dispatcher asks for its successor then, so it is up when this run stops. Told
   * the ms since the run started, counted as `claiming_ms` is.
   */
  onHandOver?: (elapsedMs: number) => void;
}

/** Why a run returned: nothing left, its deadline, the caller's signal, or its budget (rows, CPU). */
export type StopReason = "idle" | "deadline" | "signal" | "rows" | "cpu";

export interface RunStats extends QueueStats {
  stopped?: StopReason;
  /** CPU time the process used during the run. */
  cpu_ms: number;
  /** From the start until it stopped claiming; the rest of the run was sends and writes ending. */
  claiming_ms: number;
}

const encoder = new TextEncoder();

/**
 * Deliveries one organization may have in flight at once, across every dispatcher: a quarter of one
 * dispatcher's 256 slots, so three organizations with huge backlogs to slow endpoints leave room for
 * everyone else's deliveries to go out at once.
 */
export const DEFAULT_PER_ORGANIZATION = 64;

/** Where the dispatcher logs unless told otherwise: one JSON line per event on stderr. */
export const logToConsole = (event: Record<string, unknown>): void => console.error(JSON.stringify(event));

export class DeliveryEngine {
  readonly timeoutMs: number;
  readonly limits: QueueLimits;
  private readonly log: (event: Record<string, unknown>) => void;
  private readonly targets: TargetCache;
  private readonly customHeaders = new CustomHeaderCache();
  private readonly pacer = new Pacer();
  private queue: LeaseQueue | undefined;

  constructor(private readonly sql: Sql, private readonly opts: EngineOptions) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.limits = {
      perEndpoint: opts.perEndpoint ?? 16,
      perOrganization: opts.perOrganization ?? DEFAULT_PER_ORGANIZATION,
      // A lease outlasts the longest attempt, with room to record its result.
      leaseSeconds: Math.max(opts.leaseSeconds ?? 0, Math.ceil(this.timeoutMs / 1000) + 30),
      claimBatch: opts.claimBatch ?? 500,
      maxInFlight: opts.maxInFlight ?? 256,
      // A body is held about three times over (the claim's result, the string, the bytes sent): 32 MiB
      // keeps a dispatcher well inside a hosted Edge Function's 256 MB.
      maxInFlightBytes: opts.maxInFlightBytes ?? 32 * 1024 * 1024,
      flushBatch: opts.flushBatch ?? 1000,
      flushDelayMs: opts.flushDelayMs ?? 10,
    };
    this.log = opts.log ?? logToConsole;
    this.targets = new TargetCache(opts.allowPrivateTargets);
  }

  /** Wakes a waiting run loop: new work was announced (NOTIFY) or may be due. */
  wake(): void {
    this.queue?.wake();
  }

  /**
   * Claims and sends until the deadline, the signal, its budget, or (with stopWhenIdle) until nothing is
   * left. Always waits for what it claimed to be sent and recorded before returning.
   */
  async run(options: RunOptions = {}): Promise<RunStats> {
    const { allowPrivateTargets: allowPrivate, resolve, ca } = this.opts;
    const agent = createAgent({ allowPrivate, resolve, ca, timeoutMs: this.timeoutMs });
    const budget = new RunBudget({ cpuMs: options.cpuBudgetMs, maxRows: options.maxDeliveries });
    // Aborted by the caller's signal or at the deadline: ends claim retries and waits at once.
    const stop = new AbortController();
    // Aborted by the caller's signal alone: paced leases still waiting for their turn are given back.
    const unsent = new AbortController();
    const queue: LeaseQueue = new LeaseQueue(this.sql, {
      ...this.limits,
      allowance: (progress) => stop.signal.aborted ? 0 : budget.allowance(progress),
      send: (leases) => this.start(leases, agent, queue, unsent.signal),
      log: this.log,
    });
    this.queue = queue;
    let stopped: StopReason | undefined;
    const halt = (why: StopReason) => {
      stopped ??= why;
      stop.abort();
      queue.wake();
    };
    let cut: ReturnType<typeof setTimeout> | undefined;
    const onSignal = () => {
      queue.stopSending();
      unsent.abort();
      halt("signal");
      // What is still in flight then gets a failed outcome, recorded: sent again after the backoff.
      const error = new Error("the dispatcher stopped before the response arrived");
      cut = setTimeout(() => agent.destroy(error), this.opts.stopGraceMs ?? 1000);
    };
    options.signal?.addEventListener("abort", onSignal);
    if (options.signal?.aborted) onSignal();
    const deadline = options.deadline === undefined
      ? undefined
      : setTimeout(() => halt("deadline"), Math.max(0, options.deadline - Date.now()));
    let idleSince: number | undefined;
    let handedOver = options.onHandOver === undefined;
    const started = Date.now();
    let claimingMs: number | undefined;
    try {
      while (!stop.signal.aborted) {
        if (!handedOver && budget.handOver(queue.progress)) {
          handedOver = true;
          options.onHandOver!(Date.now() - started);
        }
        if (queue.spent) {
          stopped = budget.spent(queue.progress);
          break;
        }
        const n = queue.wanted();
        if (n > 0) {
          const took = await queue.take(n, stop.signal);
          if (took === null) break; // stopped while the database was away; nothing was claimed
          if (took > 0) idleSince = undefined;
          continue;
        }
        if (options.stopWhenIdle && queue.idle && !queue.mayHaveWork) {
          idleSince ??= Date.now();
          if (Date.now() - idleSince >= (options.idleGraceMs ?? 0)) {
            stopped = "idle";
            break;
          }
        }
        // Busy: wait for sends or writes to end. Idle: for a wake-up (NOTIFY, a result written for a full
        // endpoint) or the poll interval, which also picks up retries and expired leases.
        if (await queue.changed(queue.mayHaveWork ? undefined : options.pollMs ?? 1000)) queue.wake();
      }
    } finally {
      claimingMs = Date.now() - started;
      options.signal?.removeEventListener("abort", onSignal);
      clearTimeout(deadline);
      await queue.close();
      clearTimeout(cut);
      if (this.queue === queue) this.queue = undefined;
      await agent.close().catch(() => {});
    }
    return { ...queue.stats, stopped, cpu_ms: Math.round(budget.cpuUsed), claiming_ms: claimingMs };
  }

  /**
   * A claim came back: its leases start sending at once, under one deadline; those of an endpoint with a
   * rate limit each at the time the claim gave it, under a deadline of its own.
   */
  private start(leases: Claimed[], agent: Agent, queue: LeaseQueue, stopped: AbortSignal): void {
    const deadline = new Deadline(this.timeoutMs);
    let given: Promise<"stopped"> | undefined;
    for (const lease of leases) {
      if (lease.send_at === null) this.send(lease, agent, queue, deadline);
      else {
        // A stop while it waits for its turn gives it back at once: it has not been sent.
        given ??= new Promise((resolve) => {
          if (stopped.aborted) resolve("stopped");
          else stopped.addEventListener("abort", () => resolve("stopped"), { once: true });
        });
        void Promise.race([this.pacer.turn(lease.endpoint_id, lease.send_at), given]).then((why) =>
          why === "stopped"
            ? queue.giveBack(lease)
            : this.send(lease, agent, queue, new Deadline(this.timeoutMs))
        );
      }
    }
  }

  /** Signs and sends one lease; its outcome goes back to the queue. */
  private send(lease: Claimed, agent: Agent, queue: LeaseQueue, deadline: Deadline): void {
    const done = queue.complete.bind(queue, lease);
    let request: SendRequest;
    try {
      // The URL's form and any IP literal in it, cached per URL (targets.ts); names are checked when the
      // agent connects (transport.ts).
      const target = this.targets.get(lease.url);
      if (!target.ok) return done(failedAttempt(Date.now(), `target refused: ${target.reason}`));
      const body = encoder.encode(lease.body);
      // The endpoint's own headers first; ours (which their names can never be) after them.
      const custom = this.customHeaders.get(lease.headers);
      const signed = signedHeaders({
        eventId: lease.event_id,
        eventType: lease.event_type,
        secret: lease.secret,
        previousSecret: lease.previous_secret,
        body,
        timestamp: Math.floor(Date.now() / 1000),
      });
      const headers = custom ? { ...custom.headers, ...signed } : signed;
      request = { url: lease.url, target, headers, custom, body, timeoutMs: this.timeoutMs, deadline };
    } catch (err) {
      // An unexpected error is still an attempt: recorded as a failure, retried with backoff.
      return done(failedAttempt(Date.now(), `internal error: ${errorText(err)}`.slice(0, 300)));
    }
    startAttempt(agent, request, done);
  }
}
