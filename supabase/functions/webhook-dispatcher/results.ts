// When results are written. The first result waits `delayMs` for company, unless the engine says none
// is worth waiting for (writeNow); while the writers are busy the next results gather, and a writer
// takes them all (up to `maxBatch`) as soon as it is free: batches grow with the load, and a row costs
// far less in a batch of hundreds than in one of a few dozen. What writing means (recording, claiming
// along, what happens on failure) is the lease queue's `write`.
export class ResultWriter<T> {
  private pending: T[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Batches being written now, at most `maxWriting`. */
  private writing = 0;

  constructor(
    /** Writes one batch; never rejects. */
    private readonly write: (batch: T[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly delayMs: number,
    /** Called each time everything handed in has been written. */
    private readonly onIdle: () => void = () => {},
    /**
     * Batches written at once. More than one: results that come in while a batch is being written
     * (another endpoint's, say) need not wait for it, and that wait was most of a busy cycle.
     */
    private readonly maxWriting = 2,
  ) {}

  add(row: T): void {
    this.pending.push(row);
    if (this.writing >= this.maxWriting) return; // taken with the next batch, as soon as a write ends
    if (this.pending.length >= this.maxBatch) this.writeNow();
    else this.timer ??= setTimeout(() => this.writeNow(), this.delayMs);
  }

  /** Nothing waiting and nothing being written. */
  get idle(): boolean {
    return this.pending.length === 0 && this.writing === 0;
  }

  /** No result worth waiting for is on its way (the engine knows): write what is waiting now. */
  writeNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing < this.maxWriting && this.pending.length > 0) {
      this.writing++;
      this.write(this.pending.splice(0, this.maxBatch)).finally(() => {
        this.writing--;
        // What came in meanwhile goes at once: it has waited for a writer already.
        if (this.pending.length > 0) this.writeNow();
        else if (this.writing === 0) this.onIdle();
      });
    }
  }
}
