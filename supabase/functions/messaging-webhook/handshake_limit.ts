// How many wrong verify tokens the subscription handshake hears before it stops answering: without a
// bound, anyone could try tokens at the callback URL until one echoed the challenge, and learn that
// some organization uses it. Failures are counted per client (the address the platform's gateway
// forwards in x-forwarded-for) and per callback URL (the shared one, or one organization's), since a
// client can claim another address; a blocked client or URL answers 429 to every handshake, a right
// token's too, so the answer while blocked says nothing. Counted in this instance's memory: each
// instance of the function bounds what it hears. @see docs/whatsapp.md#handshake-get

/** Wrong tokens one client may present per window (Meta presents the right one, once). */
export const FAILURES_PER_CLIENT = 10;
/** Wrong tokens all clients together may present at one callback URL per window. */
export const FAILURES_PER_URL = 100;
export const WINDOW_MS = 10 * 60_000;
/** Clients remembered at once: a flood of made-up addresses cannot grow the map without bound. */
const MAX_TRACKED = 10_000;

interface Window {
  start: number;
  failures: number;
}

class Counter {
  #windows = new Map<string, Window>();
  constructor(private readonly limit: number, private readonly now: () => number) {}

  /** Milliseconds until `key` may try again, or 0. */
  blockedFor(key: string): number {
    const w = this.#windows.get(key);
    if (!w) return 0;
    const left = w.start + WINDOW_MS - this.now();
    if (left <= 0) {
      this.#windows.delete(key);
      return 0;
    }
    return w.failures >= this.limit ? left : 0;
  }

  fail(key: string): void {
    const w = this.#windows.get(key);
    if (w && w.start + WINDOW_MS > this.now()) {
      w.failures++;
      return;
    }
    if (this.#windows.size >= MAX_TRACKED) this.#sweep();
    this.#windows.set(key, { start: this.now(), failures: 1 });
  }

  #sweep(): void {
    const now = this.now();
    for (const [k, w] of this.#windows) if (w.start + WINDOW_MS <= now) this.#windows.delete(k);
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

export interface HandshakeLimiter {
  /** Seconds to wait (for Retry-After) when this client or this URL may not try now, else 0. */
  retryAfter(client: string, url: string): number;
  /** A wrong token from `client` at `url`. */
  failed(client: string, url: string): void;
}

export function handshakeLimiter(now: () => number = Date.now): HandshakeLimiter {
  const clients = new Counter(FAILURES_PER_CLIENT, now);
  const urls = new Counter(FAILURES_PER_URL, now);
  return {
    retryAfter(client, url) {
      const ms = Math.max(clients.blockedFor(client), urls.blockedFor(url));
      return ms > 0 ? Math.ceil(ms / 1000) : 0;
    },
    failed(client, url) {
      clients.fail(client);
      urls.fail(url);
    },
  };
}

/** The client as the platform's gateway reports it: the first x-forwarded-for address. */
export function clientOf(req: Request): string {
  return req.headers.get("x-forwarded-for")?.split(",")[0]?.trim().slice(0, 64) || "unknown";
}
