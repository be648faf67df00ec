// `npm run dev:user`: one user per e-mail however often it runs, usage (and no change) for --help or a
// mistyped flag, and a user the local token service signs in.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, sql, testDbUrl } from "./helpers/db.ts";

const root = new URL("../", import.meta.url).pathname;

async function devUser(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "scripts/dev-user.ts", ...args],
    cwd: root,
    env: { SUPABASE_DB_URL: testDbUrl() },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

const usersNamed = async (email: string) =>
  (await sql()<{ n: number }[]>`select count(*)::int as n from auth.users where lower(email) = ${email}`)[0]!
    .n;

Deno.test("dev:user is idempotent by e-mail and keeps the latest password and role", async () => {
  const email = `dev-${crypto.randomUUID().slice(0, 8)}@example.org`;
  const org = `Dev Church ${crypto.randomUUID().slice(0, 6)}`;
  const first = await devUser(
    "--email",
    email,
    "--password",
    "first-pass",
    "--organization",
    org,
    "--role",
    "admin",
  );
  assertEquals(first.code, 0, first.stderr);
  assertMatch(first.stdout, /^added /);
  const again = await devUser(
    "--email",
    email.toUpperCase(),
    "--password",
    "second-pass",
    "--organization",
    org,
    "--role",
    "staff",
  );
  assertEquals(again.code, 0, again.stderr);
  assertMatch(again.stdout, /^updated /);
  assertEquals(await usersNamed(email), 1, "one auth.users row however often it runs");
  const [row] = await sql()`
    select u.encrypted_password = extensions.crypt('second-pass', u.encrypted_password) as pass, p.role,
           u.instance_id::text, u.email_confirmed_at is not null as confirmed, u.aud
    from auth.users u join public.profiles p on p.user_id = u.id join public.organizations o on o.id = p.organization_id
    where u.email = ${email} and o.name = ${org}`;
  assertEquals(row, {
    pass: true,
    role: "staff",
    instance_id: "00000000-0000-0000-0000-000000000000",
    confirmed: true,
    aud: "authenticated",
  });
  const [orgs] = await sql()`select count(*)::int as n from public.organizations where name = ${org}`;
  assertEquals(orgs!.n, 1, "the organization is reused by name");
});

Deno.test("dev:user --help and unknown or missing options print usage and change nothing", async () => {
  const email = `nobody-${crypto.randomUUID().slice(0, 8)}@example.org`;
  const help = await devUser("--help", "--email", email, "--password", "whatever");
  assertEquals(help.code, 0);
  assertMatch(help.stdout, /^Usage: npm run dev:user/);
  for (
    const args of [
      ["--email", email, "--password", "whatever", "--organisation", "Typo Church"],
      ["--email", email, "--password", "whatever", "--organization", "X", "--role", "owner"],
      ["--email", email],
      ["--email", email, "--password", "whatever", "stray"],
    ]
  ) {
    const r = await devUser(...args);
    assertEquals(r.code, 2, args.join(" "));
    assert(r.stderr.includes("Usage: npm run dev:user"), r.stderr);
  }
  assertEquals(await usersNamed(email), 0, "nothing was created");
});

Deno.test("dev:user refuses a database that is not on this machine", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "scripts/dev-user.ts",
      "--email",
      "a@b.c",
      "--password",
      "secret1",
    ],
    cwd: root,
    env: { SUPABASE_DB_URL: "postgresql://postgres@db.example.org:5432/postgres" },
    stderr: "piped",
  }).output();
  assertEquals(out.code, 1);
  // Refused for that reason, before any connection (not a failed connection to the remote host).
  const stderr = new TextDecoder().decode(out.stderr);
  assert(stderr.includes("refuses to touch a database that is not on this machine"), stderr);
});

Deno.test("cleanup", async () => {
  await closeSql();
});
