// Writing results: outcomes are written in batches (private.webhook_record_results), one batch at a
// time and in order, when `batchSize` are waiting or `delayMs` after the first. A batch that cannot be
// written after a few tries is dropped: its leases run out and those deliveries are sent again (at
// least once, never lost).
import type { Sql } from "../_shared/db.ts";
import { retry } from "./retry.ts";
import type { AttemptResult } from "./send.ts";

export type ResultRow = AttemptResult & { delivery_id: string; endpoint_id: string; lease_token: string };

export class ResultWriter {
  private pending: ResultRow[] = [];
  private writing: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  recorded = 0;

  constructor(
    private readonly sql: Sql,
    private readonly batchSize: number,
    private readonly delayMs: number,
    private readonly log: (event: Record<string, unknown>) => void,
  ) {}

  add(row: ResultRow): void {
    this.pending.push(row);
    if (this.pending.length >= this.batchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
  }

  /** Starts writing what is waiting; resolves when everything handed in so far is written. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      this.writing = this.writing.then(() => this.write(batch));
    }
    return this.writing;
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
  }
}
