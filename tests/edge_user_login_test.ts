// The configuration API's user-request pool logs in as edge_user with the password the migrations set,
// read from the database, on any database the functions can reach with SUPABASE_DB_URL, a password-
// protected one included. When it cannot log in, the dev server does not say ready, and a deployed
// function says so in its log at start and in /health, and answers 503 (not 500) meanwhile.
//
// Before: `npm run dev` against a password-protected SUPABASE_DB_URL said ready and answered 500 to every
// configuration API call ("password authentication failed for user edge_user"), with nothing said at
// start; a deployed function's health said ok.
import { assert, assertEquals, assertMatch, assertRejects } from "./helpers/assert.ts";
import { closeSql, createTenant, testDbUrl } from "./helpers/db.ts";
import { testConfig, tokenFor } from "./helpers/tokens.ts";
import { startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { startFunctionProcess } from "./helpers/function_process.ts";

// The run's database asks for a password (pg_virtualenv's clusters do). PGPASSWORD would hand its
// password to any login that lacks one, which is how a wrong setup once passed here: it is emptied.
const NO_PGPASSWORD = { PGPASSWORD: "" };

Deno.test("npm run dev on a password-protected database, with no PGPASSWORD: a signed-in admin gets 200 from the configuration API", async () => {
  assert(new URL(testDbUrl()).password, "the run's database URL carries a password");
  const stack = await startDevStack({ env: { ...NO_PGPASSWORD, WEB_DEV: "false", MAIL_DEV: "false" } });
  try {
    const run = crypto.randomUUID().slice(0, 8);
    const admin = await upsertDevUser({
      email: `admin-${run}@example.org`,
      password: "login-test-password",
      organization: `Login Church ${run}`,
      role: "admin",
    });
    const signIn = await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: admin.email, password: "login-test-password" }),
    });
    const { access_token } = await signIn.json();
    for (const path of ["/me", "/endpoints", "/health"]) {
      const res = await fetch(`${stack.url}/functions/v1/webhooks${path}`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      const text = await res.text();
      assertEquals(res.status, 200, `${path}: ${text}\n${stack.output()}`);
    }
  } finally {
    await stack.stop();
    await closeSql();
  }
});

Deno.test("the dev server does not say ready when edge_user cannot log in, and says why", async () => {
  const failure = await assertRejects(() =>
    startDevStack({
      env: {
        ...NO_PGPASSWORD,
        USER_DB_PASSWORD: "not-edge-users-password",
        WEB_DEV: "false",
        MAIL_DEV: "false",
      },
    })
  );
  const out = (failure as Error).message;
  assertMatch(out, /dev: the user-request pool \(edge_user\) cannot log in: password authentication failed/);
  assert(!/dev server ready/.test(out), out);
  assert(!out.includes("not-edge-users-password"), "the password is not printed");
});

Deno.test("a deployed function whose user pool cannot log in says so at start and in /health, and answers 503", async () => {
  const a = await createTenant();
  const token = await tokenFor(a.admin, a.organizationId);
  const fn = await startFunctionProcess("webhooks", {
    SUPABASE_DB_URL: testDbUrl(),
    SUPABASE_JWKS: (await testConfig()).jwks!,
    USER_DB_PASSWORD: "not-edge-users-password",
  });
  try {
    const log = await fn.waitForLog(/database pool/);
    assertMatch(
      log,
      /"level":"error","msg":"database pool cannot log in","function":"webhooks","pool":"user","code":"database_login_failed"/,
    );
    assert(!log.includes("not-edge-users-password"), "the password is not logged");
    const health = await fetch(`${fn.base}/health`);
    const body = await health.json();
    assertEquals(health.status, 503);
    assertEquals(body.error.code, "database_login_failed");
    assertEquals(body.error.details, { pool: "user" });
    assertMatch(body.error.message, /edge_user.*password authentication failed.*USER_DB_PASSWORD/);
    // A signed-in admin's call: 503 (retry later; ours to fix), never 500.
    const res = await fetch(`${fn.base}/endpoints`, { headers: { authorization: `Bearer ${token}` } });
    assertEquals(res.status, 503);
    assertEquals((await res.json()).error.code, "database_login_failed");
  } finally {
    await fn.stop();
    await closeSql();
  }
  // The same entry point with nothing but SUPABASE_DB_URL: both pools log in (the password is read from
  // the database), said once at start.
  const ok = await startFunctionProcess("webhooks", { SUPABASE_DB_URL: testDbUrl() });
  try {
    const log = await ok.waitForLog(/database pool/);
    assertMatch(
      log,
      /"msg":"database pools log in","function":"webhooks","pools":\{"server":"postgres","user":"edge_user"\}/,
    );
    assertEquals((await fetch(`${ok.base}/health`)).status, 200);
  } finally {
    await ok.stop();
  }
});

Deno.test("functions that act for no user check only their server pool", async () => {
  const fn = await startFunctionProcess("checkout-webhook", {
    SUPABASE_DB_URL: testDbUrl(),
    USER_DB_PASSWORD: "not-edge-users-password",
  });
  try {
    const log = await fn.waitForLog(/database pool/);
    assertMatch(
      log,
      /"msg":"database pools log in","function":"checkout-webhook","pools":\{"server":"postgres"\}/,
    );
    const health = await fetch(`${fn.base}/health`);
    assertEquals(await health.json(), { status: "ok", function: "checkout-webhook" });
  } finally {
    await fn.stop();
  }
});
