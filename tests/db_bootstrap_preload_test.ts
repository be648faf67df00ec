// A cluster that has pg_cron installed but does not preload it: db-bootstrap stops with one line whose
// command works as printed. Its psql part, run as printed on the cluster's host (as root, here), adds
// pg_cron to what the cluster preloads already (pg_stat_statements) instead of replacing it; before, the
// line said `psql -c ...` as root, which connects as a role `root` that does not exist, and set the
// list to pg_cron alone. The restart it names (pg_ctlcluster) is Debian's and not run here.
import { assertEquals, assertMatch } from "./helpers/assert.ts";

const root = new URL("..", import.meta.url).pathname;

const SCRIPT = `
set -uo pipefail
url="postgresql://postgres:$PGPASSWORD@127.0.0.1:$PGPORT/postgres"
# Not found by pg_lsclusters, as a cluster of another host or another layout is not: db-bootstrap cannot
# restart it itself, so it says what to run.
said=$(env -u PG_CLUSTER_CONF_ROOT bash scripts/db-bootstrap.sh "$url" 2>&1 >/dev/null)
echo "SAID: $said"
command=\${said#*on its host run: }
eval "\${command%% && *}" >/dev/null
echo "PRELOAD: $(psql -XAtc "select setting from pg_file_settings where name = 'shared_preload_libraries' and applied is not null order by seqno desc limit 1")"
`;

Deno.test("db-bootstrap's command for pg_cron not preloaded works as printed and keeps what is preloaded", async () => {
  const major = new TextDecoder().decode(
    (await new Deno.Command("psql", { args: ["--version"], stdout: "piped" }).output()).stdout,
  ).match(/ (\d+)\./)?.[1] ?? "15";
  const out = await new Deno.Command("pg_virtualenv", {
    args: ["-t", "-v", major, "-o", "shared_preload_libraries=pg_stat_statements", "bash", "-c", SCRIPT],
    cwd: root,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: Deno.env.get("HOME") ?? "/root" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const said = text.match(/^SAID: (.*)$/m)?.[1] ?? "";
  assertMatch(
    said,
    /^db-bootstrap: pg_cron is not preloaded on \S+; on its host run: (runuser -u postgres --|sudo -u postgres) psql -p \d+ -c "alter system set shared_preload_libraries = 'pg_stat_statements,pg_cron'" && (sudo )?pg_ctlcluster \d+ \S+ restart$/,
    text,
  );
  assertEquals(text.match(/^PRELOAD: (.*)$/m)?.[1]?.replaceAll('"', ""), "pg_stat_statements,pg_cron", text);
});
