// scripts/test.sh's count cannot lie: it runs a stand-in cluster runner (TEST_CLUSTER_RUNNER) that
// misbehaves as a real one can, and the run must fail, or show what was skipped, accordingly.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";

const root = new URL("..", import.meta.url).pathname;

/** Runs test.sh with a runner whose body is `script` (bash; $1 is the results folder). */
async function runWith(script: string, ...args: string[]): Promise<{ code: number; lines: string[] }> {
  const runner = await Deno.makeTempFile({ suffix: ".sh" });
  try {
    await Deno.writeTextFile(runner, `set -u\nresults=$1\n${script}\n`);
    const out = await new Deno.Command("bash", {
      args: ["scripts/test.sh", "--no-static", ...args],
      cwd: root,
      // Not this run's cluster settings (PGPORT and the like): the run makes its own cluster.
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH")!,
        HOME: Deno.env.get("HOME") ?? "/root",
        TEST_CLUSTER_RUNNER: runner,
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(out.stdout).trimEnd().split("\n");
    return { code: out.code, lines };
  } finally {
    await Deno.remove(runner);
  }
}

Deno.test("a runner that dies after bootstrap fails the run", async () => {
  const { code, lines } = await runWith(
    `echo "bootstrap 1 0" >>"$results/counts"; echo "pgtap 3 0 0" >>"$results/counts"; exit 1`,
    "tests/some_test.ts",
    "supabase/tests/x.test.sql",
  );
  assert(code !== 0, "exit code");
  assertMatch(lines.at(-1)!, /^\d+ passed, [1-9]\d* failed$/);
  assert(lines.some((l) => /cluster runner: exited 1/.test(l)), lines.join("\n"));
  assert(lines.some((l) => /deno-test: did not report/.test(l)), lines.join("\n"));
});

Deno.test("a suite that never reports fails the run even when the runner ends well", async () => {
  const { code, lines } = await runWith(
    `echo "bootstrap 1 0" >>"$results/counts"; echo "deno-test 5 0 0" >>"$results/counts"`,
    "tests/some_test.ts",
    "supabase/tests/x.test.sql",
  );
  assert(code !== 0, "exit code");
  // pgTAP's pass on the fresh database and its two on the hosted-like one.
  assertEquals(lines.at(-1), "6 passed, 3 failed");
  for (const suite of ["pgtap", "pgtap-hosted", "pgtap-hosted-again"]) {
    assert(lines.some((l) => new RegExp(`^\\s+${suite}: did not report`).test(l)), lines.join("\n"));
  }
});

Deno.test("each suite's row gives its time, and the run its wall time", async () => {
  const { code, lines } = await runWith(
    `echo "bootstrap 1 0 0 4" >>"$results/counts"; echo "deno-test 5 0 0 93" >>"$results/counts"`,
    "tests/some_test.ts",
  );
  assertEquals(code, 0);
  assertEquals(lines.at(-1), "6 passed, 0 failed");
  assert(lines.some((l) => /deno-test\s+5 passed\s+0 failed\s+0 skipped\s+93 s$/.test(l)), lines.join("\n"));
  assert(lines.some((l) => /^\s+wall time \d+ s/.test(l)), lines.join("\n"));
});

Deno.test("skipped and ignored tests are shown, not counted as passed", async () => {
  const { code, lines } = await runWith(
    `echo "bootstrap 1 0" >>"$results/counts"; echo "deno-test 5 0 2" >>"$results/counts"
     echo "deno-test ignored: the pg_net test" >>"$results/notes"`,
    "tests/some_test.ts",
  );
  assertEquals(code, 0);
  assertEquals(lines.at(-1), "6 passed, 0 failed");
  assert(lines.some((l) => /deno-test\s+5 passed\s+0 failed\s+2 skipped/.test(l)), lines.join("\n"));
  assert(lines.some((l) => /deno-test ignored: the pg_net test/.test(l)), lines.join("\n"));
});
