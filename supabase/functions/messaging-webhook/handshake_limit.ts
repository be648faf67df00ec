// How many wrong verify tokens the subscription handshake hears before it stops answering: without a
// bound, anyone could try tokens at the callback URL until one echoed the challenge, and learn that
// some organization uses it. Failures are counted per client (the address the platform's gateway
// forwards in x-forwarded-for) and per callback URL (the shared one, or one organization's), since a
// client can claim another address; a blocked client or URL answers 429 to every handshake, a right
// token's too, so the answer while blocked says nothing. Counted in this instance's memory: each
// instance of the function bounds what it hears. @see docs/whatsapp.md#handshake-get
import { clientOf, FailureCounter } from "../_shared/failure_counter.ts";

/** Wrong tokens one client may present per window (Meta presents the right one, once). */
export const FAILURES_PER_CLIENT = 10;
/** Wrong tokens all clients together may present at one callback URL per window. */
export const FAILURES_PER_URL = 100;
export const WINDOW_MS = 10 * 60_000;

export interface HandshakeLimiter {
  /** Seconds to wait (for Retry-After) when this client or this URL may not try now, else 0. */
  retryAfter(client: string, url: string): number;
  /** A wrong token from `client` at `url`. */
  failed(client: string, url: string): void;
}

export function handshakeLimiter(now: () => number = Date.now): HandshakeLimiter {
  const clients = new FailureCounter(FAILURES_PER_CLIENT, WINDOW_MS, now);
  const urls = new FailureCounter(FAILURES_PER_URL, WINDOW_MS, now);
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

export { clientOf };
