// This dispatcher's slots: how many sends it has in flight (at most `maxInFlight`, counting the rows
// that claims under way may bring), and which endpoints a claim filled to their cap. The cap itself is
// the database's (private.webhook_claim counts every dispatcher's live leases, and a lease lasts until
// its result is written): a result for a full endpoint written means a claim may find work there again.
export class Slots {
  private readonly full = new Set<string>();
  private readonly perEndpoint = new Map<string, number>();
  total = 0;
  /** Slots held for claims under way (several can overlap: the run loop's and those along with writes). */
  private reserved = 0;

  constructor(readonly maxInFlight: number) {}

  get free(): number {
    return this.maxInFlight - this.total - this.reserved;
  }

  /** Holds `n` slots for a claim under way; `claimed` gives them back. */
  reserve(n: number): void {
    this.reserved += n;
  }

  /** A claim that held `reserved` slots came back with `rows` (none if it failed). */
  claimed(rows: { endpoint_id: string; endpoint_full: boolean }[], reserved: number): void {
    this.reserved -= reserved;
    this.total += rows.length;
    for (const r of rows) {
      this.perEndpoint.set(r.endpoint_id, (this.perEndpoint.get(r.endpoint_id) ?? 0) + 1);
      if (r.endpoint_full) this.full.add(r.endpoint_id);
    }
  }

  /**
   * A send finished. True when it was the last in flight to an endpoint the claim had filled: until its
   * results are written, nothing more can be claimed there.
   */
  finished(endpointId: string): boolean {
    this.total--;
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
