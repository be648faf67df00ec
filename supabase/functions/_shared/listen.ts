// LISTEN for the local loops (no pg_net on a laptop), once the database answers: postgres.js listens
// again by itself after a lost connection, but a LISTEN that failed at start leaves retry timers behind
// (they kept the dev server alive ~15 s after Ctrl-C). Until it is up, the loops' polls do the work.
import type { Sql } from "./db.ts";
import { retry } from "./retry.ts";

/** Calls `onNotify` on each notification on `channel`, and once when listening starts. */
export function listenWhenUp(
  sql: Sql,
  channel: string,
  onNotify: () => void,
  log: (event: Record<string, unknown>) => void,
): { stop(): Promise<void> } {
  const controller = new AbortController();
  let listener: { unlisten(): Promise<void> } | undefined;
  const started = retry(async () => {
    await sql`select 1`;
    if (controller.signal.aborted) return;
    listener = await sql.listen(channel, onNotify);
    onNotify();
  }, {
    delayMs: () => 2000,
    signal: controller.signal,
    onError: (err, failures) => {
      if (failures === 1) {
        log({ level: "error", msg: `LISTEN ${channel} not established yet; polling`, error: String(err) });
      }
    },
  }).catch(() => {});
  return {
    async stop() {
      controller.abort();
      await started;
      await listener?.unlisten().catch(() => {});
    },
  };
}
