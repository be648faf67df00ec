// The local Supabase Auth's account paths, driven by @supabase/supabase-js against the real dev server:
// sign-up with confirmation (enable_confirmations on, as the hosted project runs), password recovery,
// e-mail links (GET /verify, a redirect) and codes (POST /verify), and PUT /user; their mails caught by
// an SMTP server on loopback as the mail catcher would take them. Error shapes, enumeration-safe
// answers and rate limits are Supabase Auth's (signup.go, recover.go, verify.go, user.go, mail.go).
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import * as jose from "jose";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { type CaughtMail, type SmtpServer, startSmtpServer } from "./helpers/smtp_server.ts";
import { checkTemplate, renderTemplate } from "../scripts/local-auth/mailer.ts";
import { redirectAllowed, tokenHash } from "../scripts/local-auth/links.ts";

const PASSWORD = "correct horse battery";
const SITE = "http://127.0.0.1:54323";

let smtp: SmtpServer | undefined;
let stack: DevStack | undefined;
async function devStack(): Promise<{ s: DevStack; mail: SmtpServer }> {
  smtp ??= await startSmtpServer();
  stack ??= await startDevStack({
    env: {
      SMTP_URL: smtp.url,
      SITE_URL: SITE,
      GOTRUE_MAILER_AUTOCONFIRM: "false",
      GOTRUE_SMTP_MAX_FREQUENCY: "0s",
      GOTRUE_RATE_LIMIT_OTP: "1000",
      GOTRUE_RATE_LIMIT_VERIFY: "1000",
    },
  });
  return { s: stack, mail: smtp };
}

function client(s: DevStack): SupabaseClient {
  return createClient(s.url, s.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
}

const address = (what = "acct") => `${what}-${crypto.randomUUID().slice(0, 8)}@example.org`;
const claimsOf = (token: string) => jose.decodeJwt(token) as Record<string, unknown>;

/** The mail to `to` caught since `before` messages (waits for it). */
async function mailTo(mail: SmtpServer, to: string): Promise<CaughtMail> {
  for (let i = 0; i < 100; i++) {
    const found = mail.messages.find((m) => m.to.includes(to));
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no mail to ${to}`);
}

/** The link (token hash in the fragment) and the code of a confirmation or recovery mail. */
function linkAndCode(m: CaughtMail): { link: URL; hash: string; code: string } {
  const href = /href="([^"]+)"/.exec(m.html)?.[1]?.replaceAll("&amp;", "&");
  assert(href, `a link in:\n${m.html}`);
  const link = new URL(href);
  const hash = new URLSearchParams(link.hash.slice(1)).get("token_hash") ?? "";
  const code = /<strong>(\d+)<\/strong>/.exec(m.html)?.[1] ?? "";
  return { link, hash, code };
}

async function rawAuth(s: DevStack, path: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await fetch(`${s.url}/auth/v1${path}`, {
    ...init,
    redirect: "manual",
    headers: { apikey: s.anonKey, "content-type": "application/json", ...init.headers },
    body: init.json === undefined ? init.body : JSON.stringify(init.json),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

Deno.test("the mail templates: config.toml's files render as Supabase Auth renders them, escaped for where each value stands", async () => {
  for (const name of ["confirmation", "recovery"]) {
    const body = await Deno.readTextFile(new URL(`../supabase/templates/${name}.html`, import.meta.url));
    checkTemplate(body, name); // throws on anything the stand-in would render differently
  }
  const out = renderTemplate(
    `<p>{{ .Email }}</p><a href="{{ .RedirectTo }}#token_hash={{ .TokenHash }}&amp;x=1">go</a>`,
    {
      Email: `a<b>"c"@x.org`,
      RedirectTo: "http://127.0.0.1:5/auth?a=1&b=2",
      TokenHash: "a b&c",
      SiteURL: "",
      ConfirmationURL: "",
      Token: "",
    },
  );
  assertEquals(
    out,
    `<p>a&lt;b&gt;&#34;c&#34;@x.org</p><a href="http://127.0.0.1:5/auth?a=1&amp;b=2#token_hash=a%20b%26c&amp;x=1">go</a>`,
  );
  const script = renderTemplate(`<a href="{{ .RedirectTo }}">x</a>`, {
    RedirectTo: "javascript:alert(1)",
  } as never);
  assertEquals(script, `<a href="#ZgotmplZ">x</a>`, "html/template's filter for unsafe URLs");
  let refused = "";
  try {
    checkTemplate("{{ .Data.name }}", "t");
  } catch (err) {
    refused = (err as Error).message;
  }
  assertMatch(refused, /not served by the local Supabase Auth stand-in/);
});

