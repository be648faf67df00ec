// One Edge Function run from its deployed entry point (supabase/functions/<name>/index.ts) in a process of
// its own, with only the environment a hosted project gives it (what `secrets set` stored and what the
// platform sets: SUPABASE_URL, SUPABASE_DB_URL, the keys), nothing of the test run's (no PGPASSWORD).
// Served on a random loopback port; `base` is `http://127.0.0.1:<port>/<name>`, the path the function sees.
const root = new URL("../../", import.meta.url).pathname;

export interface FunctionProcess {
  base: string;
  /** Everything the function printed so far (its log). */
  output(): string;
  /** Waits until the log matches, at most `ms`; the log. */
  waitForLog(pattern: RegExp, ms?: number): Promise<string>;
  stop(): Promise<void>;
}

export async function startFunctionProcess(
  name: string,
  env: Record<string, string>,
): Promise<FunctionProcess> {
  const keep = ["PATH", "HOME", "DENO_DIR", "TMPDIR"];
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-sys",
      `supabase/functions/${name}/index.ts`,
    ],
    cwd: root,
    clearEnv: true,
    env: {
      ...Object.fromEntries(keep.flatMap((k) => Deno.env.get(k) ? [[k, Deno.env.get(k)!]] : [])),
      NO_COLOR: "1",
      // Deno.serve() with no options, as index.ts calls it, listens here.
      DENO_SERVE_ADDRESS: "tcp:127.0.0.1:0",
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) out += text;
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  child.status.then(() => (exited = true));
  const waitForLog = async (pattern: RegExp, ms = 20_000) => {
    const until = Date.now() + ms;
    while (!pattern.test(out)) {
      if (exited || Date.now() > until) {
        throw new Error(`${name}: no ${pattern} in its log${exited ? " (it exited)" : ""}:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return out;
  };
  const stop = async () => {
    if (!exited) child.kill("SIGTERM");
    await child.status;
    await drained;
  };
  try {
    await waitForLog(/Listening on http:\/\/127\.0\.0\.1:\d+/);
  } catch (err) {
    await stop();
    throw err;
  }
  const port = out.match(/Listening on http:\/\/127\.0\.0\.1:(\d+)/)![1];
  return { base: `http://127.0.0.1:${port}/${name}`, output: () => out, waitForLog, stop };
}
