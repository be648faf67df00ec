// Local delivery without pg_net: one engine that keeps running, woken by the NOTIFY the outbox
// triggers send at commit and, as a safety net (missed notifications, retries coming due, expired
// leases), by a short poll. The dev server runs this; so does the benchmark.
import type { Sql } from "../_shared/db.ts";
import { listenWhenUp } from "../_shared/listen.ts";
import { DeliveryEngine, type EngineOptions, logToConsole } from "./engine.ts";

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
  const listening = listenWhenUp(sql, NOTIFY_CHANNEL, () => engine.wake(), log);
  const running = engine.run({ signal: controller.signal, pollMs: options.pollMs ?? 500 });
  return {
    engine,
    async stop() {
      controller.abort();
      await running;
      await listening.stop();
    },
  };
}
