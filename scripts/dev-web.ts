// The settings UI (web/) for `npm run dev`: Vite's dev server on its own port, pointed at the local
// stack's URL and anon key. Started by scripts/dev.ts once the stack is up; stopped with it.
const root = new URL("../", import.meta.url).pathname;

export interface WebDev {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts Vite for web/ on `port` (WEB_PORT, default 54323) unless WEB_DEV=false, the process may not run
 * programs (the test stack), or web/ is not installed. Resolves once Vite listens. Vite serves the
 * settings UI's security headers itself (web/security_headers.ts).
 */
export async function startWebDev(
  apiUrl: string,
  anonKey: string,
  port = Number(Deno.env.get("WEB_PORT") ?? 54323),
): Promise<WebDev | undefined> {
  if (Deno.env.get("WEB_DEV") === "false") return undefined;
  if ((await Deno.permissions.query({ name: "run", command: "node" })).state !== "granted") return undefined;
  const vite = `${root}web/node_modules/vite/bin/vite.js`;
  try {
    await Deno.stat(vite);
  } catch {
    console.log("settings UI not installed (run: npm ci --prefix web); serving the API only");
    return undefined;
  }
  const child = new Deno.Command("node", {
    args: [vite, "--port", String(port), "--strictPort", "--host", "127.0.0.1", "--clearScreen", "false"],
    cwd: `${root}web`,
    env: { VITE_SUPABASE_URL: apiUrl, VITE_SUPABASE_ANON_KEY: anonKey, BROWSER: "none" },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  // Wait for Vite's "ready" line (at most 30 s: the API must not wait on the UI), then keep passing its
  // errors through.
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), 30_000)));
  while (!/ready in|Local:/.test(seen)) {
    const next = await Promise.race([reader.read(), timeout]);
    if (next === "timeout" || next.done) {
      clearTimeout(timer);
      console.error(`settings UI did not start on port ${port} (WEB_PORT changes it):\n${seen}`);
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
      return undefined;
    }
    seen += next.value;
  }
  // A pending timer would keep the process alive after Ctrl-C.
  clearTimeout(timer);
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (/error/i.test(value)) console.error(value.trimEnd());
    }
  })();
  return {
    url,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}
