// When results are written: one batch at a time and in order. The first result waits `delayMs` for
// company, unless the engine says none is worth waiting for (writeNow); while a batch is being written
// the next ones gather, and the writer takes them all (up to `maxBatch`) as soon as it is free: batches
// grow with the load, and a row costs far less in a batch of hundreds than in one of a few dozen. What
// writing means (recording, claiming along, what happens on failure) is the engine's `write`.
import type { ResultRow } from "./claims.ts";

export class ResultWriter {
  private pending: ResultRow[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pumping: Promise<void> | undefined;

  constructor(
    /** Writes one batch; never rejects. */
    private readonly write: (batch: ResultRow[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly delayMs: number,
    /** Called each time everything handed in has been written. */
    private readonly onIdle: () => void = () => {},
  ) {}

  add(row: ResultRow): void {
    this.pending.push(row);
    if (this.pumping) return; // the running writer takes it with its next batch
    if (this.pending.length >= this.maxBatch) this.kick();
    else this.timer ??= setTimeout(() => this.kick(), this.delayMs);
  }

  /** No result worth waiting for is on its way (the engine knows): write what is waiting now. */
  writeNow(): void {
    this.kick();
  }

  /** Nothing waiting and nothing being written. */
  get idle(): boolean {
    return this.pending.length === 0 && !this.pumping;
  }

  /** Writes what is waiting; resolves when everything handed in so far is written. */
  async flush(): Promise<void> {
    this.kick();
    while (this.pumping) await this.pumping;
  }

  private kick(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pumping || this.pending.length === 0) return;
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      if (this.pending.length > 0) this.kick(); // handed in after the last batch was cut
      else this.onIdle();
    });
  }

  private async pump(): Promise<void> {
    while (this.pending.length > 0) await this.write(this.pending.splice(0, this.maxBatch));
  }
}
