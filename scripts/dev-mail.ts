// The local mail catcher for `npm run dev`: MailDev (the `maildev` npm package) takes every mail the
// local mail-sender sends over SMTP and shows it in a web inbox, as Supabase's local stack does on port
// 54324. Started by scripts/dev.ts before the functions read their configuration; stopped with it.
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
  const child = new Deno.Command("node", {
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
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = new ReadableStream<string>({
    async start(controller) {
      const merged = [child.stdout, child.stderr].map(async (s) => {
        for await (const t of s.pipeThrough(new TextDecoderStream())) controller.enqueue(t);
      });
      await Promise.all(merged);
      controller.close();
    },
  }).getReader();
  let seen = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), 20_000)));
  while (!/Web Interface[\s\S]*URL:/.test(seen)) {
    const next = await Promise.race([output.read(), timeout]);
    if (next === "timeout" || next.done) {
      clearTimeout(timer);
      console.error(`mail catcher did not start (MAIL_WEB_PORT / MAIL_SMTP_PORT change its ports):\n${seen}`);
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
      return undefined;
    }
    seen += next.value;
  }
  clearTimeout(timer);
  // Keep reading, so MailDev never blocks on a full pipe.
  (async () => {
    while (!(await output.read()).done) { /* discard */ }
  })();
  return {
    url: `http://127.0.0.1:${webPort}`,
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}