Deno.test("redirects: the site's own host (any port on loopback) and additional_redirect_urls, nothing else", () => {
  const allowed = ["https://settings.example.org/**"];
  assert(redirectAllowed("http://127.0.0.1:3000", allowed, "http://127.0.0.1:54323/auth"));
  assert(redirectAllowed("https://app.example.org", allowed, "https://settings.example.org/auth/reset"));
  assert(!redirectAllowed("https://app.example.org", allowed, "https://evil.example.net/"));
  assert(!redirectAllowed("https://app.example.org", allowed, "javascript:alert(1)"));
  assert(!redirectAllowed("https://app.example.org", [], "https://app.example.org.evil.net/"));
});

Deno.test("signUp with confirmations: no session, a mail with link and code; the code confirms once and signs in", async () => {
  const { s, mail } = await devStack();
  const email = address("signup");
  const { data, error } = await client(s).auth.signUp({
    email,
    password: PASSWORD,
    options: { emailRedirectTo: "http://127.0.0.1:61234/auth", data: { name: "Ada" } },
  });
  assertEquals(error, null);
  assertEquals(data.session, null, "nothing to sign in with before the address is confirmed");
  assertEquals(data.user?.email, email);
  assertEquals(data.user?.email_confirmed_at, undefined);
  assert(data.user?.confirmation_sent_at, "confirmation_sent_at");
  assertEquals(data.user?.user_metadata, { name: "Ada" });

  const m = await mailTo(mail, email);
  assertEquals(m.subject, "Confirm your e-mail address", "config.toml's subject");
  const { link, hash, code } = linkAndCode(m);
  assertEquals(
    link.origin + link.pathname,
    "http://127.0.0.1:61234/auth",
    "emailRedirectTo (loopback, any port)",
  );
  assertEquals(new URLSearchParams(link.hash.slice(1)).get("type"), "signup");
  assertMatch(code, /^\d{6}$/, "otp_length digits");
  assertEquals(hash, tokenHash(email, code), "the hash of address and code, as Supabase Auth stores it");
  const [stored] =
    await sql()`select confirmation_token, email_confirmed_at from auth.users where email = ${email}`;
  assertEquals([stored?.confirmation_token, stored?.email_confirmed_at], [hash, null]);

  const early = await client(s).auth.signInWithPassword({ email, password: PASSWORD });
  assertEquals(early.error?.code, "email_not_confirmed");

  const wrong = await client(s).auth.verifyOtp({ email, token: "000000", type: "signup" });
  assertEquals([wrong.error?.status, wrong.error?.code], [403, "otp_expired"]);
  assertEquals(wrong.error?.message, "Token has expired or is invalid");

  const verified = await client(s).auth.verifyOtp({ email, token: code, type: "signup" });
  assertEquals(verified.error, null);
  const claims = claimsOf(verified.data.session!.access_token);
  assertEquals(claims.sub, data.user!.id);
  assertEquals((claims.amr as { method: string }[])[0]?.method, "otp");
  assert("is_platform_admin" in claims, "through the access-token hook");
  assert(verified.data.user?.email_confirmed_at, "confirmed");
  assertEquals(verified.data.user?.user_metadata.email_verified, true);

  const again = await client(s).auth.verifyOtp({ email, token: code, type: "signup" });
  assertEquals(again.error?.code, "otp_expired", "a code works once");
  const signedIn = await client(s).auth.signInWithPassword({ email, password: PASSWORD });
  assertEquals(signedIn.error, null, "the password signs in now");
});

