// `npm run dev` as a newcomer meets it: on an empty database it applies supabase/seed.sql and prints a
// curl line that signs the demo admin in, in one step; SIGTERM or SIGINT sent to npm stops it cleanly,
// with no deno left holding the port (npm run dev:receiver too); a busy port ends with one line naming PORT.
import * as jose from "jose";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { devServerArgs } from "./helpers/dev_stack.ts";
import { freePort } from "./helpers/server.ts";
import { codeBlocks } from "./helpers/markdown.ts";

const root = new URL("../", import.meta.url).pathname;
const FIRST_CHURCH = "11111111-1111-4111-8111-111111111111";

/** Collects a child's output and resolves when `pattern` shows up in it (or the child ends). */
function watch(child: Deno.ChildProcess) {
  let out = "";
  const waiters: (() => void)[] = [];
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      out += text;
      waiters.forEach((w) => w());
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const until = (pattern: RegExp, ms: number) =>
    new Promise<RegExpMatchArray | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), ms);
      const check = () => {
        const m = out.match(pattern);
        if (m) {
          clearTimeout(timer);
          resolve(m);
        }
      };
      waiters.push(check);
      check();
      child.status.then(() => {
        clearTimeout(timer);
        resolve(out.match(pattern));
      });
    });
  return { output: () => out, until, drained };
}

/** Every process below `pid` (children, grandchildren, ...). */
async function descendants(pid: number): Promise<number[]> {
  const out = await new Deno.Command("pgrep", { args: ["-P", String(pid)] }).output();
  const kids = new TextDecoder().decode(out.stdout).trim().split(/\s+/).filter(Boolean).map(Number);
  return [...kids, ...(await Promise.all(kids.map(descendants))).flat()];
}

const alive = (pid: number) => {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
};

/** A sample line as a pattern: `…` stands for any text, a loopback port for any port. */
function samplePattern(line: string): RegExp {
  const pattern = line.split("…").map((part) =>
    part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/127\\\.0\\\.0\\\.1:\d+/g, "127\\.0\\.0\\.1:\\d+")
  ).join("\\S*");
  return new RegExp(`^${pattern}$`);
}

/**
 * Where a guide's sample of what `npm run dev` prints (the block that ends with "dev server ready") and
 * `output` part: sample lines it printed nothing like ("..." and the "serving" lines stand for the
 * functions it lists), and lines of its closing summary, from `API URL:` on, that the sample leaves out.
 */
export function sampleLinesNotPrinted(markdown: string, output: string): string[] {
  const block = codeBlocks(markdown).find((b) => b.text.includes("dev server ready on"));
  if (!block) return ["no sample block ending in 'dev server ready on'"];
  const sample = block.text.split("\n").map((l) => l.trim()).filter((l) =>
    l && l !== "..." && !l.startsWith("serving ")
  );
  const printed = output.split("\n").map((l) => l.trim());
  const notPrinted = sample.filter((line) => !printed.some((p) => samplePattern(line).test(p)));
  const from = printed.findIndex((l) => l.startsWith("API URL:"));
  const to = printed.findIndex((l) => l.startsWith("dev server ready on"));
  const summary = from >= 0 && to >= from ? printed.slice(from, to + 1).filter(Boolean) : [];
  const left = summary.filter((p) => !sample.some((line) => samplePattern(line).test(p)));
  return [...notPrinted, ...left.map((l) => `left out: ${l}`)];
}

Deno.test("the sample check tells a line npm run dev does not print", () => {
  const guide = "```\nserving http://127.0.0.1:54321/functions/v1/a\n...\nanon key:  sb_publishable_…\n" +
    "Mail:        http://127.0.0.1:54324  (MailDev inbox)\ndev server ready on http://127.0.0.1:54321 (Ctrl-C stops it)\n```\n";
  const out = "serving http://127.0.0.1:9/functions/v1/b\nanon key:  sb_publishable_abc\n" +
    "dev server ready on http://127.0.0.1:9 (Ctrl-C stops it)\n";
  assertEquals(sampleLinesNotPrinted(guide, out), ["Mail:        http://127.0.0.1:54324  (MailDev inbox)"]);
  const withMail = out.replace(
    "dev server ready",
    "Mail:        http://127.0.0.1:7  (MailDev inbox)\ndev server ready",
  );
  assertEquals(sampleLinesNotPrinted(guide, withMail), []);
  // A sample that leaves out a line of the summary (the README once had no Mail line).
  const without = guide.replace(/Mail:.*\n/, "");
  assertEquals(
    sampleLinesNotPrinted(without, withMail.replace("anon key", "API URL:   http://127.0.0.1:9\nanon key")),
    [
      "left out: API URL:   http://127.0.0.1:9",
      "left out: Mail:        http://127.0.0.1:7  (MailDev inbox)",
    ],
  );
});

