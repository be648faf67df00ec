// The local Supabase Auth stand-in, driven by the real @supabase/supabase-js client against the real
// dev server (scripts/dev.ts, spawned): password sign-in through the access-token hook, refresh-token
// rotation and reuse detection, sign-out, getUser, GoTrue's error shapes, the apikey gate, CORS, and the
// functions verifying these tokens through the JWKS URL only.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import * as jose from "jose";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";

const PASSWORD = "correct horse battery";

let stack: DevStack | undefined;
async function devStack(): Promise<DevStack> {
  // A one-second reuse interval so "after the interval" takes a second, not config.toml's ten; and room
  // for this file's sign-ins from one address (the limit itself: local_auth_limits_test.ts).
  stack ??= await startDevStack({
    env: { GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: "1", GOTRUE_RATE_LIMIT_OTP: "1000" },
  });
  return stack;
}

function client(s: DevStack): SupabaseClient {
  return createClient(s.url, s.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
}

async function newUser(organization?: string, role: "admin" | "staff" = "admin") {
  const email = `user-${crypto.randomUUID().slice(0, 8)}@example.org`;
  const user = await upsertDevUser({
    email,
    password: PASSWORD,
    organization: organization ?? `Church ${crypto.randomUUID().slice(0, 8)}`,
    role,
  });
  return { ...user, password: PASSWORD };
}

/** /user answers 403 session_not_found, which supabase-js reports as AuthSessionMissingError. */
async function assertSessionGone(s: DevStack, accessToken: string) {
  const res = await fetch(`${s.url}/auth/v1/user`, {
    headers: { apikey: s.anonKey, authorization: `Bearer ${accessToken}` },
  });
  assertEquals([res.status, (await res.json()).error_code], [403, "session_not_found"]);
  const { error } = await client(s).auth.getUser(accessToken);
  assertEquals(error?.name, "AuthSessionMissingError");
}

const claimsOf = (token: string) => jose.decodeJwt(token) as Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("signInWithPassword: a session whose token carries the hook's claims and every required claim", async () => {
  const s = await devStack();
  const u = await newUser();
  const { data, error } = await client(s).auth.signInWithPassword({ email: u.email, password: PASSWORD });
  assertEquals(error, null);
  const session = data.session!;
  assertEquals(session.token_type, "bearer");
  assertEquals(session.expires_in, 3600, "jwt_expiry from supabase/config.toml");
  assert(Math.abs(session.expires_at! - (Math.floor(Date.now() / 1000) + 3600)) <= 2, "expires_at");
  assertMatch(session.refresh_token, /^[a-z0-9]{12}$/);
  assertEquals(data.user?.id, u.userId);
  assertEquals(data.user?.email, u.email);

  const claims = claimsOf(session.access_token);
  for (
    const name of ["aud", "exp", "iat", "sub", "email", "phone", "role", "aal", "session_id", "is_anonymous"]
  ) {
    assert(name in claims, `required claim ${name}`);
  }
  assertEquals(claims.iss, `${s.url}/auth/v1`);
  assertEquals(claims.sub, u.userId);
  assertEquals(claims.aud, "authenticated");
  assertEquals(claims.role, "authenticated");
  assertEquals(claims.organization_id, u.organizationId, "put there by custom_access_token_hook");
  assertEquals(claims.is_platform_admin, false);
  assertEquals(claims.is_superadmin, false);
  assertEquals((claims.amr as { method: string }[])[0]?.method, "password");

  // Signed ES256 with the key the JWKS publishes under the token's kid.
  const header = jose.decodeProtectedHeader(session.access_token);
  assertEquals(header.alg, "ES256");
  const jwks = await (await fetch(`${s.url}/auth/v1/.well-known/jwks.json`)).json();
  assertEquals(jwks.keys.length, 1);
  assertEquals(jwks.keys[0].kid, header.kid);
  assert(!("d" in jwks.keys[0]), "no private part published");
  await jose.jwtVerify(session.access_token, jose.createLocalJWKSet(jwks), { issuer: `${s.url}/auth/v1` });

  // The session is where Supabase keeps it.
  const [row] = await sql()`select s.user_id, count(rt.*)::int as tokens from auth.sessions s
    join auth.refresh_tokens rt on rt.session_id = s.id where s.id = ${claims
    .session_id as string} group by 1`;
  assertEquals(row?.user_id, u.userId);
  assertEquals(row?.tokens, 1);
});

Deno.test("wrong password, unknown user and unconfirmed e-mail get Supabase Auth's errors", async () => {
  const s = await devStack();
  const u = await newUser();
  const bad = await client(s).auth.signInWithPassword({ email: u.email, password: "wrong" });
  assertEquals(bad.data.session, null);
  assertEquals(bad.error?.name, "AuthApiError");
  assertEquals(bad.error?.status, 400);
  assertEquals(bad.error?.code, "invalid_credentials");
  assertEquals(bad.error?.message, "Invalid login credentials");
  const unknown = await client(s).auth.signInWithPassword({ email: "nobody@example.org", password: "x" });
  assertEquals(unknown.error?.code, "invalid_credentials", "no hint that the account does not exist");

  // Without the API version header (curl): GoTrue's legacy body.
  const res = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: s.anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email: u.email, password: "wrong" }),
  });
  assertEquals(res.status, 400);
  assertEquals(res.headers.get("x-sb-error-code"), "invalid_credentials");
  assertEquals(await res.json(), {
    code: 400,
    error_code: "invalid_credentials",
    msg: "Invalid login credentials",
  });
  // With it: the 2024-01-01 body, the version echoed.
  const v2 = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: s.anonKey, "x-supabase-api-version": "2024-01-01" },
    body: JSON.stringify({ email: u.email, password: "wrong" }),
  });
  assertEquals(v2.headers.get("x-supabase-api-version"), "2024-01-01");
  assertEquals(await v2.json(), { code: "invalid_credentials", message: "Invalid login credentials" });

  await sql()`update auth.users set email_confirmed_at = null where id = ${u.userId}`;
  const unconfirmed = await client(s).auth.signInWithPassword({ email: u.email, password: PASSWORD });
  assertEquals(unconfirmed.error?.code, "email_not_confirmed");

  for (
    const [body, code] of [
      ["{nope", "bad_json"],
      [JSON.stringify({ password: "x" }), "validation_failed"],
    ] as const
  ) {
    const r = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: s.anonKey },
      body,
    });
    assertEquals([r.status, (await r.json()).error_code], [400, code]);
  }
  const grant = await fetch(`${s.url}/auth/v1/token?grant_type=magic`, {
    method: "POST",
    headers: { apikey: s.anonKey },
    body: "{}",
  });
  assertEquals(await grant.json(), {
    code: 400,
    error_code: "invalid_credentials",
    msg: "unsupported_grant_type",
  });
});

