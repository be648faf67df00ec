// The leases of one run: the one place that claims (alone, or along with a result write), holds room for
// what is in flight (rows and body bytes, slots.ts), hands each lease over to be sent at once, takes its
// outcome back and has it recorded in batches (results.ts). It alone decides when a claim rides along
// with a write and when the run loop should look for work again.
//
// Ending: close() stops any claim from starting, then waits for everything already started: claims
// (what one brings back is sent like any other lease), sends and writes. Every lease taken is sent and
// its outcome written, or, if writing fails, left to run out (sent again later: at least once).
import type { Sql } from "../_shared/db.ts";
import type { Progress } from "./budget.ts";
import {
  claimDue,
  type Claimed,
  type ClaimLimits,
  MAX_BODY_BYTES,
  recordAndClaim,
  type ResultRow,
} from "./claims.ts";
import { Doorbell } from "./doorbell.ts";
import { ResultWriter } from "./results.ts";
import { exponential, retry } from "./retry.ts";
import type { AttemptResult } from "./send.ts";
import { type Grant, Slots } from "./slots.ts";

export interface QueueLimits {
  /** Deliveries in flight at once to one endpoint, from all dispatchers together. */
  perEndpoint: number;
  /** Deliveries in flight at once for one organization, from all dispatchers together. */
  perOrganization: number;
  /** How long a claim holds; must exceed the timeout with room to record the result. */
  leaseSeconds: number;
  /** Most rows claimed per query. */
  claimBatch: number;
  /** Deliveries in flight at once from this dispatcher. */
  maxInFlight: number;
  /** Body bytes held at once (claimed, not yet recorded). */
  maxInFlightBytes: number;
  /** Most results per write; the first result waits `flushDelayMs` for company. */
  flushBatch: number;
  flushDelayMs: number;
}

export interface LeaseQueueOptions extends QueueLimits {
  /** Rows the run may still claim; 0 once it may claim no more. */
  allowance(progress: Progress): number;
  /** Starts sending the leases a claim brought, at once; each outcome comes back through complete(). */
  send(leases: Claimed[]): void;
  log(event: Record<string, unknown>): void;
}

export interface QueueStats {
  claimed: number;
  delivered: number;
  failed: number;
  recorded: number;
}

/** An outcome waiting to be written, with the body bytes its lease holds until then. */
type Outcome = { row: ResultRow; bytes: number };

export class LeaseQueue {
  readonly stats: QueueStats = { claimed: 0, delivered: 0, failed: 0, recorded: 0 };
  private readonly slots: Slots;
  private readonly writer: ResultWriter<Outcome>;
  private readonly changes = new Doorbell();
  /** A claim may find work: a wake-up, a full claim, a result written for a full endpoint. */
  private due = true;
  /** A claim may have stopped at its bytes (or had none): bytes freed by a write mean there may be more. */
  private bytesBound = false;
  private closing = false;
  /** Claims under way: the loop's and those along with writes. */
  private claims = 0;
  /** While busy, a claim waits for this many free slots rather than running once per finished send. */
  private readonly minClaim: number;

  constructor(private readonly sql: Sql, private readonly o: LeaseQueueOptions) {
    this.slots = new Slots(o.maxInFlight, o.maxInFlightBytes);
    this.writer = new ResultWriter(
      (batch) => this.write(batch),
      o.flushBatch,
      o.flushDelayMs,
      () => this.changes.ring(), // an idle run may stop now
    );
    this.minClaim = Math.max(1, Math.min(o.claimBatch, Math.floor(o.maxInFlight / 8)));
  }

  /** New work may be due (NOTIFY, the poll, a stop): the loop looks again. */
  wake(): void {
    this.due = true;
    this.changes.ring();
  }

  get mayHaveWork(): boolean {
    return this.due;
  }

  /** The run may claim no more. */
  get spent(): boolean {
    return this.o.allowance(this.progress) <= 0;
  }

  /** Nothing in flight, being claimed or waiting to be written. */
  get idle(): boolean {
    return this.slots.rows === 0 && this.claims === 0 && this.writer.idle;
  }

  /** Rows worth claiming now: a batch's worth of room while busy, any room when nothing is in flight. */
  wanted(): number {
    if (!this.due) return 0;
    const n = this.room();
    return n >= this.minClaim || (n > 0 && this.slots.rows === 0) ? n : 0;
  }

  /**
   * The loop's claim of up to `n` rows, tried again while the database is away. Resolves how many were
   * taken, or null when `signal` stopped it first.
   */
  async take(n: number, signal: AbortSignal): Promise<number | null> {
    this.due = false; // a wake-up meanwhile sets it again
    const grant = this.slots.reserve(n);
    this.claims++;
    const leases = await retry(() => claimDue(this.sql, this.limits(grant)), {
      delayMs: exponential(200, 5000),
      signal,
      onError: (err) => this.fail("claim failed", err),
    }).catch(() => null);
    this.claims--;
    this.accept(grant, leases ?? []);
    if (leases !== null && leases.length === grant.rows) this.due = true; // a full batch: probably more
    if (leases !== null && stoppedAtBytes(grant, leases)) this.bytesBound = true;
    return leases?.length ?? null;
  }

