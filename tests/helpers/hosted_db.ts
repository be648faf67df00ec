// A database prepared as a hosted Supabase project's is, for a test: a throwaway PostgreSQL cluster of
// its own (pg_virtualenv, as scripts/test.sh makes the run's), pg_cron preloaded and the project's
// database `postgres`, where Supabase's setup has been played by the superuser `supabase_admin`
// (tests/helpers/hosted_platform.sql) and `postgres` is then NOT a superuser. Nothing of ours is in it:
// what a deploy does is left to the test. The cluster is dropped by close() (and by pg_virtualenv if the
// test process dies).
export interface HostedDb {
  /** As `postgres`, not a superuser: what `db push`, the functions (SUPABASE_DB_URL) and operators use. */
  url: string;
  /** As the superuser `supabase_admin`: what Supabase's own services (Auth, the platform) use. */
  adminUrl: string;
  port: number;
  /** Runs SQL as supabase_admin through psql; its output. */
  psqlAdmin(sql: string): Promise<string>;
  close(): Promise<void>;
}

const root = new URL("../../", import.meta.url).pathname;

/** pg_virtualenv keeps the cluster for as long as its command runs: this one waits for stdin to close. */
const HOLD = `
set -euo pipefail
psql -X -q -v ON_ERROR_STOP=1 -c "create role supabase_admin superuser login password '$PGPASSWORD'"
PGUSER=supabase_admin psql -X -q -v ON_ERROR_STOP=1 -f tests/helpers/hosted_platform.sql >/dev/null
echo "HOSTED_DB_READY $PGPORT $PGPASSWORD"
cat >/dev/null
`;

export async function startHostedDb(): Promise<HostedDb> {
  const major = (await run("psql", ["--version"])).match(/ (\d+)\./)?.[1] ?? "15";
  let lastOutput = "";
  // Creating a cluster can lose a race for a free port with another run: try again, as scripts/test.sh does.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const child = new Deno.Command("pg_virtualenv", {
      args: [
        "-t",
        "-v",
        major,
        "-o",
        "shared_preload_libraries=pg_cron",
        "-o",
        "cron.database_name=postgres",
        // pg_cron's own connections would need the cluster's password; background workers do not.
        "-o",
        "cron.use_background_workers=on",
        "-o",
        "max_worker_processes=16",
        "-o",
        "fsync=off",
        "bash",
        "-c",
        HOLD,
      ],
      cwd: root,
      // Nothing of the test run's own cluster (PGHOST, PGPORT, PG_CLUSTER_CONF_ROOT...) leaks in.
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/root",
        // A Supabase project's database is UTF8 (organization names are normalized with normalize()).
        LANG: "C.UTF-8",
        PGOPTIONS: "-c client_min_messages=warning",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let out = "";
    const reader = (async () => {
      const decoder = new TextDecoderStream();
      const merged = child.stdout.pipeThrough(decoder);
      for await (const text of merged) out += text;
    })();
    const errReader = (async () => {
      for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) out += text;
    })();
    const ready = await new Promise<RegExpMatchArray | null>((resolve) => {
      const timer = setInterval(() => {
        const m = out.match(/HOSTED_DB_READY (\d+) (\S+)/);
        if (m) {
          clearInterval(timer);
          resolve(m);
        }
      }, 50);
      child.status.then(() => {
        clearInterval(timer);
        resolve(out.match(/HOSTED_DB_READY (\d+) (\S+)/));
      });
    });
    if (!ready) {
      await child.stdin.close().catch(() => {});
      await child.status;
      await Promise.all([reader, errReader]);
      lastOutput = out;
      await new Promise((r) => setTimeout(r, attempt * 1000));
      continue;
    }
    const port = Number(ready[1]);
    const password = ready[2]!;
    const url = `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`;
    const adminUrl = `postgresql://supabase_admin:${password}@127.0.0.1:${port}/postgres`;
    return {
      url,
      adminUrl,
      port,
      psqlAdmin: (sql) => run("psql", [adminUrl, "-X", "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql]),
      close: async () => {
        await child.stdin.close().catch(() => {});
        await child.status;
        await Promise.all([reader, errReader]);
      },
    };
  }
  throw new Error(`could not start a hosted-like cluster:\n${lastOutput}`);
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const d = new TextDecoder();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${d.decode(out.stderr)}`);
  return d.decode(out.stdout);
}
