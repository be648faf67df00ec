// This dispatcher's slots: how many sends it has in flight (at most `maxInFlight`) and how many bytes of
// bodies they hold (at most `maxBytes`), counting what claims under way may bring, and which endpoints
// a claim filled to their cap. The caps themselves are the database's (private.webhook_claim counts
// every dispatcher's live leases, and a lease lasts until its result is written): a result for a full
// endpoint written means a claim may find work there again. A send's bytes are free again once it has
// ended: the body is not kept for its result.
export class Slots {
  private readonly full = new Set<string>();
  private readonly perEndpoint = new Map<string, number>();
  total = 0;
  bytes = 0;
  /** Slots and bytes held for claims under way (several can overlap: the run loop's and those along with writes). */
  private reserved = 0;
  private reservedBytes = 0;

  constructor(readonly maxInFlight: number, readonly maxBytes: number) {}

  get free(): number {
    return this.maxInFlight - this.total - this.reserved;
  }

  get freeBytes(): number {
    return this.maxBytes - this.bytes - this.reservedBytes;
  }

  /** Holds `n` slots and `bytes` for a claim under way; `claimed` gives them back. */
  reserve(n: number, bytes: number): void {
    this.reserved += n;
    this.reservedBytes += bytes;
  }

  /** A claim that held `reserved` slots and `reservedBytes` came back with `rows` (none if it failed). */
  claimed(
    rows: { endpoint_id: string; endpoint_full: boolean; body_bytes: number }[],
    reserved: number,
    reservedBytes: number,
  ): void {
    this.reserved -= reserved;
    this.reservedBytes -= reservedBytes;
    this.total += rows.length;
    for (const r of rows) {
      this.bytes += r.body_bytes;
      this.perEndpoint.set(r.endpoint_id, (this.perEndpoint.get(r.endpoint_id) ?? 0) + 1);
      if (r.endpoint_full) this.full.add(r.endpoint_id);
    }
  }

  /**
   * A send of `bytes` finished. True when it was the last in flight to an endpoint the claim had
   * filled: until its results are written, nothing more can be claimed there.
   */
  finished(endpointId: string, bytes: number): boolean {
    this.total--;
    this.bytes -= bytes;
    const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
    if (left > 0) {
      this.perEndpoint.set(endpointId, left);
      return false;
    }
    this.perEndpoint.delete(endpointId);
    return this.full.has(endpointId);
  }

  /** A result was written; true when its endpoint had been full (so claiming again may find work). */
  written(endpointId: string): boolean {
    return this.full.delete(endpointId);
  }
}