Deno.test("an e-mail link: GET /verify (no API key, as a mail client opens it) redirects with the session in the fragment, once", async () => {
  const { s, mail } = await devStack();
  const email = address("link");
  await client(s).auth.signUp({ email, password: PASSWORD });
  const { hash } = linkAndCode(await mailTo(mail, email));

  const opened = await fetch(
    `${s.url}/auth/v1/verify?token=${hash}&type=signup&redirect_to=${encodeURIComponent(`${SITE}/auth`)}`,
    { redirect: "manual" },
  );
  assertEquals(opened.status, 303);
  const to = new URL(opened.headers.get("location")!);
  assertEquals(to.origin + to.pathname, `${SITE}/auth`);
  const fragment = new URLSearchParams(to.hash.slice(1));
  assertEquals(fragment.get("type"), "signup");
  assertEquals(fragment.get("token_type"), "bearer");
  assertEquals(fragment.get("expires_in"), "3600");
  assertMatch(fragment.get("refresh_token") ?? "", /^[a-z0-9]{12}$/);
  assertEquals(claimsOf(fragment.get("access_token")!).email, email);
  assert(fragment.has("sb"), "Supabase Auth's marker");

  const reused = await fetch(`${s.url}/auth/v1/verify?token=${hash}&type=signup`, { redirect: "manual" });
  assertEquals(reused.status, 303);
  const error = new URL(reused.headers.get("location")!);
  assertEquals(error.origin, SITE, "no redirect_to: the site URL");
  const e = new URLSearchParams(error.hash.slice(1));
  assertEquals([e.get("error"), e.get("error_code"), e.get("error_description")], [
    "access_denied",
    "otp_expired",
    "Email link is invalid or has expired",
  ]);

  const elsewhere = await fetch(
    `${s.url}/auth/v1/verify?token=x&type=signup&redirect_to=${
      encodeURIComponent("https://evil.example.net/")
    }`,
    { redirect: "manual" },
  );
  assertEquals(
    new URL(elsewhere.headers.get("location")!).origin,
    SITE,
    "an unlisted redirect_to is ignored",
  );
  await elsewhere.body?.cancel();
  await opened.body?.cancel();
  await reused.body?.cancel();

  const noToken = await rawAuth(s, "/verify?type=signup", { method: "GET" });
  assertEquals([noToken.status, noToken.body.msg], [400, "Verify requires a token or a token hash"]);
});

Deno.test("verifyOtp with the link's token_hash signs in; bad shapes of POST /verify get Supabase Auth's 400s", async () => {
  const { s, mail } = await devStack();
  const email = address("hash");
  await client(s).auth.signUp({ email, password: PASSWORD });
  const { hash } = linkAndCode(await mailTo(mail, email));
  const { data, error } = await client(s).auth.verifyOtp({ token_hash: hash, type: "signup" });
  assertEquals(error, null);
  assertEquals(data.user?.email, email);

  const cases: [unknown, number, string][] = [
    [{ token_hash: hash }, 400, "Verify requires a verification type"],
    [{ type: "signup" }, 400, "Verify requires either a token or a token hash"],
    [{ type: "signup", token: "1", token_hash: hash }, 400, "Verify requires either a token or a token hash"],
    [{ type: "signup", token_hash: hash, email }, 400, "Only the token_hash and type should be provided"],
    [
      { type: "signup", token: "123456" },
      400,
      "Only an email address or phone number should be provided on verify",
    ],
    [{ type: "signup", token: "123456", email: "not-an-address" }, 422, "Invalid email format"],
    [{ type: "sms", token_hash: hash }, 400, "Unsupported verification type"],
  ];
  for (const [body, status, msg] of cases) {
    const r = await rawAuth(s, "/verify", { method: "POST", json: body });
    assertEquals([r.status, r.body.msg], [status, msg], JSON.stringify(body));
  }
  const noKey = await fetch(`${s.url}/auth/v1/verify`, { method: "POST", body: "{}" });
  assertEquals(noKey.status, 401, "POST /verify needs the API key like every other call");
  await noKey.body?.cancel();
});

Deno.test("signUp again: a confirmed address gets an obfuscated user and no mail; an unconfirmed one its mail again, once per max_frequency", async () => {
  const { s, mail } = await devStack();
  const known = await upsertDevUser({ email: address("known"), password: PASSWORD });
  const before = mail.messages.length;
  const { data, error } = await client(s).auth.signUp({ email: known.email, password: "another password" });
  assertEquals(error, null, "no error that tells the address has an account");
  assertEquals(data.session, null);
  assert(data.user && data.user.id !== known.userId, "an id that belongs to nobody");
  assertEquals(data.user?.identities, []);
  const signedIn = await client(s).auth.signInWithPassword({ email: known.email, password: PASSWORD });
  assertEquals(signedIn.error, null, "the account and its password are untouched");

  const pending = address("pending");
  const first = await client(s).auth.signUp({ email: pending, password: PASSWORD });
  await mailTo(mail, pending);
  const second = await client(s).auth.signUp({ email: pending, password: "someone else's" });
  assertEquals(second.error, null);
  assertEquals(
    second.data.user?.id,
    first.data.user?.id,
    "the same unconfirmed account (as Supabase Auth answers)",
  );
  assertEquals(mail.messages.filter((m) => m.to.includes(pending)).length >= 1, true);
  assertEquals(
    mail.messages.slice(before).filter((m) => m.to.includes(known.email)).length,
    0,
    "no mail to the known address",
  );
  const [row] =
    await sql()`select extensions.crypt(${PASSWORD}, encrypted_password) = encrypted_password as kept
                            from auth.users where email = ${pending}`;
  assertEquals(row?.kept, true, "an unconfirmed account keeps its first password");
});

