// Failures counted per key (a client's address, a callback URL) in fixed windows, in this instance's
// memory, for the unauthenticated doors that take a secret: the messaging handshake's verify tokens and
// the invitation preview's tokens. Each instance of a function bounds what it hears; a blocked key
// answers 429 whatever it presents, so the answer while blocked says nothing.

/** Keys remembered at once: a flood of made-up addresses cannot grow the map without bound. */
const MAX_TRACKED = 10_000;

interface Window {
  start: number;
  failures: number;
}

export class FailureCounter {
  #windows = new Map<string, Window>();
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until `key` may try again, or 0. */
  blockedFor(key: string): number {
    const w = this.#windows.get(key);
    if (!w) return 0;
    const left = w.start + this.windowMs - this.now();
    if (left <= 0) {
      this.#windows.delete(key);
      return 0;
    }
    return w.failures >= this.limit ? left : 0;
  }

  fail(key: string): void {
    const w = this.#windows.get(key);
    if (w && w.start + this.windowMs > this.now()) {
      w.failures++;
      return;
    }
    if (this.#windows.size >= MAX_TRACKED) this.#sweep();
    this.#windows.set(key, { start: this.now(), failures: 1 });
  }

  #sweep(): void {
    const now = this.now();
    for (const [k, w] of this.#windows) if (w.start + this.windowMs <= now) this.#windows.delete(k);
    // Still full of live windows: forget the oldest half rather than grow (they may guess again).
    if (this.#windows.size >= MAX_TRACKED) {
      let drop = Math.floor(this.#windows.size / 2);
      for (const k of this.#windows.keys()) {
        if (drop-- <= 0) break;
        this.#windows.delete(k);
      }
    }
  }
}

/** The client as the platform's gateway reports it: the first x-forwarded-for address. */
export function clientOf(req: Request): string {
  return req.headers.get("x-forwarded-for")?.split(",")[0]?.trim().slice(0, 64) || "unknown";
}
