// The per-endpoint limiter: how many deliveries this dispatcher has in flight, in all and per endpoint,
// so one slow endpoint can hold at most `perEndpoint` of the `maxInFlight` slots. The claim asks for
// work only for endpoints with room (`snapshot`), and remembers which endpoints it left at their cap:
// a slot freeing there means there may be more work to claim.
export class EndpointLimiter {
  private readonly counts = new Map<string, number>();
  private saturated = new Set<string>();
  total = 0;

  constructor(readonly maxInFlight: number, readonly perEndpoint: number) {}

  /** Free slots overall. */
  get free(): number {
    return this.maxInFlight - this.total;
  }

  /** {endpoint_id: in flight} for the claim. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  /**
   * After a claim made with `snapshot`: these endpoints got these rows. Remembers which endpoints the
   * claim filled up to their cap as it saw them (sends finishing during the claim do not count), since
   * those may have more due work.
   */
  claimed(snapshot: Record<string, number>, endpointIds: string[]): void {
    const load = new Map(Object.entries(snapshot));
    for (const id of endpointIds) {
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
      load.set(id, (load.get(id) ?? 0) + 1);
      this.total++;
    }
    this.saturated = new Set([...load].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id));
  }

  /** A send finished; true when its endpoint had been held back (so claiming again may find work). */
  release(endpointId: string): boolean {
    const n = (this.counts.get(endpointId) ?? 1) - 1;
    if (n <= 0) this.counts.delete(endpointId);
    else this.counts.set(endpointId, n);
    this.total--;
    return this.saturated.has(endpointId);
  }

  /** Whether an endpoint the last claim held back has room again. */
  heldBackHasRoom(): boolean {
    for (const id of this.saturated) if ((this.counts.get(id) ?? 0) < this.perEndpoint) return true;
    return false;
  }
}
