// A node program `npm run dev` runs beside the local stack (the settings UI's Vite, the MailDev inbox):
// started, awaited until it says it is ready, its errors passed through, stopped with the stack.
export interface DevChild {
  stop(): Promise<void>;
}

/**
 * Runs `node args` and resolves once its output matches `ready` (at most 30 s: the API must not wait on
 * it); undefined, with what it printed, when it did not start.
 */
export async function startNodeChild(
  opts: { args: string[]; cwd?: string; env?: Record<string, string>; ready: RegExp; failure: string },
): Promise<DevChild | undefined> {
  const child = new Deno.Command("node", {
    args: opts.args,
    cwd: opts.cwd,
    env: opts.env,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
  };
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), 30_000)));
  while (!opts.ready.test(seen)) {
    const next = await Promise.race([reader.read(), timeout]);
    if (next === "timeout" || next.done) {
      clearTimeout(timer);
      console.error(`${opts.failure}:\n${seen}`);
      await stop();
      return undefined;
    }
    seen += next.value;
  }
  // A pending timer would keep the process alive after Ctrl-C.
  clearTimeout(timer);
  // Keep reading (a full pipe would block the program), passing its errors through.
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (/error/i.test(value)) console.error(value.trimEnd());
    }
  })();
  return { stop };
}