Deno.test("signUp as config.toml ships it: confirmed at once with a session; a known address or a short password is refused", async () => {
  const s = await devStack();
  const email = `signup-${crypto.randomUUID().slice(0, 8)}@example.org`;
  const { data, error } = await client(s).auth.signUp({ email, password: PASSWORD });
  assertEquals(error, null);
  assert(data.user?.email_confirmed_at, "enable_confirmations = false: confirmed at sign-up");
  assertEquals(claimsOf(data.session!.access_token).sub, data.user!.id, "and signed in");
  assertEquals(claimsOf(data.session!.access_token).organization_id, undefined, "a member of nothing");
  const again = await client(s).auth.signUp({ email, password: PASSWORD });
  assertEquals(again.error?.code, "user_already_exists");
  const weak = await client(s).auth.signUp({ email: `weak-${email}`, password: "12345" });
  assertEquals([weak.error?.status, weak.error?.code], [422, "weak_password"]);
  const signedIn = await client(s).auth.signInWithPassword({ email, password: PASSWORD });
  assertEquals(signedIn.error, null, "the new account signs in");
});

Deno.test("every auth call needs the local anon key in apikey; the JWKS is public", async () => {
  const s = await devStack();
  const u = await newUser();
  const body = JSON.stringify({ email: u.email, password: PASSWORD });
  const url = `${s.url}/auth/v1/token?grant_type=password`;
  const none = await fetch(url, { method: "POST", body });
  assertEquals(none.status, 401);
  assertEquals((await none.json()).message, "No API key found in request");
  const wrong = await fetch(url, { method: "POST", body, headers: { apikey: s.anonKey + "x" } });
  assertEquals(wrong.status, 401);
  assertEquals((await wrong.json()).message, "Invalid API key");
  const other = await client({ ...s, anonKey: "sb_publishable_someone-elses-key" }).auth.signInWithPassword({
    email: u.email,
    password: PASSWORD,
  });
  assertEquals(other.error?.status, 401);
  for (const path of ["/auth/v1/user", "/auth/v1/logout"]) {
    const r = await fetch(`${s.url}${path}`, { method: path.endsWith("logout") ? "POST" : "GET" });
    assertEquals(r.status, 401, path);
    await r.body?.cancel();
  }
  const jwks = await fetch(`${s.url}/auth/v1/.well-known/jwks.json`);
  assertEquals(jwks.status, 200);
  await jwks.body?.cancel();
});

