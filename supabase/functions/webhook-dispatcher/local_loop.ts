// Local delivery without pg_net: one engine that keeps running, woken by the NOTIFY the outbox
// triggers send at commit and, as a safety net (missed notifications, retries coming due, expired
// leases), by a short poll. The dev server runs this; so does the benchmark.
import type { Sql } from "../_shared/db.ts";
import { DeliveryEngine, type EngineOptions } from "./engine.ts";

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
  const log = options.log ?? ((e: Record<string, unknown>) => console.error(JSON.stringify(e)));
  const controller = new AbortController();
  // postgres.js keeps the LISTEN connection up and re-listens after a reconnect. If the database is
  // down at start, the poll still runs and the engine backs off on its own.
  const listening = sql.listen(NOTIFY_CHANNEL, () => engine.wake())
    .catch((err) => {
      log({ level: "error", msg: "LISTEN failed; polling only", error: String(err) });
      return undefined;
    });
  const running = engine.run({ signal: controller.signal, pollMs: options.pollMs ?? 500 });
  return {
    engine,
    async stop() {
      controller.abort();
      await running;
      await (await listening)?.unlisten().catch(() => {});
    },
  };
}
