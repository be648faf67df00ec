// Faults for the test run's throwaway PostgreSQL cluster (made by pg_virtualenv in scripts/test.sh):
// stopping and starting it for real, and killing the backends of one application.
import { sql } from "../helpers/db.ts";

export interface Cluster {
  version: string;
  name: string;
  port: string;
}

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  const res = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { ok: res.success, out: dec.decode(res.stdout) + dec.decode(res.stderr) };
}

/** The cluster TEST_DATABASE_URL points at, when pg_ctlcluster can manage it (inside pg_virtualenv). */
export async function testCluster(): Promise<Cluster | null> {
  const port = new URL(Deno.env.get("TEST_DATABASE_URL") ?? "postgres://x@127.0.0.1:0/x").port;
  if (!Deno.env.get("PG_CLUSTER_CONF_ROOT")) return null;
  try {
    const { ok, out } = await run("pg_lsclusters", ["-h"]);
    if (!ok) return null;
    for (const line of out.split("\n")) {
      const [version, name, clusterPort] = line.trim().split(/\s+/);
      if (version && name && clusterPort === port) return { version, name, port };
    }
  } catch { /* pg_lsclusters not installed */ }
  return null;
}

/** Stops the cluster (fast shutdown: clients are disconnected, committed work is flushed). */
export async function stopCluster(c: Cluster): Promise<void> {
  const { ok, out } = await run("pg_ctlcluster", [c.version, c.name, "stop", "-m", "fast"]);
  if (!ok) throw new Error(`pg_ctlcluster stop failed: ${out}`);
}

/** Starts the cluster; on a loaded machine a start can time out, so it is tried up to three times. */
export async function startCluster(c: Cluster): Promise<void> {
  let last = "";
  for (let attempt = 1; attempt <= 3; attempt++) {
    const { ok, out } = await run("pg_ctlcluster", [c.version, c.name, "start"]);
    if (ok || /already running/i.test(out)) return;
    last = out;
    await new Promise((r) => setTimeout(r, 1000 * attempt));
  }
  throw new Error(`pg_ctlcluster start failed: ${last}`);
}

/** Makes sure the cluster runs again (for the tests that follow), whatever happened before. */
export async function ensureClusterRunning(c: Cluster): Promise<void> {
  const { out } = await run("pg_lsclusters", ["-h"]);
  const line = out.split("\n").find((l) => l.trim().split(/\s+/)[2] === c.port);
  if (!line || !/online/.test(line)) await startCluster(c);
}

/** Terminates every backend of `applicationName`; returns how many were killed. */
export async function terminateBackends(applicationName: string): Promise<number> {
  const rows = await sql()<{ killed: boolean }[]>`
    select pg_terminate_backend(pid) as killed from pg_stat_activity
    where application_name = ${applicationName} and pid <> pg_backend_pid()`;
  return rows.filter((r) => r.killed).length;
}
