// The first platform administrator of a hosted project is made with one command, as
// docs/operations.md shows it: no SQL by hand. The command changes the flags the console reads, writes
// the platform's audit log, refuses an unknown account, and undoes itself with --revoke.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createUser, sql, testDbUrl } from "./helpers/db.ts";
import { ROOT } from "./helpers/markdown.ts";

async function run(...args: string[]) {
  const out = await new Deno.Command("npm", {
    args: ["run", "-s", "platform:superadmin", "--", ...args],
    cwd: new URL(".", ROOT).pathname,
    env: { SUPABASE_DB_URL: testDbUrl() },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const flags = async (userId: string) =>
  (await sql()<{ is_platform_admin: boolean; is_superadmin: boolean }[]>`
    select is_platform_admin, is_superadmin from public.platform_user_flags where user_id = ${userId}`)[0];

Deno.test("the documented command makes a platform superadmin, audits it, and --revoke undoes it", async () => {
  const guide = await Deno.readTextFile(new URL("docs/operations.md", ROOT));
  assertMatch(guide, /npm run platform:superadmin -- --email /, "docs/operations.md shows the command");

  const user = await createUser(`first-admin-${crypto.randomUUID()}@church.example`);
  const made = await run("--email", user.email.toUpperCase());
  assertEquals(made.code, 0, made.stderr);
  assertMatch(made.stdout, /is a platform superadmin/);
  assertEquals(await flags(user.id), { is_platform_admin: true, is_superadmin: true });
  const listed = await run("--list");
  assert(listed.stdout.includes(`${user.email}\tsuperadmin`), listed.stdout);

  const revoked = await run("--email", user.email, "--revoke");
  assertEquals(revoked.code, 0, revoked.stderr);
  assertEquals(await flags(user.id), { is_platform_admin: false, is_superadmin: false });

  const audit = await sql()<{ action: string; actor_kind: string; actor_label: string }[]>`
    select action, actor_kind, actor_label from public.audit_log
    where subject_user_id = ${user.id} order by created_at, action`;
  assertEquals(audit.map((a) => [a.action, a.actor_kind]), [
    ["superadmin.granted", "operator"],
    ["superadmin.revoked", "operator"],
  ]);
  assertMatch(audit[0]!.actor_label, /^operator \(database role \w+\)$/);

  const unknown = await run("--email", `nobody-${crypto.randomUUID()}@church.example`);
  assertEquals(unknown.code, 1);
  assertMatch(unknown.stderr, /no account has the e-mail address .* \(The person signs up first\.\)/);
  const usage = await run("--emial", user.email);
  assertEquals(usage.code, 2, "a mistyped option changes nothing");
  assertEquals(await flags(user.id), { is_platform_admin: false, is_superadmin: false });
});

Deno.test("cleanup", async () => {
  await closeSql();
});
