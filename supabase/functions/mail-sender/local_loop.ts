// Local sending without pg_net (the dev server): woken by the NOTIFY the outbox sends at commit, and
// by a poll for retries coming due. Failures to reach the database are retried by the next wake-up.
import type { MailConfig } from "../_shared/config.ts";
import type { Sql } from "../_shared/db.ts";
import { listenWhenUp } from "../_shared/listen.ts";
import { sendDue } from "./outbox.ts";
import { createTransport } from "./transport.ts";

export interface LocalMailSender {
  stop(): Promise<void>;
}

export function startLocalMailSender(
  sql: Sql,
  config: MailConfig,
  options: { pollMs?: number; log?: (e: Record<string, unknown>) => void } = {},
): LocalMailSender {
  const log = options.log ?? ((e: Record<string, unknown>) => console.error(JSON.stringify(e)));
  const transport = createTransport(config);
  const controller = new AbortController();
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let busy = false;
  const wake = () => {
    if (controller.signal.aborted) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    running = (async () => {
      do {
        again = false;
        try {
          await sendDue(sql, transport, { siteUrl: config.siteUrl, signal: controller.signal });
        } catch (err) {
          log({ level: "error", msg: "local mail run failed", error: String(err) });
        }
      } while (again && !controller.signal.aborted);
      busy = false;
    })();
  };
  const listening = listenWhenUp(sql, "mail_outbox", wake, log);
  const timer = setInterval(wake, options.pollMs ?? 2000);
  wake();
  return {
    async stop() {
      controller.abort();
      clearInterval(timer);
      await running;
      await listening.stop();
      transport.close();
    },
  };
}
