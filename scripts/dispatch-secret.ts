// Writes the dispatcher's bearer secret (WEBHOOK_DISPATCH_SECRET), and the project URL where
// SUPABASE_PROJECT_URL is set, into the hosted project's Vault, where pg_cron's and the wake-ups' requests
// read them: how a new secret reaches Vault after the first deploy, since `supabase db push` writes
// [db.vault] only while it has a migration to apply ("Remote database is up to date" writes nothing).
// Through private.set_dispatch_secret(); the secret is sent as a parameter, never printed or in SQL text.
//   WEBHOOK_DISPATCH_SECRET=... SUPABASE_DB_URL='postgresql://...' npm run dispatch:secret
// See docs/operations.md#changing-the-dispatch-secret
import { parseCli } from "./cli.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";

const USAGE = `Usage: npm run dispatch:secret

Writes WEBHOOK_DISPATCH_SECRET (at least 32 characters) into Vault as webhook_dispatch_secret, and
SUPABASE_PROJECT_URL, where set, as project_url: the next request pg_net sends to the dispatcher and the
mail sender carries them. Give the functions the same secret (npx supabase secrets set
WEBHOOK_DISPATCH_SECRET=...): until both agree their calls answer 401.
Database: SUPABASE_DB_URL (default postgresql://postgres@127.0.0.1:5432/postgres), as the role that ran
the migrations (postgres).`;

const cli = parseCli("dispatch:secret", USAGE, []);
const secret = Deno.env.get("WEBHOOK_DISPATCH_SECRET") ?? "";
const projectUrl = Deno.env.get("SUPABASE_PROJECT_URL") || null;
if (secret.length < 32) {
  cli.fail("WEBHOOK_DISPATCH_SECRET must be set, at least 32 characters (openssl rand -hex 32)");
}

const sql = createSql(Deno.env.get("SUPABASE_DB_URL") ?? "postgresql://postgres@127.0.0.1:5432/postgres", {
  max: 1,
});
try {
  await sql`select private.set_dispatch_secret(${secret}, ${projectUrl})`;
  const [row] = await sql<{ updated_at: Date }[]>`
    select updated_at from vault.secrets where name = 'webhook_dispatch_secret'`;
  console.log(
    `Vault: webhook_dispatch_secret${projectUrl ? " and project_url" : ""} set at ${
      row!.updated_at.toISOString()
    }; the next dispatcher request carries it`,
  );
} catch (err) {
  const e = err as { message?: string; code?: string };
  const hint = e.code === "42883" || e.code === "3F000"
    ? " (are the migrations applied to this database?)"
    : "";
  console.error(`dispatch:secret: ${e.message ?? String(err)}${hint}`);
  Deno.exitCode = 1;
} finally {
  await sql.end();
}
