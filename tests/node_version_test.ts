// `npm run dev` and `npm test` on a Node.js older than package.json's engines stop at once with one
// sentence (scripts/check-node.sh), before installing anything: a fake `node` first on PATH reports the
// version. Vite 8 and @redocly/cli 2 need ^20.19.0 or >= 22.12.0; on Node 20.10 they failed later, in
// a build, with errors that named neither Node nor the version.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";

const root = new URL("..", import.meta.url).pathname;

/** Runs `bash <script> ...args` with a `node` on PATH that reports `version` and does nothing else. */
async function withNode(version: string, script: string, ...args: string[]) {
  const bin = await Deno.makeTempDir({ prefix: "fake-node-" });
  try {
    // Anything else run as node (npm ci would be) records itself, so the test sees it never happened.
    await Deno.writeTextFile(
      `${bin}/node`,
      `#!/bin/sh\n[ "$1" = --version ] && { echo ${version}; exit 0; }\necho "$@" >>"${bin}/ran"\nexit 1\n`,
      { mode: 0o755 },
    );
    const out = await new Deno.Command("bash", {
      args: [script, ...args],
      cwd: root,
      clearEnv: true,
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: Deno.env.get("HOME") ?? "/root" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const d = new TextDecoder();
    const ran = await Deno.readTextFile(`${bin}/ran`).catch(() => "");
    return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr), ran };
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
}

Deno.test("package.json and web/package.json ask for the Node.js that Vite 8 and Redocly need", async () => {
  for (const file of ["package.json", "web/package.json"]) {
    const pkg = JSON.parse(await Deno.readTextFile(`${root}${file}`));
    assertEquals(pkg.engines?.node, "^20.19.0 || >=22.12.0", file);
  }
});

Deno.test("npm run dev and npm test on Node 20.10 stop with one sentence, before installing anything", async () => {
  for (const [script, what] of [["scripts/dev.sh", "npm run dev"], ["scripts/test.sh", "npm test"]]) {
    const out = await withNode("v20.10.0", script!, ...(what === "npm test" ? ["tests/none_test.ts"] : []));
    assertEquals(out.code, 1, `${script}: ${out.stdout}${out.stderr}`);
    assertEquals(out.stdout, "", `${script} printed nothing else`);
    const lines = out.stderr.trimEnd().split("\n");
    assertEquals(lines.length, 1, out.stderr);
    assertMatch(
      lines[0]!,
      new RegExp(
        `^${what} needs Node\\.js \\^20\\.19\\.0 or >= 22\\.12\\.0, but the node on PATH is v20\\.10\\.0: install Node\\.js 22 LTS \\(or 20\\.19\\+\\) and run it again\\.$`,
      ),
    );
    assertEquals(out.ran, "", `${script} ran nothing with the old node`);
  }
});

Deno.test("the check lets through exactly the versions the engines field names", async () => {
  const verdicts: Record<string, boolean> = {
    "v18.20.4": false,
    "v20.10.0": false,
    "v20.18.3": false,
    "v20.19.0": true,
    "v20.20.2": true,
    "v21.7.3": false,
    "v22.11.0": false,
    "v22.12.0": true,
    "v24.3.0": true,
    "v100.0.0": true,
  };
  for (const [version, ok] of Object.entries(verdicts)) {
    const out = await withNode(version, "scripts/check-node.sh", "npm run dev");
    assertEquals(out.code === 0, ok, `${version}: ${out.stderr}`);
    assert(ok ? out.stderr === "" : out.stderr.includes(version), out.stderr);
  }
});
