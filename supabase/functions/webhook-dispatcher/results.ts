// Writing results (private.webhook_record_results), one batch at a time and in order. The first result
// waits `delayMs` for company, unless the engine says none is worth waiting for (writeNow); while a
// batch is being written the next ones gather, and the writer takes them all (up to `maxBatch`) as soon
// as it is free: batches grow with the load, and a row costs far less in a batch of hundreds than in
// one of a few dozen. A batch that cannot be written after a
// few tries is dropped: its leases run out and those deliveries are sent again (at least once, never
// lost).
import type { Sql } from "../_shared/db.ts";
import { retry } from "./retry.ts";
import type { AttemptResult } from "./send.ts";

export type ResultRow = AttemptResult & { delivery_id: string; endpoint_id: string; lease_token: string };

export class ResultWriter {
  private pending: ResultRow[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pumping: Promise<void> | undefined;
  recorded = 0;

  constructor(
    private readonly sql: Sql,
    private readonly maxBatch: number,
    private readonly delayMs: number,
    private readonly log: (event: Record<string, unknown>) => void,
    /** After each batch, written or given up (its leases are over either way), and with [] once idle. */
    private readonly done: (batch: ResultRow[]) => void = () => {},
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
      else this.done([]); // idle now
    });
  }

  private async pump(): Promise<void> {
    while (this.pending.length > 0) await this.write(this.pending.splice(0, this.maxBatch));
  }

  private async write(batch: ResultRow[]): Promise<void> {
    try {
      await retry(() => this.sql`select private.webhook_record_results(${this.sql.json(batch as never)})`, {
        tries: 3,
        delayMs: (n) => 200 * n,
      });
      this.recorded += batch.length;
    } catch (err) {
      this.log({
        level: "error",
        msg: "recording results failed",
        count: batch.length,
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      });
    }
    this.done(batch);
  }
}
