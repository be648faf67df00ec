// Local development only: makes (or reuses) a user, an organization and a membership in the local
// database, and prints an access token for them that the dev server accepts, standing in for Supabase
// Auth, which does not run here.
//   npm run dev:token -- --email admin@example.org --organization "First Church" [--role admin|staff]
import * as jose from "jose";
import { LOCAL_AUTH_ISSUER } from "../supabase/functions/_shared/auth.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { devJwtSecret } from "./dev-secret.ts";

const args = new Map<string, string>();
for (let i = 0; i < Deno.args.length; i += 2) {
  args.set(Deno.args[i]!.replace(/^--/, ""), Deno.args[i + 1] ?? "");
}
const email = args.get("email") ?? "admin@example.org";
const organization = args.get("organization") ?? "First Church";
const role = args.get("role") ?? "admin";
if (!["admin", "staff"].includes(role)) throw new Error("--role must be admin or staff");

const url = Deno.env.get("SUPABASE_DB_URL") ?? "postgresql://postgres@127.0.0.1:5432/postgres";
if (!/@(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url)) {
  console.error("dev-token: refuses to touch a database that is not on this machine");
  Deno.exit(1);
}
const sql = createSql(url, { max: 1 });
try {
  const [user] = await sql<{ id: string }[]>`
    insert into auth.users (id, email, aud, role) values (gen_random_uuid(), ${email}, 'authenticated', 'authenticated')
    on conflict do nothing returning id`;
  const userId = user?.id ??
    (await sql<{ id: string }[]>`select id from auth.users where email = ${email}`)[0]!.id;
  const [org] = await sql<
    { id: string }[]
  >`select id from public.organizations where name = ${organization} limit 1`;
  const orgId = org?.id ??
    (await sql<
      { id: string }[]
    >`insert into public.organizations (name) values (${organization}) returning id`)[0]!.id;
  await sql`insert into public.profiles (user_id, organization_id, role) values (${userId}, ${orgId}, ${role})
            on conflict (user_id, organization_id) do update set role = excluded.role`;
  const token = await new jose.SignJWT({
    sub: userId,
    email,
    role: "authenticated",
    organization_id: orgId,
    is_platform_admin: false,
    is_superadmin: false,
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setIssuer(LOCAL_AUTH_ISSUER)
    .setAudience("authenticated")
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(await devJwtSecret()));
  console.error(`user ${email} (${userId}) is ${role} of "${organization}" (${orgId}); token valid 1 h:`);
  console.log(token);
} finally {
  await sql.end();
}
