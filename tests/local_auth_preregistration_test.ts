// Pre-registration of someone's address, as reported: with confirmations on (the production setting),
// an attacker signs up pastor@… with a password of their choosing; the real person later signs up,
// confirms from the mail and is signed in, but the attacker's password still works. Supabase Auth does
// the same (an unconfirmed account keeps its first password: signup.go), and the local sign-in follows
// it exactly, both with confirmations on and off. What this service can do: an invitation to an address
// whose account existed unconfirmed when the invitation went out is accepted only after the invitee sets
// a new password, which ends every other session of the account (the attacker's among them).
import { assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { authCall, type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { type CaughtMail, type SmtpServer, startSmtpServer } from "./helpers/smtp_server.ts";

const ATTACKERS = "the attacker's password";
const OWNERS = "the pastor's own password";

const signUp = (s: DevStack, email: string, password: string) =>
  authCall(s, "/signup", { json: { email, password } });
const signIn = (s: DevStack, email: string, password: string) =>
  authCall(s, "/token?grant_type=password", { json: { email, password } });

async function api(s: DevStack, path: string, token: string, json: unknown) {
  const res = await fetch(`${s.url}/functions/v1/webhooks${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(json),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * The code of the newest confirmation mail to `to` after `seen` mails to it. Other mail to the same
 * address (the invitation, sent by the mail job in its own time) may arrive in between: skipped.
 */
async function codeFor(mail: SmtpServer, to: string, seen: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mine: CaughtMail[] = mail.messages.filter((m) => m.to.includes(to));
    const code = mine.slice(seen).reverse().map((m) => /<strong>(\d+)<\/strong>/.exec(m.html)?.[1]).find(
      Boolean,
    );
    if (code) return code;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no new confirmation mail to ${to}`);
}

const pastor = () => `pastor-${crypto.randomUUID().slice(0, 8)}@example.org`;

/** The attacker signs up first; the owner signs up after and confirms with the code their mail carries. */
async function preRegistered(s: DevStack, mail: SmtpServer, email: string) {
  assertEquals((await signUp(s, email, ATTACKERS)).status, 200);
  const owner = await signUp(s, email, OWNERS);
  assertEquals(owner.status, 200, "the owner's sign-up is answered like any other");
  const code = await codeFor(mail, email, 1);
  const confirmed = await authCall(s, "/verify", { json: { type: "signup", email, token: code } });
  assertEquals(confirmed.status, 200, JSON.stringify(confirmed.body));
  return confirmed.body.access_token as string;
}

Deno.test("as Supabase Auth: with confirmations on, the first sign-up's password survives the owner's confirmation; off, the owner is told the address is taken", async () => {
  const mail = await startSmtpServer();
  const on = await startDevStack({
    env: { SMTP_URL: mail.url, GOTRUE_MAILER_AUTOCONFIRM: "false", GOTRUE_SMTP_MAX_FREQUENCY: "0s" },
  });
  try {
    const email = pastor();
    await preRegistered(on, mail, email);
    assertEquals((await signIn(on, email, ATTACKERS)).status, 200, "the attacker's password still works");
    assertEquals((await signIn(on, email, OWNERS)).body.error_code, "invalid_credentials");
  } finally {
    await on.stop();
  }
  const off = await startDevStack({ env: { SMTP_URL: mail.url, GOTRUE_MAILER_AUTOCONFIRM: "true" } });
  try {
    const email = pastor();
    assertEquals((await signUp(off, email, ATTACKERS)).status, 200);
    const owner = await signUp(off, email, OWNERS);
    assertEquals([owner.status, owner.body.error_code], [422, "user_already_exists"]);
  } finally {
    await off.stop();
    await mail.close();
  }
});

Deno.test("an invitee whose account existed unconfirmed sets a new password before joining; the attacker's sessions end with it", async () => {
  const mail = await startSmtpServer();
  const s = await startDevStack({
    env: { SMTP_URL: mail.url, GOTRUE_MAILER_AUTOCONFIRM: "false", GOTRUE_SMTP_MAX_FREQUENCY: "0s" },
  });
  try {
    const admin = await upsertDevUser({
      email: `admin-${crypto.randomUUID().slice(0, 8)}@example.org`,
      password: "admin password",
      organization: `Church ${crypto.randomUUID()}`,
      role: "admin",
    });
    const adminToken = (await signIn(s, admin.email, "admin password")).body.access_token as string;
    const email = pastor();
    assertEquals((await signUp(s, email, ATTACKERS)).status, 200); // before the invitation
    const invited = await api(s, "/invitations", adminToken, { email, role: "admin" });
    assertEquals(invited.status, 201, JSON.stringify(invited.body));
    const token = invited.body.token as string;

    // The pastor signs up from the invitation and confirms: signed in, the attacker's password kept.
    assertEquals((await signUp(s, email, OWNERS)).status, 200);
    const confirmed = await authCall(s, "/verify", {
      json: { type: "signup", email, token: await codeFor(mail, email, 1) },
    });
    const owner = confirmed.body.access_token as string;
    const attacker = (await signIn(s, email, ATTACKERS)).body.access_token as string;
    assertEquals((await authCall(s, "/user", { method: "GET", token: attacker })).status, 200);

    const asked = await api(s, "/invitations/accept", owner, { token });
    assertEquals(
      [asked.status, asked.body.error.code],
      [409, "new_password_required"],
      JSON.stringify(asked),
    );
    const [member] = await sql()`select count(*)::int as n from public.profiles p join auth.users u
                                 on u.id = p.user_id where u.email = ${email}`;
    assertEquals(member!.n, 0, "nobody joined yet");
    const again = await api(s, "/invitations/accept", owner, { token });
    assertEquals(again.status, 409, "asked again until the password has changed");

    // The session the mail's code began needs no current password (the pastor never knew it).
    const set = await authCall(s, "/user", { method: "PUT", token: owner, json: { password: OWNERS } });
    assertEquals(set.status, 200, JSON.stringify(set.body));
    const ended = await authCall(s, "/user", { method: "GET", token: attacker });
    assertEquals([ended.status, ended.body.error_code], [403, "session_not_found"]);
    assertEquals((await signIn(s, email, ATTACKERS)).body.error_code, "invalid_credentials");

    const joined = await api(s, "/invitations/accept", owner, { token });
    assertEquals([joined.status, joined.body.role], [200, "admin"], JSON.stringify(joined.body));

    // An account confirmed before its invitation joins at once.
    const regular = await upsertDevUser({
      email: `member-${crypto.randomUUID().slice(0, 8)}@example.org`,
      password: "member password",
    });
    const second = await api(s, "/invitations", adminToken, { email: regular.email, role: "staff" });
    const regularToken = (await signIn(s, regular.email, "member password")).body.access_token as string;
    const direct = await api(s, "/invitations/accept", regularToken, { token: second.body.token });
    assertEquals(direct.status, 200, JSON.stringify(direct.body));
  } finally {
    await s.stop();
    await mail.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
