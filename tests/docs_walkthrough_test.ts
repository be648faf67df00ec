// The curl walkthrough of docs/getting-started.md must run as written: the block between its
// walkthrough markers is run by bash against the real dev server (scripts/dev.ts on a free port, on
// the run's database with the demo data of supabase/seed.sql), and a newcomer's outcome is checked:
// a signed delivery verified by the receiver, recorded as delivered, and cleaned up afterwards.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { markedBlock, ROOT } from "./helpers/markdown.ts";
import { startDevStack } from "./helpers/dev_stack.ts";
import { closeSql, sql, testDbUrl } from "./helpers/db.ts";
import { freePort } from "./helpers/server.ts";

const FIRST_CHURCH = "11111111-1111-4111-8111-111111111111";

/** The demo data `npm run dev` loads into an empty database, loaded here unless it is there already. */
async function ensureDemoData(): Promise<void> {
  const [row] = await sql()<{ n: number }[]>`select count(*)::int as n from public.organizations
    where id = ${FIRST_CHURCH}`;
  if (row!.n > 0) return;
  const out = await new Deno.Command("psql", {
    args: [
      testDbUrl(),
      "-X",
      "-q",
      "-v",
      "ON_ERROR_STOP=1",
      "--single-transaction",
      "-f",
      "supabase/seed.sql",
    ],
    cwd: ROOT.pathname,
    env: { PGOPTIONS: "-c client_min_messages=warning" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
}

Deno.test("the getting-started curl walkthrough runs as written against the dev server", async () => {
  const block = markedBlock(await Deno.readTextFile(new URL("docs/getting-started.md", ROOT)), "walkthrough");
  await ensureDemoData();
  const stack = await startDevStack();
  const receiverPort = freePort();
  try {
    const port = new URL(stack.url).port;
    const out = await new Deno.Command("bash", {
      // The walkthrough's own commands, plus what a test needs: stop at the first failing command, and
      // never leave the background receiver running, whatever happens.
      args: ["-c", `set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n${block}`],
      cwd: ROOT.pathname,
      env: {
        PORT: port,
        SUPABASE_DB_URL: testDbUrl(),
        RECEIVER_PORT: String(receiverPort),
        LOCAL_AUTH_DIR: stack.keysDir, // where this dev server keeps the anon key dev:token reads
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(180_000),
    }).output();
    const d = new TextDecoder();
    const text = d.decode(out.stdout) + d.decode(out.stderr);
    assertEquals(out.code, 0, `the walkthrough failed:\n${text}\n--- dev server:\n${stack.output()}`);

    // The receiver checked the signature with the secret the API showed once, and answered 200.
    assertMatch(text, /POST \/church member\.created id=\S+ signature ok -> 200/);
    assertMatch(text, /POST \/church webhook\.test id=\S+ signature ok -> 200/);
    assert(!text.includes("SIGNATURE MISMATCH"), text);
    // Webhook Logs showed it delivered, with its attempt; the clean-up deleted the endpoint.
    assertMatch(text, /"status":"delivered"/);
    assertMatch(text, /"attempts":\[\{/);
    assertMatch(d.decode(out.stdout).trim(), /204$/, "the endpoint is deleted: 204, printed last");
    const left = await sql()<{ n: number }[]>`select count(*)::int as n from public.webhook_endpoints
      where organization_id = ${FIRST_CHURCH} and url = ${`http://127.0.0.1:${receiverPort}/church`}`;
    assertEquals(left[0]!.n, 0, "the walkthrough deletes its endpoint");
    const probe = Deno.listen({ hostname: "127.0.0.1", port: receiverPort }); // the receiver is gone
    probe.close();
  } finally {
    await stack.stop();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
