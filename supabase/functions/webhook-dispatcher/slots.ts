// This dispatcher's room: the sends in flight (at most `maxRows`), the body bytes of leases held until
// their outcomes are recorded (at most `maxBytes`), what claims under way may bring (several overlap:
// the run loop's and those along with writes), and which endpoints a claim filled to their cap. The cap
// itself is the database's (private.webhook_claim counts every dispatcher's live leases).
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
  readonly reserved: Grant = { rows: 0, bytes: 0 };

  constructor(readonly maxRows: number, readonly maxBytes: number) {}

  /** Rows a claim could take now (none while the bytes held fill the byte budget). */
  get free(): number {
    return this.freeBytes > 0 ? Math.max(0, this.maxRows - this.rows - this.reserved.rows) : 0;
  }

  private get freeBytes(): number {
    return this.maxBytes - this.bytes - this.reserved.bytes;
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
   * A send ended. True when it was the last in flight to an endpoint its claim had filled: nothing more
   * can be claimed there until the results are written, so they should be written now.
   */
  finished(endpointId: EndpointId): boolean {
    this.rows--;
    const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
    if (left > 0) this.perEndpoint.set(endpointId, left);
    else this.perEndpoint.delete(endpointId);
    return left === 0 && this.full.has(endpointId);
  }

  /** A result was written (or given up on: its lease runs out): its bytes and its endpoint are free. */
  written(endpointId: EndpointId, bytes: number): void {
    this.bytes -= bytes;
    this.full.delete(endpointId);
  }
}
