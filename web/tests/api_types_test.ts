// The pages and the API cannot drift: web/src/api/schema.d.ts must be what openapi-typescript makes of
// docs/webhooks-openapi.json today (which webhooks_openapi_test.ts keeps equal to the routes), and the
// pages must type-check against it.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";

const webDir = new URL("../", import.meta.url).pathname;

async function node(args: string[]) {
  const out = await new Deno.Command("node", {
    args,
    cwd: webDir,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return { ok: out.success, text };
}

Deno.test("web/src/api/schema.d.ts is generated from the current OpenAPI document", async () => {
  const tmp = await Deno.makeTempFile({ suffix: ".d.ts" });
  try {
    const r = await node([
      "node_modules/openapi-typescript/bin/cli.js",
      "../docs/webhooks-openapi.json",
      "-o",
      tmp,
    ]);
    assert(r.ok, r.text);
    assertEquals(
      await Deno.readTextFile(`${webDir}src/api/schema.d.ts`),
      await Deno.readTextFile(tmp),
      "stale: run `npm --prefix web run gen:api` (or `npm run build`)",
    );
  } finally {
    await Deno.remove(tmp);
  }
});

Deno.test("the pages type-check against the API's types (tsc --noEmit)", async () => {
  // --incremental: tsc keeps what it learned in node_modules/.cache (never committed) and checks again
  // only what changed since, as `deno check` does with its cache; a full check costs ~13 s of CPU a run.
  await Deno.mkdir(`${webDir}node_modules/.cache`, { recursive: true });
  const r = await node([
    "node_modules/typescript/bin/tsc",
    "--noEmit",
    "--incremental",
    "--tsBuildInfoFile",
    "node_modules/.cache/tsc-pages.tsbuildinfo",
    "-p",
    ".",
  ]);
  assert(r.ok, r.text);
});
