// Sends to an endpoint with a rate limit start at the times the claim gave them (`send_at`, by the
// database's clock: private.webhook_claim paces an endpoint across dispatchers, 10% slower than its
// limit). In this process they also keep their distance: when a send starts late (a busy process, a
// timer that fired late), the next one to that endpoint waits until at least 1/rate after it, rather
// than following at once, and the 10% lets the sends after it catch up with the plan.
const MIN_SHARE_OF_PLANNED_GAP = 1 / 1.1;

interface Started {
  planned: number;
  started: number;
}

export class Pacer {
  private readonly last = new Map<string, Promise<Started>>();

  /** Resolves when a send scheduled for `sendAt` may start. */
  turn(endpointId: string, sendAt: Date): Promise<void> {
    const planned = sendAt.getTime();
    const before = this.last.get(endpointId);
    const mine = (async (): Promise<Started> => {
      const prev = before ? await before : undefined;
      const at = prev && planned > prev.planned
        ? Math.max(planned, prev.started + (planned - prev.planned) * MIN_SHARE_OF_PLANNED_GAP)
        : planned;
      const wait = at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      return { planned, started: Date.now() };
    })();
    // One entry per paced endpoint this process sends to (few): the last send's, for the next one.
    if (this.last.size > 10_000) this.last.clear();
    this.last.set(endpointId, mine);
    return mine.then(() => {});
  }
}
