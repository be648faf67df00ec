// A function served in its own process, as deployed (scripts/bench/serve_function.ts), so a fault that
// would kill or wedge the process shows up as exactly that, and its logs can be counted.
import { testDbUrl } from "../helpers/db.ts";

export interface ChildServer {
  base: string;
  logFile: string;
  /** Everything the process wrote to stderr so far (its JSON log lines). */
  logs(): string;
  alive(): boolean;
  exitCode(): number | null;
  stop(): Promise<void>;
}

export async function spawnFunction(name: string, env: Record<string, string> = {}): Promise<ChildServer> {
  const script = new URL("../../scripts/bench/serve_function.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--no-check", script, name],
    env: { SUPABASE_DB_URL: testDbUrl(), NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  let stderr = "";
  const dec = new TextDecoder();
  // Also on disk, so a run that hangs can be looked at from outside while it hangs.
  const logFile = await Deno.makeTempFile({ prefix: `${name}-`, suffix: ".log" });
  const file = await Deno.open(logFile, { write: true, append: true });
  const drainErr = (async () => {
    for await (const chunk of child.stderr) {
      stderr += dec.decode(chunk, { stream: true });
      await file.write(chunk);
    }
    file.close();
  })();
  const reader = child.stdout.getReader();
  let stdout = "";
  let base: string | undefined;
  const deadline = Date.now() + 30_000;
  while (!base) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`${name} did not start: ${stdout}${stderr}`);
    stdout += dec.decode(value, { stream: true });
    base = stdout.match(/serving (http:\/\/\S+)/)?.[1];
  }
  const drainOut = (async () => {
    for (;;) if ((await reader.read()).done) break;
  })();
  let exitCode: number | null = null;
  status.then((s) => (exitCode = s.code));
  return {
    base,
    logFile,
    exitCode: () => exitCode,
    logs: () => stderr,
    alive: () => !exited,
    stop: async () => {
      // A process that was still running did not crash: its log is not worth keeping.
      const healthy = !exited;
      if (!exited) child.kill("SIGINT");
      const timer = setTimeout(() => !exited && child.kill("SIGKILL"), 10_000);
      await status;
      clearTimeout(timer);
      await Promise.all([drainErr, drainOut]);
      if (healthy) await Deno.remove(logFile).catch(() => {});
    },
  };
}
