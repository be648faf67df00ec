// A password change names the current password (Supabase Auth's update_password_require_current_password,
// errors current_password_required / current_password_mismatch), except in a session begun by a mail's
// link or code; it ends every other session of the account. Tried as the attack was reported: a stolen
// access token whose sign-in is 30 minutes old (too old to reveal a signing secret) sets a password of
// the thief's choosing, signs in afresh with it and reveals the secret. Against the real dev server.
import * as jose from "jose";
import { assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { authCall, type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { type CaughtMail, type SmtpServer, startSmtpServer } from "./helpers/smtp_server.ts";

const PASSWORD = "correct horse battery";
const THIEFS = "the thief's own password";

const signIn = (s: DevStack, email: string, password: string) =>
  authCall(s, "/token?grant_type=password", { json: { email, password } });

async function api(s: DevStack, path: string, token: string, json?: unknown) {
  const res = await fetch(`${s.url}/functions/v1/webhooks${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.status, body: await res.json() };
}

async function mailTo(mail: SmtpServer, to: string): Promise<CaughtMail> {
  for (let i = 0; i < 100; i++) {
    const found = mail.messages.find((m) => m.to.includes(to));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no mail to ${to}`);
}

Deno.test("a 30-minute-old token cannot change the password without the current one, so cannot reveal a signing secret", async () => {
  const mail = await startSmtpServer();
  const s = await startDevStack({ env: { SMTP_URL: mail.url, GOTRUE_SMTP_MAX_FREQUENCY: "0s" } });
  try {
    const email = `owner-${crypto.randomUUID().slice(0, 8)}@example.org`;
    await upsertDevUser({
      email,
      password: PASSWORD,
      organization: `Church ${crypto.randomUUID()}`,
      role: "admin",
    });
    const stolen = await signIn(s, email, PASSWORD);
    const laptop = await signIn(s, email, PASSWORD); // the owner's other device
    assertEquals([stolen.status, laptop.status], [200, 200]);
    const token = stolen.body.access_token as string;
    const endpoint = await api(s, "/endpoints", token, {
      url: "http://127.0.0.1:9/hook",
      events: ["member.created"],
    });
    assertEquals(endpoint.status, 201, JSON.stringify(endpoint.body));
    const reveal = `/endpoints/${endpoint.body.id}/reveal-secret`;

    // The stolen token's sign-in is 30 minutes old: too old to reveal.
    const sessionId = jose.decodeJwt(token).session_id as string;
    await sql()`update auth.sessions set created_at = now() - interval '30 minutes' where id = ${sessionId}`;
    const stale = await api(s, reveal, token);
    assertEquals([stale.status, stale.body.error.code], [403, "reauthentication_required"]);

    // So the thief sets a password of their own: refused without the current one, and with a wrong one.
    const bare = await authCall(s, "/user", { method: "PUT", token, json: { password: THIEFS } });
    assertEquals(
      [bare.status, bare.body.error_code, bare.body.msg],
      [400, "current_password_required", "Current password required when setting new password."],
    );
    const guessed = await authCall(s, "/user", {
      method: "PUT",
      token,
      json: { password: THIEFS, current_password: "a guess" },
    });
    assertEquals([guessed.status, guessed.body.error_code], [400, "current_password_mismatch"]);
    // Nothing changed: the thief's password signs nobody in, so no fresh sign-in reveals anything.
    const thief = await signIn(s, email, THIEFS);
    assertEquals([thief.status, thief.body.error_code], [400, "invalid_credentials"]);
    assertEquals(
      (await authCall(s, "/user", { method: "GET", token: laptop.body.access_token })).status,
      200,
    );

    // The owner, naming the current password: changed, and every other session of the account ends.
    const changed = await authCall(s, "/user", {
      method: "PUT",
      token: laptop.body.access_token,
      json: { password: "the owner's new password", current_password: PASSWORD },
    });
    assertEquals(changed.status, 200, JSON.stringify(changed.body));
    const ended = await authCall(s, "/user", { method: "GET", token });
    assertEquals([ended.status, ended.body.error_code], [403, "session_not_found"]);
    assertEquals((await signIn(s, email, PASSWORD)).status, 400, "the old password is gone");
    const fresh = await signIn(s, email, "the owner's new password");
    assertEquals(fresh.status, 200);
    assertEquals((await api(s, reveal, fresh.body.access_token)).status, 200, "a fresh sign-in reveals");

    // A session begun by a password mail's code is exempt: proving the address replaces a forgotten one.
    assertEquals((await authCall(s, "/recover", { json: { email } })).status, 200);
    const code = /<strong>(\d+)<\/strong>/.exec((await mailTo(mail, email)).html)?.[1];
    const recovered = await authCall(s, "/verify", { json: { type: "recovery", email, token: code } });
    assertEquals(recovered.status, 200, JSON.stringify(recovered.body));
    const reset = await authCall(s, "/user", {
      method: "PUT",
      token: recovered.body.access_token,
      json: { password: "chosen after a reset" },
    });
    assertEquals(reset.status, 200, JSON.stringify(reset.body));
    assertEquals((await signIn(s, email, "chosen after a reset")).status, 200);
  } finally {
    await s.stop();
    await mail.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
