// db-bootstrap ends by logging in as edge_user the way the functions will (the password the migrations
// stored): where that cannot work, it says so in one line instead of "ready". Played on a cluster of its
// own (tests/helpers/hosted_db.ts), bootstrapped through its superuser, where edge_user exists before the
// migrations with a password that expired long ago, so its login is refused whatever the password.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { ROOT } from "./helpers/markdown.ts";
import { startHostedDb } from "./helpers/hosted_db.ts";

async function bootstrap(url: string) {
  const out = await new Deno.Command("bash", {
    args: ["scripts/db-bootstrap.sh", url],
    cwd: ROOT.pathname,
    env: { PGPASSWORD: "" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, text: d.decode(out.stdout) + d.decode(out.stderr) };
}

Deno.test({
  name: "db-bootstrap checks that edge_user can log in, and says why not in one line",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const db = await startHostedDb();
    try {
      await db.psqlAdmin("create role edge_user nologin noinherit valid until '2000-01-01'");
      const refused = await bootstrap(db.adminUrl);
      assertEquals(refused.code, 1, refused.text);
      assertMatch(
        refused.text,
        /db-bootstrap: edge_user \(the configuration API's user-request pool\) cannot log in to postgresql:\/\/supabase_admin:\*\*\*@.*: .*password authentication failed for user "edge_user"; allow it in pg_hba\.conf/,
      );
      assert(!/is ready/.test(refused.text), "not ready");
      // (That it says ready where the login works, every test run's own bootstrap shows.)
    } finally {
      await db.close();
    }
  },
});
