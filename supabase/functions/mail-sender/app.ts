// mail-sender: sends what is due in the mail outbox; pg_net calls it with the dispatcher's bearer secret.
//
//   POST /mail-sender   body (optional): {"max_mails": 100, "wait": false}
//
// 202 at once, working in the background on the Edge Runtime (pg_net holds one transaction open until
// every request of its batch is answered); 200 with what it did under plain Deno or with `"wait": true`.
// @see docs/operations.md#e-mail
import type { Hono } from "hono";
import { z } from "zod";
import { type AppDeps, newApp } from "../_shared/app.ts";
import {
  answerRun,
  type Background,
  backgroundFor,
  requireDispatchSecret,
  runBody,
} from "../_shared/background.ts";
import { serviceUnavailable } from "../_shared/errors.ts";
import { sendDue } from "./outbox.ts";
import { createTransport, type MailTransport } from "./transport.ts";

/** One run's wall-clock budget: well inside the worker's life; what is left goes at the next call. */
const BUDGET_MS = 60_000;

const RunBody = z.object({
  max_mails: z.number().int().min(1).max(1000).optional(),
  wait: z.boolean().optional(),
}).strict();

export interface MailSenderOptions {
  /** Runs a started send in the background (202); null awaits it (200). Default: EdgeRuntime.waitUntil. */
  waitUntil?: Background | null;
  /** The transport to use instead of the configured one (tests). */
  transport?: MailTransport;
  /** Aborted when the runtime is about to shut the worker down (`beforeunload`): stop claiming. */
  shutdown?: AbortSignal;
  log?: (event: Record<string, unknown>) => void;
}

export function createApp(deps: AppDeps, options: MailSenderOptions = {}): Hono {
  const app = newApp("mail-sender", deps);
  const log = options.log ?? ((e: Record<string, unknown>) => console.error(JSON.stringify(e)));
  app.post("/", async (c) => {
    requireDispatchSecret(c.req.header("authorization"), deps.config.dispatchSecret);
    const mail = deps.config.mail;
    if (!mail) {
      throw serviceUnavailable("Mail is not configured: set SITE_URL and SMTP_URL or RESEND_API_KEY");
    }
    const body = await runBody(c.req.raw, RunBody, "{max_mails?, wait?}");
    const background = backgroundFor(body.wait, options.waitUntil);
    const run = async () => {
      const transport = options.transport ?? createTransport(mail);
      try {
        return await sendDue(deps.sql, transport, {
          siteUrl: mail.siteUrl,
          abuseAddress: mail.abuseAddress,
          maxMails: body.max_mails,
          deadline: Date.now() + BUDGET_MS,
          signal: options.shutdown,
        });
      } finally {
        if (!options.transport) transport.close();
      }
    };
    return answerRun(c, background, run, { name: "mail run", log, started: {} });
  });
  return app;
}
