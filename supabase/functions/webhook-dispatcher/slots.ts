// This dispatcher's slots: how many sends it has in flight (at most `maxInFlight`), and which endpoints
// a claim filled to their cap. The cap itself is the database's (private.webhook_claim counts every
// dispatcher's live leases, and a lease lasts until its result is written): a result for a full
// endpoint written means a claim may find work there again.
export class Slots {
  private readonly full = new Set<string>();
  total = 0;

  constructor(readonly maxInFlight: number) {}

  get free(): number {
    return this.maxInFlight - this.total;
  }

  claimed(rows: { endpoint_id: string; endpoint_full: boolean }[]): void {
    this.total += rows.length;
    for (const r of rows) if (r.endpoint_full) this.full.add(r.endpoint_id);
  }

  /** A send finished. */
  finished(): void {
    this.total--;
  }

  /** A result was written; true when its endpoint had been full (so claiming again may find work). */
  written(endpointId: string): boolean {
    return this.full.delete(endpointId);
  }
}
