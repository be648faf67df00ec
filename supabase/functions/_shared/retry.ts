// The one retry loop (the dispatcher's claims and result writes, the local loops' LISTEN): call `fn`
// until it succeeds, waiting `delayMs(n)` after the n-th failure, until `tries` failures or `signal` aborts;
// then the last error is thrown.
import { setTimeout as sleep } from "node:timers/promises";

export interface RetryOptions {
  tries?: number;
  delayMs: (failures: number) => number;
  signal?: AbortSignal;
  onError?: (err: unknown, failures: number) => void;
}

export async function retry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let failures = 1;; failures++) {
    try {
      return await fn();
    } catch (err) {
      options.onError?.(err, failures);
      if (failures >= (options.tries ?? Infinity) || options.signal?.aborted) throw err;
      await sleep(options.delayMs(failures), undefined, { signal: options.signal }).catch(() => {});
      if (options.signal?.aborted) throw err;
    }
  }
}

/** Exponential backoff: base, 2 x base, 4 x base... capped at `max`. */
export const exponential = (base: number, max: number) => (failures: number) =>
  Math.min(base * 2 ** (failures - 1), max);