Deno.test("resetPasswordForEmail: every address gets {} alike; an account gets the recovery mail; bad input 400", async () => {
  const { s, mail } = await devStack();
  const user = await upsertDevUser({ email: address("reset"), password: PASSWORD });
  const before = mail.messages.length;
  const known = await rawAuth(s, "/recover", { method: "POST", json: { email: user.email.toUpperCase() } });
  const unknown = await rawAuth(s, "/recover", { method: "POST", json: { email: address("nobody") } });
  assertEquals([known.status, known.body], [200, {}]);
  assertEquals(
    [unknown.status, unknown.body],
    [200, {}],
    "the same answer: nothing says the address is unknown",
  );
  const m = await mailTo(mail, user.email);
  assertEquals(m.subject, "Reset your password");
  assertEquals(mail.messages.length - before, 1, "one mail, to the account only");
  const [row] =
    await sql()`select recovery_token, recovery_sent_at from auth.users where id = ${user.userId}`;
  assertEquals(row?.recovery_token, linkAndCode(m).hash);

  const missing = await rawAuth(s, "/recover", { method: "POST", json: {} });
  assertEquals([missing.status, missing.body.error_code, missing.body.msg], [
    400,
    "validation_failed",
    "Password recovery requires an email",
  ]);
  const bad = await rawAuth(s, "/recover", { method: "POST", json: { email: "no at sign" } });
  assertEquals([bad.status, bad.body.error_code], [400, "validation_failed"]);
});

Deno.test("recovery: the link's token_hash signs in, updateUser sets the password, every other session ends", async () => {
  const { s, mail } = await devStack();
  const user = await upsertDevUser({ email: address("recover"), password: PASSWORD });
  const other = await client(s).auth.signInWithPassword({ email: user.email, password: PASSWORD });
  assertEquals(other.error, null);

  const c = client(s);
  assertEquals(
    (await c.auth.resetPasswordForEmail(user.email, { redirectTo: `${SITE}/auth/reset` })).error,
    null,
  );
  const { link, hash } = linkAndCode(await mailTo(mail, user.email));
  assertEquals(link.origin + link.pathname, `${SITE}/auth/reset`, "redirectTo");
  assertEquals(new URLSearchParams(link.hash.slice(1)).get("type"), "recovery");

  const { data, error } = await c.auth.verifyOtp({ token_hash: hash, type: "recovery" });
  assertEquals(error, null);
  assertEquals(data.user?.id, user.userId);
  const reused = await client(s).auth.verifyOtp({ token_hash: hash, type: "recovery" });
  assertEquals(reused.error?.code, "otp_expired", "the link works once");

  const same = await c.auth.updateUser({ password: PASSWORD });
  assertEquals([same.error?.status, same.error?.code], [422, "same_password"]);
  const weak = await c.auth.updateUser({ password: "123" });
  assertEquals([weak.error?.status, weak.error?.code], [422, "weak_password"]);
  const long = await c.auth.updateUser({ password: "x".repeat(73) });
  assertEquals([long.error?.status, long.error?.code], [400, "validation_failed"]);

  const updated = await c.auth.updateUser({ password: "a brand new password", data: { locale: "en" } });
  assertEquals(updated.error, null);
  assertEquals(updated.data.user?.user_metadata.locale, "en");
  assertEquals(
    (await client(s).auth.signInWithPassword({ email: user.email, password: PASSWORD })).error?.code,
    "invalid_credentials",
  );
  assertEquals(
    (await client(s).auth.signInWithPassword({ email: user.email, password: "a brand new password" })).error,
    null,
  );
  const refresh = await client(s).auth.refreshSession({ refresh_token: other.data.session!.refresh_token });
  assertEquals(refresh.error?.code, "refresh_token_not_found", "the session from before the reset has ended");
  const mine = await c.auth.getUser();
  assertEquals(mine.error, null, "the session that changed the password goes on");
});

