// The first administrator of a hosted project, and every superadmin after: makes the account with this
// e-mail a platform superadmin (and platform administrator), or with --revoke takes that away, through
// private.operator_set_superadmin(), which also writes the platform's audit log. Run by whoever holds
// the database connection; no user role can do this.
//   SUPABASE_DB_URL='postgresql://...' npm run platform:superadmin -- --email you@example.org
// See docs/platform-console.md#the-first-platform-administrator
import { parseCli } from "./cli.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";

const USAGE = `Usage: npm run platform:superadmin -- --email EMAIL [--revoke]
       npm run platform:superadmin -- --list

Makes the account with the e-mail address EMAIL a platform superadmin: it may then open the Platform
console in the settings area, suspend and resume organizations, and grant platform admin to others.
--revoke takes both rights away. --list prints the platform administrators. The account must exist
(the person signs up first). Every change is written to the platform's audit log.
Database: SUPABASE_DB_URL (default postgresql://postgres@127.0.0.1:5432/postgres), as the role that ran
the migrations (postgres).`;

const cli = parseCli("platform:superadmin", USAGE, ["email"], ["revoke", "list"]);
const email = cli.get("email")?.trim();
if (cli.flag("list")) {
  if (email !== undefined || cli.flag("revoke")) cli.fail("--list takes no other option");
} else if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) {
  cli.fail("--email is required (the e-mail address of the person's account)");
}

const sql = createSql(Deno.env.get("SUPABASE_DB_URL") ?? "postgresql://postgres@127.0.0.1:5432/postgres", {
  max: 1,
});
try {
  if (cli.flag("list")) {
    const rows = await sql<{ email: string; is_superadmin: boolean; updated_at: Date }[]>`
      select u.email, f.is_superadmin, f.updated_at
      from public.platform_user_flags f join auth.users u on u.id = f.user_id
      where f.is_platform_admin or f.is_superadmin
      order by f.is_superadmin desc, lower(u.email)`;
    if (rows.length === 0) console.log("no platform administrators");
    for (const r of rows) {
      console.log(
        `${r.email}\t${
          r.is_superadmin ? "superadmin" : "platform admin"
        }\tsince ${r.updated_at.toISOString()}`,
      );
    }
  } else {
    const revoke = cli.flag("revoke");
    const [row] = await sql<
      { id: string }[]
    >`select private.operator_set_superadmin(${email!}, ${revoke}) as id`;
    console.log(
      revoke
        ? `${email} (${row!.id}) is no longer a platform superadmin or administrator`
        : `${email} (${row!.id}) is a platform superadmin: sign in again (or wait for the next token ` +
          `refresh) and open the Platform console in the settings area`,
    );
  }
} catch (err) {
  const e = err as { message?: string; detail?: string; code?: string };
  const hint = e.code === "42883" || e.code === "3F000"
    ? " (are the migrations applied to this database?)"
    : e.detail
    ? ` (${e.detail})`
    : "";
  console.error(`platform:superadmin: ${e.message ?? String(err)}${hint}`);
  Deno.exitCode = 1;
} finally {
  await sql.end();
}