  /** A send ended: its outcome is written with the next batch. */
  complete(lease: Claimed, result: AttemptResult): void {
    if (result.outcome === "delivered") this.stats.delivered++;
    else this.stats.failed++;
    const { delivery_id, endpoint_id, lease_token } = lease;
    this.writer.add({ row: { ...result, delivery_id, endpoint_id, lease_token }, bytes: lease.body_bytes });
    // The last send in flight ended, to a full endpoint or at all: no result will come to keep these
    // company, so waiting would only hold the endpoints' leases (and the next claim) for nothing.
    if (this.slots.finished(endpoint_id) || this.slots.rows === 0 || this.closing) this.writer.writeNow();
    this.changes.ring();
  }

  /** Until something changes (a wake-up, a send or write ended) or `ms` passed; true when time ran out. */
  changed(ms?: number): Promise<boolean> {
    return this.changes.wait(ms);
  }

  /** Stops claiming; resolves once every lease taken has been sent and its outcome written. */
  async close(): Promise<void> {
    this.closing = true;
    this.writer.writeNow();
    while (!this.idle) await this.changes.wait();
  }

  get progress(): Progress {
    const { claimed, recorded } = this.stats;
    return { claimed, recorded, held: this.slots.reserved.rows + claimed - recorded };
  }

  private room(): number {
    if (this.closing) return 0;
    return Math.max(0, Math.min(this.slots.free, this.o.claimBatch, this.o.allowance(this.progress)));
  }

  /** What a claim holding `grant` may take: its rows and bytes (the database stops at both). */
  private limits(grant: Grant): ClaimLimits {
    return {
      limit: grant.rows,
      maxBytes: grant.bytes,
      perEndpoint: this.o.perEndpoint,
      perOrganization: this.o.perOrganization,
      leaseSeconds: this.o.leaseSeconds,
    };
  }

  /** A claim holding `grant` came back: its leases start sending at once. */
  private accept(grant: Grant, leases: Claimed[]): void {
    this.slots.claimed(grant, leases);
    this.stats.claimed += leases.length;
    if (leases.length > 0) this.o.send(leases);
  }

  /**
   * Records a batch and claims along with it: the leases these results end may be all that kept endpoints
   * from more work, and the claim then costs no round trip of its own. A batch that cannot be written
   * after a few tries is given up: its leases run out and those deliveries are sent again.
   */
  private async write(batch: Outcome[]): Promise<void> {
    const grant = this.slots.reserve(this.room());
    if (grant.rows === 0 && this.slots.bytesFull) this.bytesBound = true;
    let along = grant.rows;
    let leases: Claimed[] | undefined;
    this.claims++;
    try {
      const rows = batch.map((o) => o.row);
      leases = await retry(() => recordAndClaim(this.sql, rows, this.limits({ ...grant, rows: along })), {
        tries: 3,
        delayMs: (n) => 200 * n,
        // The tries after a failure only record: a claim that keeps failing must not keep these results
        // from being written (their deliveries would be sent again once the leases ran out).
        onError: (err) => {
          along = 0;
          this.fail("writing results failed; recording alone", err);
        },
      });
      this.stats.recorded += batch.length;
    } catch (err) {
      this.fail("recording results failed", err, { count: batch.length });
    }
    this.claims--;
    // Marked before the new leases are taken, which may fill those endpoints again.
    let freed = false;
    for (const o of batch) if (this.slots.written(o.row.endpoint_id, o.bytes)) freed = true;
    if (this.bytesBound) {
      freed = true;
      this.bytesBound = false;
    }
    if (leases !== undefined && stoppedAtBytes({ rows: along, bytes: grant.bytes }, leases)) {
      this.bytesBound = true;
    }
    this.accept(grant, leases ?? []);
    // The loop looks again unless this claim already saw all there was (it took less than it could).
    const sawAll = leases !== undefined && leases.length < along;
    if (!sawAll && (freed || (along > 0 && leases?.length === along))) this.due = true;
    this.changes.ring();
  }

  private fail(msg: string, err: unknown, extra: Record<string, unknown> = {}): void {
    this.o.log({ level: "error", msg, ...extra, error: errorText(err) });
  }
}

/** A claim that took fewer rows than it could may have stopped at its bytes: a maximum body no longer fit. */
function stoppedAtBytes(grant: Grant, leases: Claimed[]): boolean {
  if (grant.rows === 0 || leases.length >= grant.rows) return false;
  return grant.bytes - leases.reduce((n, l) => n + l.body_bytes, 0) < MAX_BODY_BYTES;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