Deno.test("PUT /user: metadata merges (null removes), app_metadata is refused, no token 401, e-mail changes are not served", async () => {
  const { s } = await devStack();
  const user = await upsertDevUser({ email: address("update"), password: PASSWORD });
  const c = client(s);
  const { data } = await c.auth.signInWithPassword({ email: user.email, password: PASSWORD });
  const auth = { authorization: `Bearer ${data.session!.access_token}` };
  await c.auth.updateUser({ data: { a: 1, b: 2 } });
  const merged = await c.auth.updateUser({ data: { b: null, c: 3 } });
  assertEquals(merged.data.user?.user_metadata, { a: 1, c: 3 });
  const admin = await rawAuth(s, "/user", {
    method: "PUT",
    headers: auth,
    json: { app_metadata: { role: "x" } },
  });
  assertEquals([admin.status, admin.body.error_code], [403, "not_admin"]);
  const anonymous = await rawAuth(s, "/user", { method: "PUT", json: { data: {} } });
  assertEquals([anonymous.status, anonymous.body.error_code], [401, "no_authorization"]);
  const email = await rawAuth(s, "/user", { method: "PUT", headers: auth, json: { email: address("new") } });
  assertEquals([email.status, email.body.error_code], [422, "validation_failed"]);
  const notJson = await rawAuth(s, "/user", { method: "PUT", headers: auth, body: "{" });
  assertEquals([notJson.status, notJson.body.error_code], [400, "bad_json"]);
});

Deno.test("an expired link or code: 403 otp_expired (otp_expiry)", async () => {
  const { s, mail } = await devStack();
  const user = await upsertDevUser({ email: address("late"), password: PASSWORD });
  await client(s).auth.resetPasswordForEmail(user.email);
  const { hash, code } = linkAndCode(await mailTo(mail, user.email));
  await sql()`update auth.users set recovery_sent_at = now() - interval '61 minutes' where id = ${user.userId}`;
  const byHash = await client(s).auth.verifyOtp({ token_hash: hash, type: "recovery" });
  assertEquals([byHash.error?.status, byHash.error?.code], [403, "otp_expired"]);
  const byCode = await client(s).auth.verifyOtp({ email: user.email, token: code, type: "recovery" });
  assertEquals(byCode.error?.code, "otp_expired");
});

Deno.test("stop the shared dev server", async () => {
  await stack?.stop();
  stack = undefined;
});

Deno.test("limits: max_frequency per user (429 over_email_send_rate_limit), recovery and verification per client; a mail that cannot go out changes nothing", async () => {
  const mail = await startSmtpServer();
  const s = await startDevStack({
    env: {
      SMTP_URL: mail.url,
      GOTRUE_MAILER_AUTOCONFIRM: "false",
      GOTRUE_SMTP_MAX_FREQUENCY: "60s",
      GOTRUE_RATE_LIMIT_OTP: "4",
      GOTRUE_RATE_LIMIT_VERIFY: "3",
    },
  });
  try {
    const user = await upsertDevUser({ email: address("freq"), password: PASSWORD });
    const first = await rawAuth(s, "/recover", { method: "POST", json: { email: user.email } });
    assertEquals(first.status, 200);
    const second = await rawAuth(s, "/recover", { method: "POST", json: { email: user.email } });
    assertEquals([second.status, second.body.error_code], [429, "over_email_send_rate_limit"]);
    assertMatch(second.body.msg, /^For security purposes, you can only request this after \d+ seconds\.$/);
    // The mail goes after the answer: wait for the first, then see that the refused second sent none.
    await mailTo(mail, user.email);
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(mail.messages.filter((m) => m.to.includes(user.email)).length, 1);

    // A refused mail: it goes after the answer (which is every address's), and its code is then
    // forgotten, so no link works that never went out.
    const refused = await upsertDevUser({ email: address("refused"), password: PASSWORD });
    mail.mode = "permfail";
    const failed = await rawAuth(s, "/recover", { method: "POST", json: { email: refused.email } });
    assertEquals([failed.status, failed.body], [200, {}]);
    let row: { recovery_token: string; recovery_sent_at: Date | null } | undefined;
    for (let i = 0; i < 100; i++) {
      [row] = await sql()<NonNullable<typeof row>[]>`
        select recovery_token, recovery_sent_at from auth.users where id = ${refused.userId}`;
      if (row?.recovery_sent_at === null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    mail.mode = "accept";
    assertEquals([row?.recovery_token, row?.recovery_sent_at], ["", null]);

    // The fourth request of this client (sign_in_sign_ups = 4) goes through, the fifth does not.
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      statuses.push((await rawAuth(s, "/recover", { method: "POST", json: { email: address("x") } })).status);
    }
    assertEquals(statuses, [200, 429]);
    const verifies: number[] = [];
    for (let i = 0; i < 4; i++) {
      verifies.push(
        (await rawAuth(s, "/verify", {
          method: "POST",
          json: { type: "signup", token_hash: "0".repeat(56) },
        }))
          .status,
      );
    }
    assertEquals(verifies, [403, 403, 403, 429], "token_verifications = 3: guessing codes is limited");
  } finally {
    await s.stop();
    await mail.close();
  }
});

Deno.test("cleanup", async () => {
  await smtp?.close();
  await closeSql();
});
