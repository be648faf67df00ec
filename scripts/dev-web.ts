// The settings UI (web/) for `npm run dev`: Vite's dev server on its own port, pointed at the local
// stack's URL and anon key. Started by scripts/dev.ts once the stack is up; stopped with it.
import { startNodeChild } from "./dev-child.ts";

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
  const child = await startNodeChild({
    args: [vite, "--port", String(port), "--strictPort", "--host", "127.0.0.1", "--clearScreen", "false"],
    cwd: `${root}web`,
    env: { VITE_SUPABASE_URL: apiUrl, VITE_SUPABASE_ANON_KEY: anonKey, BROWSER: "none" },
    ready: /ready in|Local:/,
    failure: `settings UI did not start on port ${port} (WEB_PORT changes it)`,
  });
  return child && { url: `http://127.0.0.1:${port}`, stop: child.stop };
}
