// Local development only: adds or updates one user of the local token service (idempotent by e-mail),
// and their membership of an organization (created by name when missing). Sign in with it afterwards:
//   npm run dev:user -- --email you@example.org --password 'secret' --organization "First Church" --role admin
import { parseCli } from "./cli.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { upsertDevUser } from "./local-auth/users.ts";

const USAGE =
  `Usage: npm run dev:user -- --email EMAIL --password PASSWORD [--organization NAME] [--role admin|staff]

Adds (or updates, by e-mail) a user of the local stack's sign-in, with a bcrypt password and a confirmed
e-mail, and makes them a member of the organization NAME (created when no organization has that name)
with the given role (default: staff). Changes nothing when an option is unknown or missing.
Database: SUPABASE_DB_URL (default postgresql://postgres@127.0.0.1:5432/postgres); only a local one.`;

const cli = parseCli("dev:user", USAGE, ["email", "password", "organization", "role"]);
const email = (cli.get("email") ?? "").trim();
const password = cli.get("password") ?? "";
const organization = cli.get("organization")?.trim();
const role = cli.get("role") ?? "staff";
if (!/^[^@\s]+@[^@\s]+$/.test(email)) cli.fail("--email is required (an e-mail address)");
if (password.length < 6) cli.fail("--password is required (at least 6 characters, as config.toml asks)");
if (organization === "") cli.fail("--organization needs a name");
if (role !== "admin" && role !== "staff") cli.fail("--role must be admin or staff");
if (cli.get("role") !== undefined && organization === undefined) cli.fail("--role needs --organization");

const url = Deno.env.get("SUPABASE_DB_URL") ?? "postgresql://postgres@127.0.0.1:5432/postgres";
if (!/@(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url)) {
  console.error("dev:user: refuses to touch a database that is not on this machine");
  Deno.exit(1);
}
const sql = createSql(url, { max: 1 });
try {
  const user = await upsertDevUser(sql, { email, password, organization, role: role as "admin" | "staff" });
  console.log(
    `${user.created ? "added" : "updated"} ${user.email} (${user.userId})` +
      (organization ? `: ${role} of "${organization}" (${user.organizationId})` : ""),
  );
} catch (err) {
  console.error(`dev:user: ${(err as Error).message}`);
  Deno.exitCode = 1;
} finally {
  await sql.end();
}
