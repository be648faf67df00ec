// The operator's line about phone-number ids nobody registered.
const WARN_INTERVAL_MS = 60_000;
const WARN_SAMPLE = 3;
let lastWarnAt = -Infinity;
let suppressed = 0;

/**
 * Anyone can name phone-number ids (a body naming none of ours is checked against no secret), so this
 * line must not grow with the body or with the request rate: a count and a few ids cut short, at most
 * once a minute per process, with how many requests were left out since.
 */
export function warnUnknownIds(ids: string[]): void {
  const now = performance.now();
  if (now - lastWarnAt < WARN_INTERVAL_MS) {
    suppressed++;
    return;
  }
  lastWarnAt = now;
  console.warn(JSON.stringify({
    level: "warn",
    function: "messaging-webhook",
    msg: "unknown phone_number_id, changes skipped",
    count: ids.length,
    sample: ids.slice(0, WARN_SAMPLE).map((id) => id.slice(0, 32)),
    suppressed_requests: suppressed,
  }));
  suppressed = 0;
}