Deno.test("npm run dev on an empty database: demo data, a one-step curl sign-in, clean stops on SIGTERM and SIGINT", async () => {
  // An empty cluster of its own, made the way the test run makes its own.
  const major = new TextDecoder().decode(
    (await new Deno.Command("psql", { args: ["--version"] }).output()).stdout,
  )
    .match(/ (\d+)\./)![1]!;
  const spawnCluster = () =>
    new Deno.Command("pg_virtualenv", {
      args: [
        "-t",
        "-v",
        major,
        "-o",
        "shared_preload_libraries=pg_cron",
        "-o",
        "cron.database_name=postgres",
        "-o",
        "fsync=off",
        "bash",
        "-c",
        'echo "url=postgresql://postgres:${PGPASSWORD}@127.0.0.1:${PGPORT}/postgres"; read -r _',
      ],
      // Not inside the test run's own cluster settings (PGPORT, PG_CLUSTER_CONF_ROOT, ...).
      clearEnv: true,
      // UTF8, as a Supabase project's database is (organization names are normalized with normalize()).
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/tmp",
        LANG: "C.UTF-8",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  // Another run can take the same free port at the same moment (as scripts/test.sh knows): retry.
  let cluster = spawnCluster();
  let clusterOut = watch(cluster);
  let url = (await clusterOut.until(/url=(\S+)/, 60_000))?.[1];
  for (let attempt = 2; !url && attempt <= 3; attempt++) {
    await cluster.stdin.close().catch(() => {});
    await cluster.status;
    await clusterOut.drained;
    await new Promise((r) => setTimeout(r, attempt * 1000));
    cluster = spawnCluster();
    clusterOut = watch(cluster);
    url = (await clusterOut.until(/url=(\S+)/, 60_000))?.[1];
  }
  try {
    assert(url, `no throwaway cluster: ${clusterOut.output()}`);

    for (const [run, signal] of [[1, "SIGTERM"], [2, "SIGINT"]] as const) {
      const port = freePort();
      const npm = new Deno.Command("npm", {
        args: ["run", "dev"],
        cwd: root,
        // The settings UI and the mail catcher on ports of their own: their lines are part of the sample.
        env: {
          SUPABASE_DB_URL: url,
          PORT: String(port),
          WEB_PORT: String(freePort()),
          MAIL_WEB_PORT: String(freePort()),
          MAIL_SMTP_PORT: String(freePort()),
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const dev = watch(npm);
      const ready = await dev.until(/dev server ready on/, 120_000);
      assert(ready, `npm run dev did not come up:\n${dev.output()}`);
      const out = dev.output();
      assertEquals(
        out.includes("applied supabase/seed.sql"),
        run === 1,
        "the seed is applied to an empty database only",
      );
      assert(out.includes(`API URL:   http://127.0.0.1:${port}`), out);
      assertMatch(out, /anon key:\s+sb_publishable_\S+/);
      // What the README and Getting started show as its output is what it printed (the first run: the
      // seed line too).
      if (run === 1) {
        for (const guide of ["README.md", "docs/getting-started.md"]) {
          const text = await Deno.readTextFile(`${root}${guide}`);
          assertEquals(sampleLinesNotPrinted(text, out), [], `${guide}'s sample output, against:\n${out}`);
        }
      }

      // The printed curl line, run as printed.
      const curl = out.split("\n").find((l) => l.trim().startsWith("curl "))!;
      assert(curl, `no curl line printed:\n${out}`);
      const res = await new Deno.Command("bash", { args: ["-c", curl] }).output();
      const body = JSON.parse(new TextDecoder().decode(res.stdout));
      assertEquals(body.token_type, "bearer");
      assertEquals(body.user.email, "admin@firstchurch.example");
      assertEquals(jose.decodeJwt(body.access_token).organization_id, FIRST_CHURCH);

      // The signal goes to npm, not to deno: deno must still stop, and free the port.
      const children = await descendants(npm.pid);
      assert(children.length > 0, "npm runs the server below it");
      npm.kill(signal);
      const timer = setTimeout(() => npm.kill("SIGKILL"), 15_000);
      await npm.status;
      clearTimeout(timer);
      for (let i = 0; i < 50 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      const orphans = children.filter(alive);
      // An orphan would hold the port and the output pipes: end it (this test started it) before failing.
      for (const pid of orphans) Deno.kill(pid, "SIGKILL");
      await Promise.race([dev.drained, new Promise((r) => setTimeout(r, 5000))]);
      assertEquals(orphans, [], `no orphaned process after ${signal}:\n${dev.output()}`);
      const probe = Deno.listen({ hostname: "127.0.0.1", port }); // throws if anything still holds it
      probe.close();
      assert(dev.output().includes("shutting down"), dev.output());
    }
  } finally {
    await cluster.stdin.close();
    await cluster.status;
    await clusterOut.drained;
  }
});

Deno.test("npm run dev:receiver (the walkthrough's second terminal) stops on SIGTERM sent to npm and frees its port", async () => {
  const port = freePort();
  const npm = new Deno.Command("npm", {
    args: ["run", "dev:receiver", "--", "--port", String(port)],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const receiver = watch(npm);
  assert(await receiver.until(/receiving on/, 60_000), `the receiver did not come up:\n${receiver.output()}`);
  const children = await descendants(npm.pid);
  npm.kill("SIGTERM");
  const timer = setTimeout(() => npm.kill("SIGKILL"), 15_000);
  await npm.status;
  clearTimeout(timer);
  for (let i = 0; i < 50 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
  const orphans = children.filter(alive);
  for (const pid of orphans) Deno.kill(pid, "SIGKILL");
  await Promise.race([receiver.drained, new Promise((r) => setTimeout(r, 5000))]);
  assertEquals(orphans, [], `no orphaned receiver after SIGTERM:\n${receiver.output()}`);
  const probe = Deno.listen({ hostname: "127.0.0.1", port }); // throws if anything still holds it
  probe.close();
});

Deno.test("a busy port ends the dev server with one line naming PORT", async () => {
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (held.addr as Deno.NetAddr).port;
  const dir = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: devServerArgs(dir),
      cwd: root,
      env: {
        PORT: String(port),
        LOCAL_AUTH_DIR: dir,
        SUPABASE_DB_URL: "postgresql://postgres@127.0.0.1:1/postgres",
      },
    }).output();
    assertEquals(out.code, 1);
    const stderr = new TextDecoder().decode(out.stderr).trim();
    assertEquals(stderr.split("\n").length, 1, stderr);
    assertMatch(stderr, new RegExp(`port ${port} is already in use.*PORT=`));
  } finally {
    held.close();
    await Deno.remove(dir, { recursive: true });
  }
});
