// An endpoint's activity per hour (or per 6 hours), from its 10-minute health buckets: attempts delivered
// and failed, and response time percentiles estimated from the buckets' histograms
// (private.webhook_duration_bounds() in the endpoint health migration says what each bin holds).
// Percentiles do not add up, so wider points are made here from the histograms, not from hourly points.

export interface BucketRow {
  bucket_start: string | Date;
  attempts: number;
  delivered: number;
  duration_histogram: number[];
}

export interface ActivityPoint {
  start: string;
  delivered: number;
  failed: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

export const HOUR_MS = 3600_000;
export const WINDOW_HOURS = { "24h": 24, "7d": 168 } as const;
export type ActivityWindow = keyof typeof WINDOW_HOURS;
/** How long one point covers; each divides both windows. */
export const BUCKET_HOURS = { "1h": 1, "6h": 6 } as const;
export type ActivityBucket = keyof typeof BUCKET_HOURS;

/** The first hour the window shows: the current hour is its last point. */
export function windowStart(window: ActivityWindow, now: number): number {
  return Math.floor(now / HOUR_MS) * HOUR_MS - (WINDOW_HOURS[window] - 1) * HOUR_MS;
}

/**
 * The `p` quantile (0..1) of a histogram: the bin holding that rank, then a straight line across the
 * bin. The last bin (at or past the last bound, the timeout) answers its lower bound.
 */
export function percentile(histogram: number[], bounds: number[], p: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let before = 0;
  for (let i = 0; i < histogram.length; i++) {
    const n = histogram[i] ?? 0;
    if (before + n >= rank) {
      const low = i === 0 ? 0 : bounds[i - 1]!;
      if (i >= bounds.length) return low;
      const high = bounds[i]!;
      return Math.round(low + (high - low) * ((rank - before) / n));
    }
    before += n;
  }
  return null;
}

function addInto(sum: number[], h: number[]): void {
  for (let i = 0; i < h.length; i++) sum[i] = (sum[i] ?? 0) + (h[i] ?? 0);
}

/**
 * One point per hour (or per `bucket`) of the window, oldest first, points without attempts included (as
 * zeros). The last point ends with the current hour.
 */
export function hourlyActivity(
  rows: BucketRow[],
  bounds: number[],
  window: ActivityWindow,
  now: number,
  bucket: ActivityBucket = "1h",
): { points: ActivityPoint[]; totals: Omit<ActivityPoint, "start"> } {
  const start = windowStart(window, now);
  const step = BUCKET_HOURS[bucket] * HOUR_MS;
  const n = WINDOW_HOURS[window] / BUCKET_HOURS[bucket];
  const delivered = new Array<number>(n).fill(0);
  const failed = new Array<number>(n).fill(0);
  const histograms: number[][] = Array.from({ length: n }, () => []);
  const all: number[] = [];
  for (const r of rows) {
    const i = Math.floor((new Date(r.bucket_start).getTime() - start) / step);
    if (i < 0 || i >= n) continue;
    delivered[i]! += r.delivered;
    failed[i]! += r.attempts - r.delivered;
    addInto(histograms[i]!, r.duration_histogram);
    addInto(all, r.duration_histogram);
  }
  const points = histograms.map((h, i) => ({
    start: new Date(start + i * step).toISOString(),
    delivered: delivered[i]!,
    failed: failed[i]!,
    p50_ms: percentile(h, bounds, 0.5),
    p95_ms: percentile(h, bounds, 0.95),
  }));
  return {
    points,
    totals: {
      delivered: delivered.reduce((a, b) => a + b, 0),
      failed: failed.reduce((a, b) => a + b, 0),
      p50_ms: percentile(all, bounds, 0.5),
      p95_ms: percentile(all, bounds, 0.95),
    },
  };
}
