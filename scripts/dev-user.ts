// Local development only: adds or updates one user of the local token service (idempotent by e-mail),
// and their membership of an organization (created by name when missing). Sign in with it afterwards:
//   npm run dev:user -- --email you@example.org --password 'secret' --organization "First Church" --role admin
import { parseArgs } from "node:util";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { upsertDevUser } from "./local-auth/users.ts";

const USAGE =
  `Usage: npm run dev:user -- --email EMAIL --password PASSWORD [--organization NAME] [--role admin|staff]

Adds (or updates, by e-mail) a user of the local stack's sign-in, with a bcrypt password and a confirmed
e-mail, and makes them a member of the organization NAME (created when no organization has that name)
with the given role (default: staff). Changes nothing when an option is unknown or missing.
Database: SUPABASE_DB_URL (default postgresql://postgres@127.0.0.1:5432/postgres); only a local one.`;

function usage(message?: string): never {
  if (message) console.error(`dev:user: ${message}\n`);
  (message ? console.error : console.log)(USAGE);
  Deno.exit(message ? 2 : 0);
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    args: Deno.args,
    strict: true,
    allowPositionals: false,
    options: {
      email: { type: "string" },
      password: { type: "string" },
      organization: { type: "string" },
      role: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  usage((err as Error).message);
}
if (values.help) usage();
const email = String(values.email ?? "").trim();
const password = String(values.password ?? "");
const organization = values.organization === undefined ? undefined : String(values.organization).trim();
const role = String(values.role ?? "staff");
if (!/^[^@\s]+@[^@\s]+$/.test(email)) usage("--email is required (an e-mail address)");
if (password.length < 6) usage("--password is required (at least 6 characters, as config.toml asks)");
if (organization === "") usage("--organization needs a name");
if (role !== "admin" && role !== "staff") usage("--role must be admin or staff");
if (values.role !== undefined && organization === undefined) usage("--role needs --organization");

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
