// Attempt limits of the local sign-in, in memory (one development process), the way Supabase Auth
// limits per client address: a token bucket per key that holds `limit` attempts and refills them over
// `periodMs`. Bounded: keys whose bucket is full again are forgotten, and past `maxKeys` the oldest go.
export class AttemptLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly limit: number,
    readonly periodMs: number,
    readonly maxKeys = 10_000,
    readonly now: () => number = Date.now,
  ) {}

  /** Spends one attempt of `key`'s; false (and nothing spent) when none is left. */
  take(key: string): boolean {
    const now = this.now();
    const held = this.#buckets.get(key);
    const tokens = held
      ? Math.min(this.limit, held.tokens + ((now - held.at) * this.limit) / this.periodMs)
      : this.limit;
    if (tokens < 1) return false;
    this.#buckets.delete(key); // re-inserted last: the map stays in least-recently-used order
    this.#buckets.set(key, { tokens: tokens - 1, at: now });
    this.#prune(now);
    return true;
  }

  /** `key` starts afresh (a successful sign-in ends its run of failures). */
  forget(key: string): void {
    this.#buckets.delete(key);
  }

  #prune(now: number) {
    for (const [key, b] of this.#buckets) {
      const full = b.tokens + ((now - b.at) * this.limit) / this.periodMs >= this.limit;
      if (!full && this.#buckets.size <= this.maxKeys) break;
      this.#buckets.delete(key);
    }
  }
}
