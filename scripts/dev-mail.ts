// The local mail catcher for `npm run dev`: MailDev (the `maildev` npm package) takes every mail the
// local mail-sender sends over SMTP and shows it in a web inbox, as Supabase's local stack does on port
// 54324. Started by scripts/dev.ts before the functions read their configuration; stopped with it.
import { startNodeChild } from "./dev-child.ts";

const root = new URL("../", import.meta.url).pathname;

export interface MailCatcher {
  /** The web inbox. */
  url: string;
  /** Where the local mail-sender sends (SMTP_URL). */
  smtpUrl: string;
  stop(): Promise<void>;
}

/**
 * Starts MailDev on MAIL_WEB_PORT (default 54324) and MAIL_SMTP_PORT (default 54325), both on loopback,
 * unless MAIL_DEV=false, mail is configured otherwise (SMTP_URL or RESEND_API_KEY), the process may not
 * run programs, or MailDev is not installed. Resolves once it listens.
 */
export async function startMailCatcher(): Promise<MailCatcher | undefined> {
  if (Deno.env.get("MAIL_DEV") === "false" || Deno.env.get("SMTP_URL") || Deno.env.get("RESEND_API_KEY")) {
    return undefined;
  }
  if ((await Deno.permissions.query({ name: "run", command: "node" })).state !== "granted") return undefined;
  const bin = `${root}node_modules/maildev/dist/bin/maildev.js`;
  try {
    await Deno.stat(bin);
  } catch {
    console.log("mail catcher not installed (run: npm ci); mail stays in the outbox");
    return undefined;
  }
  const webPort = Number(Deno.env.get("MAIL_WEB_PORT") ?? 54324);
  const smtpPort = Number(Deno.env.get("MAIL_SMTP_PORT") ?? 54325);
  const child = await startNodeChild({
    args: [
      bin,
      "--smtp",
      String(smtpPort),
      "--web",
      String(webPort),
      "--ip",
      "127.0.0.1",
      "--web-ip",
      "127.0.0.1",
    ],
    ready: /Web Interface[\s\S]*URL:/,
    failure: "mail catcher did not start (MAIL_WEB_PORT / MAIL_SMTP_PORT change its ports)",
  });
  return child &&
    { url: `http://127.0.0.1:${webPort}`, smtpUrl: `smtp://127.0.0.1:${smtpPort}`, stop: child.stop };
}