Deno.test("refreshSession rotates; an old token reused after the reuse interval ends the whole session", async () => {
  const s = await devStack();
  const u = await newUser();
  const c = client(s);
  const first = (await c.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data.session!;
  const a = first.refresh_token;
  const second = await c.auth.refreshSession({ refresh_token: a });
  assertEquals(second.error, null);
  const b = second.data.session!.refresh_token;
  assert(b !== a, "a new refresh token");
  const bClaims = claimsOf(second.data.session!.access_token);
  assertEquals(bClaims.session_id, claimsOf(first.access_token).session_id, "same session");
  assertEquals(bClaims.organization_id, u.organizationId);

  const third = await c.auth.refreshSession({ refresh_token: b });
  const cToken = third.data.session!.refresh_token;
  assert(cToken !== b);
  // GoTrue's rule for a client that lost the last answer: the parent of the active token gets the
  // active token back instead of a new one.
  const lost = await c.auth.refreshSession({ refresh_token: b });
  assertEquals(lost.data.session?.refresh_token, cToken);

  await sleep(1200); // past the one-second reuse interval since `a` was rotated
  const reused = await c.auth.refreshSession({ refresh_token: a });
  assertEquals(reused.error?.code, "refresh_token_already_used");
  assertEquals(reused.error?.message, "Invalid Refresh Token: Already Used");
  // The whole session is revoked: the current refresh token and the access tokens are dead too.
  const after = await client(s).auth.refreshSession({ refresh_token: cToken });
  assertEquals(after.error?.code, "refresh_token_not_found");
  await assertSessionGone(s, third.data.session!.access_token);
  const [left] = await sql()`select count(*)::int as n from auth.sessions where id = ${bClaims
    .session_id as string}`;
  assertEquals(left?.n, 0);
});

Deno.test("a rotated token reused within the interval still refreshes (concurrent tabs)", async () => {
  const s = await devStack();
  const u = await newUser();
  const c = client(s);
  const a =
    (await c.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data.session!.refresh_token;
  const b = (await c.auth.refreshSession({ refresh_token: a })).data.session!.refresh_token;
  (await c.auth.refreshSession({ refresh_token: b })).data.session!.refresh_token;
  const again = await c.auth.refreshSession({ refresh_token: a });
  assertEquals(again.error, null, "within refresh_token_reuse_interval");
});

Deno.test("signOut revokes the session: neither its refresh token nor its access token works after", async () => {
  const s = await devStack();
  const u = await newUser();
  const c = client(s);
  const { session } = (await c.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data;
  const got = await c.auth.getUser();
  assertEquals(got.error, null);
  assertEquals(got.data.user?.id, u.userId);
  assertEquals(got.data.user?.email, u.email);
  const { error } = await c.auth.signOut();
  assertEquals(error, null);
  const refresh = await client(s).auth.refreshSession({ refresh_token: session!.refresh_token });
  assertEquals(refresh.error?.code, "refresh_token_not_found");
  await assertSessionGone(s, session!.access_token);
});

Deno.test("getUser refuses tokens of another key and expired ones, as Supabase Auth does", async () => {
  const s = await devStack();
  const u = await newUser();
  const { session } = (await client(s).auth.signInWithPassword({ email: u.email, password: PASSWORD })).data;
  const claims = claimsOf(session!.access_token);
  const header = jose.decodeProtectedHeader(session!.access_token) as jose.JWTHeaderParameters;
  const other = await jose.generateKeyPair("ES256");
  const forged = await new jose.SignJWT(claims).setProtectedHeader(header).sign(other.privateKey);
  const res = await fetch(`${s.url}/auth/v1/user`, {
    headers: { apikey: s.anonKey, authorization: `Bearer ${forged}` },
  });
  assertEquals(res.status, 403);
  assertEquals((await res.json()).error_code, "bad_jwt");
  const none = await fetch(`${s.url}/auth/v1/user`, { headers: { apikey: s.anonKey } });
  assertEquals([none.status, (await none.json()).error_code], [401, "no_authorization"]);
});

Deno.test("the functions accept the local token through the JWKS URL, and refuse other keys and expired tokens", async () => {
  const s = await devStack();
  const u = await newUser();
  const { session } = (await client(s).auth.signInWithPassword({ email: u.email, password: PASSWORD })).data;
  const endpoints = `${s.url}/functions/v1/webhooks/endpoints`;
  const call = (token: string) => fetch(endpoints, { headers: { authorization: `Bearer ${token}` } });
  const ok = await call(session!.access_token);
  assertEquals(ok.status, 200, await ok.clone().text());
  assert(Array.isArray((await ok.json()).data));

  const claims = claimsOf(session!.access_token);
  const header = jose.decodeProtectedHeader(session!.access_token) as jose.JWTHeaderParameters;
  const other = await jose.generateKeyPair("ES256");
  // Same claims, same kid, another key; then another kid; then the legacy HS256 path the dev server
  // used to trust.
  const forgedSameKid = await new jose.SignJWT(claims).setProtectedHeader(header).sign(other.privateKey);
  const forgedOtherKid = await new jose.SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "someone-else", typ: "JWT" })
    .sign(other.privateKey);
  const hs = await new jose.SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .sign(new TextEncoder().encode("super-secret-jwt-token-with-at-least-32-characters-long"));
  // Expired, yet signed with the real local key (read from the stack's key directory).
  const real = await jose.importJWK(
    JSON.parse(await Deno.readTextFile(`${s.keysDir}/signing-key.json`)),
    "ES256",
  );
  const now = Math.floor(Date.now() / 1000);
  const expired = await new jose.SignJWT({ ...claims, iat: now - 7200, exp: now - 60 })
    .setProtectedHeader(header).sign(real);
  const stillValid = await new jose.SignJWT({ ...claims, iat: now, exp: now + 600 })
    .setProtectedHeader(header).sign(real);
  assertEquals((await call(stillValid)).status, 200, "control: the real key is accepted");
  for (
    const [name, token] of [["same kid", forgedSameKid], ["other kid", forgedOtherKid], [
      "HS256",
      hs,
    ]] as const
  ) {
    const r = await call(token);
    assertEquals(r.status, 401, name);
    assertEquals((await r.json()).error.code, "invalid_token", name);
  }
  const late = await call(expired);
  assertEquals(late.status, 401);
  assertEquals((await late.json()).error.code, "token_expired");
});

// The attack: an admin signs out (or their session is revoked because a stolen refresh token was
// reused), and whoever kept the access token goes on administering webhooks until it expires.
Deno.test("a signed-out or revoked session's access token no longer administers: 401 session_not_found", async () => {
  const s = await devStack();
  const u = await newUser();
  const endpoints = `${s.url}/functions/v1/webhooks/endpoints`;
  const asToken = (token: string, init: RequestInit = {}) =>
    fetch(endpoints, {
      ...init,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    });
  const create = JSON.stringify({ url: "http://127.0.0.1:9/after-sign-out", events: ["member.created"] });

  const c = client(s);
  const { session } = (await c.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data;
  const before = await asToken(session!.access_token);
  assertEquals(before.status, 200, "control: the live session administers");
  await before.body?.cancel();
  assertEquals((await c.auth.signOut()).error, null);
  for (const [what, init] of [["GET", {}], ["POST", { method: "POST", body: create }]] as const) {
    const res = await asToken(session!.access_token, init);
    assertEquals(
      [res.status, (await res.json()).error?.code],
      [401, "session_not_found"],
      `${what} after sign-out`,
    );
  }
  const me = await fetch(`${s.url}/functions/v1/webhooks/me`, {
    headers: { authorization: `Bearer ${session!.access_token}` },
  });
  assertEquals([me.status, (await me.json()).error?.code], [401, "session_not_found"], "user routes too");

  // Refresh-token reuse: the session is revoked by Supabase Auth, its access tokens end with it.
  const c2 = client(s);
  const first = (await c2.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data.session!;
  const second = (await c2.auth.refreshSession({ refresh_token: first.refresh_token })).data.session!;
  const third = (await c2.auth.refreshSession({ refresh_token: second.refresh_token })).data.session!;
  assertEquals(await asToken(third.access_token).then((r) => (r.body?.cancel(), r.status)), 200);
  await sleep(1200); // past the one-second reuse interval
  const reused = await c2.auth.refreshSession({ refresh_token: first.refresh_token });
  assertEquals(reused.error?.code, "refresh_token_already_used");
  const revoked = await asToken(third.access_token);
  assertEquals([revoked.status, (await revoked.json()).error?.code], [401, "session_not_found"]);

  // A token that names no session cannot be ended by signing out: refused, whoever signed it.
  const c3 = client(s);
  const live = (await c3.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data.session!;
  const { session_id: _dropped, ...claims } = claimsOf(live.access_token);
  const header = jose.decodeProtectedHeader(live.access_token) as jose.JWTHeaderParameters;
  const key = await jose.importJWK(
    JSON.parse(await Deno.readTextFile(`${s.keysDir}/signing-key.json`)),
    "ES256",
  );
  const sessionless = await new jose.SignJWT(claims).setProtectedHeader(header).sign(key);
  const refused = await asToken(sessionless);
  assertEquals([refused.status, (await refused.json()).error?.code], [401, "session_required"]);
  const [created] = await sql()`select count(*)::int as n from public.webhook_endpoints
                                where url = 'http://127.0.0.1:9/after-sign-out'`;
  assertEquals(created!.n, 0, "nothing was configured with an ended session");
});

Deno.test("the hook picks the organization: set_active_organization then refresh switches it; removal drops it", async () => {
  const s = await devStack();
  const u = await newUser();
  const second = await upsertDevUser({
    email: u.email,
    password: PASSWORD,
    organization: `Second ${crypto.randomUUID().slice(0, 8)}`,
    role: "staff",
  });
  const c = client(s);
  const first = (await c.auth.signInWithPassword({ email: u.email, password: PASSWORD })).data.session!;
  assertEquals(claimsOf(first.access_token).organization_id, u.organizationId, "oldest membership first");
  await sql().begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${
      JSON.stringify({
        sub: u.userId,
        role: "authenticated",
        session_id: claimsOf(first.access_token).session_id,
      })
    }, true),
                    set_config('role', 'authenticated', true)`;
    await tx`select public.set_active_organization(${second.organizationId!})`;
  });
  const switched = (await c.auth.refreshSession()).data.session!;
  assertEquals(claimsOf(switched.access_token).organization_id, second.organizationId);

  await sql()`delete from public.profiles where user_id = ${u.userId} and organization_id = ${second
    .organizationId!}`;
  const afterRemoval = (await c.auth.refreshSession()).data.session!;
  assertEquals(
    claimsOf(afterRemoval.access_token).organization_id,
    u.organizationId,
    "back to the remaining one",
  );
  await sql()`delete from public.profiles where user_id = ${u.userId}`;
  const none = (await c.auth.refreshSession()).data.session!;
  assert(!("organization_id" in claimsOf(none.access_token)), "no organization at all");
});

Deno.test("CORS: browser preflights from a localhost origin are answered for /auth/v1 and /functions/v1", async () => {
  const s = await devStack();
  for (const path of ["/auth/v1/token?grant_type=password", "/functions/v1/webhooks/endpoints"]) {
    const pre = await fetch(`${s.url}${path}`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:5173",
        "access-control-request-method": "POST",
        "access-control-request-headers":
          "apikey, authorization, content-type, x-client-info, x-supabase-api-version",
      },
    });
    assertEquals(pre.status, 204, path);
    assertEquals(pre.headers.get("access-control-allow-origin"), "http://localhost:5173");
    assertMatch(pre.headers.get("access-control-allow-headers") ?? "", /apikey/);
    const foreign = await fetch(`${s.url}${path}`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    assertEquals(foreign.headers.get("access-control-allow-origin"), null, path);
    await foreign.body?.cancel();
  }
  const res = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { origin: "http://127.0.0.1:4000", apikey: s.anonKey },
    body: JSON.stringify({ email: "nobody@example.org", password: "x" }),
  });
  assertEquals(res.headers.get("access-control-allow-origin"), "http://127.0.0.1:4000");
  assertMatch(res.headers.get("access-control-expose-headers") ?? "", /x-sb-error-code/i);
  await res.body?.cancel();
});

Deno.test("dev:token prints the access token of a real sign-in, and refuses a wrong password", async () => {
  const s = await devStack();
  const u = await newUser();
  const run = (password: string) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        "--allow-env",
        "--allow-read",
        "scripts/dev-token.ts",
        "--email",
        u.email,
        "--password",
        password,
      ],
      cwd: new URL("../", import.meta.url).pathname,
      env: { SUPABASE_URL: s.url, SUPABASE_ANON_KEY: s.anonKey },
    }).output();
  const ok = await run(PASSWORD);
  assertEquals(ok.code, 0, new TextDecoder().decode(ok.stderr));
  const claims = claimsOf(new TextDecoder().decode(ok.stdout).trim());
  assertEquals([claims.sub, claims.organization_id, claims.iss], [
    u.userId,
    u.organizationId,
    `${s.url}/auth/v1`,
  ]);
  const bad = await run("wrong-password");
  assertEquals(bad.code, 1);
  assertMatch(new TextDecoder().decode(bad.stderr), /Invalid login credentials/);
});

Deno.test("stop the shared dev server", async () => {
  await stack?.stop();
  stack = undefined;
});

// The hook is called as Supabase Auth calls it, and its failures fail the request the same way.
const HOOK_SQL = `
create table if not exists public.test_hook_calls (event jsonb, caller text, at timestamptz default now());
grant insert on public.test_hook_calls to supabase_auth_admin;
create or replace function public.test_access_token_hook(event jsonb) returns jsonb
language plpgsql volatile set search_path = '' as $$
declare
  email text := event -> 'claims' ->> 'email';
begin
  insert into public.test_hook_calls (event, caller) values (event, current_user);
  if email like 'slow-%' then perform pg_sleep(2.5); end if;
  if email like 'raise-%' then raise exception 'hook failed on purpose'; end if;
  if email like 'refuse-%' then
    return jsonb_build_object('error', jsonb_build_object('http_code', 403, 'message', 'Not allowed here'));
  end if;
  if email like 'noaal-%' then
    return jsonb_build_object('claims', (event -> 'claims') - 'aal');
  end if;
  return public.custom_access_token_hook(event);
end $$;
revoke execute on function public.test_access_token_hook(jsonb) from public, anon, authenticated;
grant execute on function public.test_access_token_hook(jsonb) to supabase_auth_admin;`;

Deno.test("the access-token hook: called as supabase_auth_admin with {user_id, claims, authentication_method}; failures fail the grant", async () => {
  await sql().unsafe(HOOK_SQL);
  const s = await startDevStack({
    env: { GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI: "pg-functions://postgres/public/test_access_token_hook" },
  });
  try {
    const u = await newUser();
    const c = client(s);
    const signIn = await c.auth.signInWithPassword({ email: u.email, password: PASSWORD });
    assertEquals(signIn.error, null);
    await c.auth.refreshSession();
    const calls = await sql()<{ event: Record<string, unknown>; caller: string }[]>`
      select event, caller from public.test_hook_calls where event ->> 'user_id' = ${u.userId} order by at`;
    assertEquals(calls.map((x) => x.event.authentication_method), ["password", "token_refresh"]);
    for (const call of calls) {
      assertEquals(call.caller, "supabase_auth_admin");
      const claims = call.event.claims as Record<string, unknown>;
      assertEquals(claims.sub, u.userId);
      assertEquals(claims.role, "authenticated");
      assert(!("organization_id" in claims), "the hook adds it, Supabase Auth does not");
      assertEquals((call.event.metadata as Record<string, unknown>).name, "customize-access-token");
    }

    const attempt = async (prefix: string) => {
      const v = await upsertDevUser({
        email: `${prefix}${crypto.randomUUID().slice(0, 8)}@example.org`,
        password: PASSWORD,
      });
      const res = await fetch(`${s.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: s.anonKey },
        body: JSON.stringify({ email: v.email, password: PASSWORD }),
      });
      const [left] = await sql()`select count(*)::int as n from auth.sessions where user_id = ${v.userId}`;
      return { status: res.status, body: await res.json(), sessions: left!.n as number };
    };
    const slow = await attempt("slow-");
    assertEquals(slow.status, 500, "an answer later than 2 s fails the sign-in");
    assertEquals(slow.body.error_code, "unexpected_failure");
    assertEquals(
      slow.body.msg,
      "Error running hook URI: pg-functions://postgres/public/test_access_token_hook",
    );
    assertEquals(slow.sessions, 0, "no session is left behind");
    const raised = await attempt("raise-");
    assertEquals([raised.status, raised.body.msg, raised.sessions], [
      500,
      "Error running hook URI: pg-functions://postgres/public/test_access_token_hook",
      0,
    ]);
    const refused = await attempt("refuse-");
    assertEquals([refused.status, refused.body.msg, refused.sessions], [403, "Not allowed here", 0]);
    const noAal = await attempt("noaal-");
    assertEquals(noAal.status, 500);
    assertMatch(
      noAal.body.msg,
      /^output claims do not conform to the expected schema: \n- \(root\): aal is required/,
    );
  } finally {
    await s.stop();
    await sql()`drop function if exists public.test_access_token_hook(jsonb)`;
    await sql()`drop table if exists public.test_hook_calls`;
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
