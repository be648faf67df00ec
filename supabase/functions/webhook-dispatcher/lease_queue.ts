// The leases of one run: the one place that claims (alone, or along with a result write), holds room
// for what is in flight (rows and body bytes, slots.ts), hands each lease over to be sent at once, and
// has outcomes recorded in batches (results.ts). close() stops claiming and waits for every claim, send
// and write already started: each lease taken is sent and recorded, or, if writing fails, left to run
// out and sent again (at least once). Once told to stop sending (the runtime's shutdown notice), leases
// that have not started sending, and any a claim still brings, are given back instead (released: due
// again at once, no attempt counted).
import type { Sql } from "../_shared/db.ts";
import type { Progress } from "./budget.ts";
import {
  type ClaimCaps,
  type Claimed,
  MAX_BODY_BYTES,
  recordAndClaim,
  releaseLeases,
  type ResultRow,
} from "./claims.ts";
import { Doorbell } from "./doorbell.ts";
import { ResultWriter } from "./results.ts";
import { exponential, retry } from "../_shared/retry.ts";
import type { AttemptResult } from "./send.ts";
import { type Grant, Slots } from "./slots.ts";

export interface QueueLimits extends ClaimCaps {
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
  /** Claimed, never sent, and given back (a stop). */
  released: number;
}

/** An outcome waiting to be written, with the body bytes its lease holds until then. */
type Outcome = { row: ResultRow; bytes: number };

export class LeaseQueue {
  readonly stats: QueueStats = { claimed: 0, delivered: 0, failed: 0, recorded: 0, released: 0 };
  private readonly slots: Slots;
  private readonly writer: ResultWriter<Outcome>;
  /** Leases given back unsent, released at once (a batch while a release is under way). */
  private readonly releaser: ResultWriter<Claimed>;
  /** Told to stop sending: leases not yet sending are given back. */
  private releasing = false;
  private readonly changes = new Doorbell();
  /** A claim may find work: a wake-up, a full claim, a write that could not look for more itself. */
  private due = true;
  private closing = false;
  /** Claims under way: the loop's and those along with writes. */
  private claims = 0;
  /** While busy, a claim waits for this many free slots rather than running once per finished send. */
  private readonly minClaim: number;

