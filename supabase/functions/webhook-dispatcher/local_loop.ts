// Local delivery without pg_net: one engine that keeps running, woken by the NOTIFY the outbox
// triggers send at commit and, as a safety net (missed notifications, retries coming due, expired
// leases), by a short poll. The dev server runs this; so does the benchmark.
import type { Sql } from "../_shared/db.ts";
import { DeliveryEngine, type EngineOptions, logToConsole } from "./engine.ts";
import { retry } from "./retry.ts";

export const NOTIFY_CHANNEL = "webhook_deliveries";

export interface LocalDispatcher {
  engine: DeliveryEngine;
  /** Stops claiming, lets in-flight attempts finish and be recorded, stops listening. */
  stop(): Promise<void>;
}

export function startLocalDispatcher(
  sql: Sql,
  options: EngineOptions & { pollMs?: number },
): LocalDispatcher {
  const engine = new DeliveryEngine(sql, options);
  const log = options.log ?? logToConsole;
  const controller = new AbortController();
  // LISTEN once the database answers: postgres.js re-listens by itself after a lost connection, but a
  // LISTEN that failed at start leaves retry timers behind. Until it is up, the poll does the work.
  let listener: { unlisten(): Promise<void> } | undefined;
  const listening = retry(async () => {
    await sql`select 1`;
    if (controller.signal.aborted) return;
    listener = await sql.listen(NOTIFY_CHANNEL, () => engine.wake());
    engine.wake();
  }, {
    delayMs: () => 2000,
    signal: controller.signal,
    onError: (err, failures) => {
      if (failures === 1) {
        log({ level: "error", msg: "LISTEN not established yet; polling", error: String(err) });
      }
    },
  }).catch(() => {});
  const running = engine.run({ signal: controller.signal, pollMs: options.pollMs ?? 500 });
  return {
    engine,
    async stop() {
      controller.abort();
      await running;
      await listening;
      await listener?.unlisten().catch(() => {});
    },
  };
}
