// The real local stack for a test: scripts/dev.ts spawned on a random port against the run's database,
// with its own key directory (so its anon key and signing key are its own), plus the same user upsert
// `npm run dev:user` runs.
import { sql, testDbUrl } from "./db.ts";
import { type DevUser, type DevUserInput, upsertDevUser as upsert } from "../../scripts/local-auth/users.ts";

/** `npm run dev:user`'s upsert on the test database (through the shared test pool: closeSql() ends it). */
export function upsertDevUser(input: DevUserInput): Promise<DevUser> {
  return upsert(sql(), input);
}

const root = new URL("../../", import.meta.url).pathname;

export interface DevStack {
  /** `http://127.0.0.1:<port>`: /auth/v1 and /functions/v1 live under it. */
  url: string;
  anonKey: string;
  /** This server's key directory (LOCAL_AUTH_DIR): anon-key and signing-key.json. */
  keysDir: string;
  /** Everything the server printed so far (stdout and stderr). */
  output(): string;
  /** SIGINT (or `signal`), then waits for the exit; rejects when the server did not exit 0 within `ms`. */
  stop(signal?: Deno.Signal, ms?: number): Promise<void>;
}

/** `deno` arguments that run the dev server, writing its local sign-in keys only into `keyDir`. */
export function devServerArgs(keyDir: string): string[] {
  return [
    "run",
    "--allow-net",
    "--allow-env",
    "--allow-read",
    `--allow-write=${keyDir}`,
    "--allow-sys",
    "scripts/dev.ts",
  ];
}

/** Waits for `p`, or `ms` at most (the timer cleared either way). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise((r) => timer = setTimeout(r, ms))]);
  clearTimeout(timer);
}

/** The processes below `pid`, children first. */
async function descendants(pid: number): Promise<number[]> {
  const out = await new Deno.Command("pgrep", { args: ["-P", String(pid)] }).output();
  const kids = new TextDecoder().decode(out.stdout).trim().split(/\s+/).filter(Boolean).map(Number);
  return [...kids, ...(await Promise.all(kids.map(descendants))).flat()];
}

/** `allowRun`: the server may start node programs (the settings UI, the mail catcher), as `npm run dev`'s may. */
export async function startDevStack(
  opts: { env?: Record<string, string>; allowRun?: boolean } = {},
): Promise<DevStack> {
  const dir = await Deno.makeTempDir({ prefix: "dev-stack-keys-" });
  const args = devServerArgs(dir);
  if (opts.allowRun) args.splice(1, 0, "--allow-run=node");
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env: {
      SUPABASE_DB_URL: testDbUrl(),
      PORT: "0",
      LOCAL_AUTH_DIR: dir,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
      ...opts.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let onData: (() => void) | undefined;
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      out += text;
      onData?.();
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const status = child.status;
  let exited = false;
  status.then(() => (exited = true));

  // 90 s: on a loaded machine with a cold Deno cache, loading every function has taken over 30.
  const url = await new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 90_000);
    onData = () => {
      const m = out.match(/dev server ready on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    status.then(() => {
      clearTimeout(timer);
      resolve(out.match(/dev server ready on (http:\/\/127\.0\.0\.1:\d+)/)?.[1]);
    });
  });
  const anonKey = out.match(/anon key:\s+(\S+)/)?.[1];
  const cleanup = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  if (!url || !anonKey) {
    // The server's own children (the mail catcher, the settings UI's Vite) hold its output pipes: a
    // SIGKILL alone orphaned them, and waiting for the output to end then hung the test for good. SIGTERM
    // first (the server stops them), then SIGKILL for whatever is left of its tree.
    const tree = exited ? [] : await descendants(child.pid);
    if (!exited) child.kill("SIGTERM");
    await within(status, 5_000);
    if (!exited) child.kill("SIGKILL");
    for (const pid of tree) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    await status;
    await within(drained, 5_000);
    await cleanup();
    throw new Error(`dev server did not start:\n${out}`);
  }
  return {
    url,
    anonKey,
    keysDir: dir,
    output: () => out,
    stop: async (signal: Deno.Signal = "SIGINT", ms = 10_000) => {
      if (!exited) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      const { code } = await status;
      clearTimeout(timer);
      // Bounded: a child the server could not stop would hold its output open.
      await within(drained, 5_000);
      await cleanup();
      if (code !== 0) throw new Error(`dev server exited ${code}:\n${out}`);
    },
  };
}

/** One call to the dev stack's local sign-in (`/auth/v1...`) with the anon key, as supabase-js makes it. */
export async function authCall(
  s: DevStack,
  path: string,
  init: { method?: string; token?: string; json?: unknown },
) {
  const res = await fetch(`${s.url}/auth/v1${path}`, {
    method: init.method ?? "POST",
    headers: {
      apikey: s.anonKey,
      "content-type": "application/json",
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
