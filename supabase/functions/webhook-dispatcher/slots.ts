// This dispatcher's room, in rows and in bytes: the deliveries it is sending (at most `maxRows`), the
// body bytes of those it holds until their outcomes are recorded (at most `maxBytes`), and what claims
// under way may bring (several can overlap: the run loop's and those along with writes). Also which
// endpoints a claim filled to their cap. The cap itself is the database's (private.webhook_claim counts
// every dispatcher's live leases, and a lease lasts until its result is written): a result for a full
// endpoint written means a claim may find work there again.
import type { EndpointId } from "./ids.ts";

/** What one claim may take; held from `reserve` until `claimed`. */
export interface Grant {
  rows: number;
  bytes: number;
}

export class Slots {
  private readonly full = new Set<EndpointId>();
  private readonly perEndpoint = new Map<EndpointId, number>();
  /** Sends in flight. */
  rows = 0;
  /** Body bytes claimed and not yet recorded. */
  bytes = 0;
  /** Held for claims under way. */
  readonly reserved: Grant = { rows: 0, bytes: 0 };

  constructor(readonly maxRows: number, readonly maxBytes: number) {}

  /** Rows a claim could take now (none while the bytes held fill the byte budget). */
  get free(): number {
    return this.freeBytes > 0 ? Math.max(0, this.maxRows - this.rows - this.reserved.rows) : 0;
  }

  private get freeBytes(): number {
    return this.maxBytes - this.bytes - this.reserved.bytes;
  }

  /** The bytes held fill the byte budget: no claim until results are written. */
  get bytesFull(): boolean {
    return this.freeBytes <= 0;
  }

  /** Holds room for a claim of up to `rows` rows, with their share of the free bytes. */
  reserve(rows: number): Grant {
    const free = this.free;
    const n = Math.max(0, Math.min(rows, free));
    const grant = { rows: n, bytes: n === 0 ? 0 : Math.floor((this.freeBytes * n) / free) };
    this.reserved.rows += grant.rows;
    this.reserved.bytes += grant.bytes;
    return grant;
  }

  /** The claim holding `grant` came back with these rows (none if it failed). */
  claimed(
    grant: Grant,
    rows: { endpoint_id: EndpointId; endpoint_full: boolean; body_bytes: number }[],
  ): void {
    this.reserved.rows -= grant.rows;
    this.reserved.bytes -= grant.bytes;
    this.rows += rows.length;
    for (const r of rows) {
      this.bytes += r.body_bytes;
      this.perEndpoint.set(r.endpoint_id, (this.perEndpoint.get(r.endpoint_id) ?? 0) + 1);
      if (r.endpoint_full) this.full.add(r.endpoint_id);
    }
  }

  /**
   * A send finished. True when it was the last in flight to an endpoint the claim had filled: until its
   * results are written, nothing more can be claimed there.
   */
  finished(endpointId: EndpointId): boolean {
    this.rows--;
    const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
    if (left > 0) {
      this.perEndpoint.set(endpointId, left);
      return false;
    }
    this.perEndpoint.delete(endpointId);
    return this.full.has(endpointId);
  }

  /**
   * A result was written (or given up on: its lease runs out), freeing `bytes`; true when its endpoint
   * had been full (so claiming again may find work).
   */
  written(endpointId: EndpointId, bytes: number): boolean {
    this.bytes -= bytes;
    return this.full.delete(endpointId);
  }
}