  constructor(private readonly sql: Sql, private readonly o: LeaseQueueOptions) {
    this.slots = new Slots(o.maxInFlight, o.maxInFlightBytes);
    // Each time all is written, the loop looks again: an idle run may stop now.
    this.writer = new ResultWriter(
      (batch) => this.write(batch),
      o.flushBatch,
      o.flushDelayMs,
      () => this.changes.ring(),
    );
    this.releaser = new ResultWriter(
      (batch) => this.release(batch),
      o.flushBatch,
      0,
      () => this.changes.ring(),
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
    return this.slots.rows === 0 && this.claims === 0 && this.writer.idle && this.releaser.idle;
  }

  get progress(): Progress {
    const { claimed, recorded, released } = this.stats;
    return { claimed, recorded, held: this.slots.reserved.rows + claimed - recorded - released };
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
    const leases = await this.claiming(
      retry(() => recordAndClaim(this.sql, [], grant.rows, grant.bytes, this.o), {
        delayMs: exponential(200, 5000),
        signal,
        onError: (err) => this.fail("claim failed", err),
      }),
    ).catch(() => null);
    this.accept(grant, leases ?? []);
    // A full batch: probably more. One cut short by its bytes looks again after the next write frees
    // bytes; at once, it would claim again and again into the same few bytes.
    if (leases?.length === grant.rows) this.due = true;
    return leases?.length ?? null;
  }

  /** A send ended: its outcome is written with the next batch. */
  complete(lease: Claimed, result: AttemptResult): void {
    this.stats[result.outcome === "delivered" ? "delivered" : "failed"]++;
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

  /**
   * No new send starts from here on: what a claim still under way brings is given back, and so is what
   * the engine hands back through giveBack(). Sends already under way end as they do.
   */
  stopSending(): void {
    this.closing = true;
    this.releasing = true;
    this.changes.ring();
  }

  /** A lease that will not be sent (a stop): released, with the next batch, so it is due again at once. */
  giveBack(lease: Claimed): void {
    this.slots.finished(lease.endpoint_id);
    this.releaser.add(lease);
    this.releaser.writeNow();
  }

  /** Stops claiming; resolves once every lease taken has been sent and its outcome written, or given back. */
  async close(): Promise<void> {
    this.closing = true;
    this.writer.writeNow();
    this.releaser.writeNow();
    while (!this.idle) await this.changes.wait();
  }

  private room(): number {
    if (this.closing) return 0;
    return Math.max(0, Math.min(this.slots.free, this.o.claimBatch, this.o.allowance(this.progress)));
  }

  /** Counts a claim as under way until it settles: the queue is not idle meanwhile. */
  private async claiming<T>(claim: Promise<T>): Promise<T> {
    this.claims++;
    try {
      return await claim;
    } finally {
      this.claims--;
    }
  }

  /**
   * Records a batch and claims along with it: the leases these results end may be all that kept endpoints
   * from more work, and the claim then costs no round trip of its own. A batch that cannot be written
   * after a few tries is given up: its leases run out and those deliveries are sent again.
   */
  private async write(batch: Outcome[]): Promise<void> {
    const grant = this.slots.reserve(this.room());
    const rows = batch.map((o) => o.row);
    let along = grant.rows;
    const leases = await this.claiming(
      retry(() => recordAndClaim(this.sql, rows, along, grant.bytes, this.o), {
        tries: 3,
        delayMs: (n) => 200 * n,
        // The tries after a failure only record: a claim that keeps failing must not keep these results
        // from being written (their deliveries would be sent again once the leases ran out).
        onError: (err) => {
          along = 0;
          this.fail("writing results failed; recording alone", err);
        },
      }),
    ).then((leases) => {
      this.stats.recorded += rows.length;
      return leases;
    }, (err) => void this.fail("recording results failed", err, { count: rows.length }));
    // Before the new leases are taken, which may fill those endpoints again.
    for (const o of batch) this.slots.written(o.row.endpoint_id, o.bytes);
    this.accept(grant, leases ?? []);
    // The loop looks again unless the claim along saw all there was: it took less than it could, and
    // not for want of bytes. Without a claim along, the endpoints and bytes this freed are unexplored.
    const bytes = leases?.reduce((n, l) => n + l.body_bytes, 0) ?? 0;
    if (!(leases && leases.length < along && grant.bytes - bytes >= MAX_BODY_BYTES)) this.due = true;
    this.changes.ring();
  }

  private accept(grant: Grant, leases: Claimed[]): void {
    this.slots.claimed(grant, leases);
    this.stats.claimed += leases.length;
    if (leases.length === 0) return;
    if (this.releasing) { for (const lease of leases) this.giveBack(lease); }
    else this.o.send(leases);
  }

  /**
   * Gives a batch of unsent leases back. One that cannot be given back after a few tries runs out as a
   * lease does and is claimed again then: later, never lost, never sent twice (it was not sent).
   */
  private async release(batch: Claimed[]): Promise<void> {
    const leases = batch.map(({ delivery_id, lease_token }) => ({ delivery_id, lease_token }));
    await this.claiming(
      retry(() => releaseLeases(this.sql, leases), {
        tries: 3,
        delayMs: (n) => 100 * n,
        onError: (err) => this.fail("giving back leases failed", err, { count: leases.length }),
      }),
    ).then(() => void (this.stats.released += batch.length), () => {});
    for (const lease of batch) this.slots.written(lease.endpoint_id, lease.body_bytes);
  }

  private fail(msg: string, err: unknown, extra: Record<string, unknown> = {}): void {
    this.o.log({ level: "error", msg, ...extra, error: errorText(err) });
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
