// On a hosted project, Supabase Auth must send through the service's own SMTP server (its default mailer
// reaches only the project team), or no church can confirm its account: every function's GET /health and
// the Platform console (GET /webhooks/platform/me, for platform administrators) say so when the
// deployment did not give the functions AUTH_SMTP_HOST (docs/operations.md#auth-mail). Locally (SUPABASE_URL
// on loopback, as npm run dev and the tests run) nothing is said: Auth's mail goes to the local catcher.
import { assertEquals } from "./helpers/assert.ts";
import { closeSql, createUser, sql, testDbUrl } from "./helpers/db.ts";
import { serve } from "./helpers/server.ts";
import { testConfig, tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadFunctions, router } from "../scripts/dev.ts";

const HOSTED = "https://abcdefghijklmnopqrst.supabase.co";

async function healthOf(env: Record<string, string>) {
  const deps = { config: await testConfig(env), sql: createSql(testDbUrl(), { max: 2 }) };
  const apps = await loadFunctions(deps);
  const server = await serve(router(apps));
  try {
    const out: Record<string, { status: number; body: Record<string, unknown> }> = {};
    for (const name of apps.keys()) {
      const res = await fetch(`${server.url}/functions/v1/${name}/health`);
      out[name] = { status: res.status, body: await res.json() };
    }
    return out;
  } finally {
    await server.close();
    await deps.sql.end();
  }
}

Deno.test("every function's health says when a hosted project's Auth has no SMTP server, and only then", async () => {
  const missing = await healthOf({ SUPABASE_URL: HOSTED });
  const names = Object.keys(missing);
  assertEquals(names.length >= 6, true, names.join());
  for (const [name, { status, body }] of Object.entries(missing)) {
    // The function works: 200, with the warning in the body a monitor reads.
    assertEquals(status, 200, name);
    assertEquals(body.status, "ok", name);
    const warnings = body.warnings as { code: string; message: string }[];
    assertEquals(warnings.map((w) => w.code), ["auth_mail_not_configured"], name);
    assertEquals(/AUTH_SMTP_HOST/.test(warnings[0]!.message), true, warnings[0]!.message);
  }
  const fine: Record<string, string>[] = [
    { SUPABASE_URL: HOSTED, AUTH_SMTP_HOST: "smtp.example.org" },
    {},
    { SUPABASE_URL: "http://127.0.0.1:54321" },
  ];
  for (const env of fine) {
    for (const [name, { status, body }] of Object.entries(await healthOf(env))) {
      assertEquals(
        { status, body },
        { status: 200, body: { status: "ok", function: name } },
        JSON.stringify(env),
      );
    }
  }
});

Deno.test("the Platform console tells platform administrators, and nobody else, that Auth mail is not configured", async () => {
  const issuer = `${HOSTED}/auth/v1`;
  for (const smtp of [undefined, "smtp.example.org"]) {
    const api = await startWebhooksApi({ SUPABASE_URL: HOSTED, ...(smtp ? { AUTH_SMTP_HOST: smtp } : {}) });
    try {
      const staff = await createUser(`ops-${crypto.randomUUID()}@platform.example`);
      await sql()`insert into public.platform_user_flags (user_id, is_platform_admin, is_superadmin)
                  values (${staff.id}, true, false)`;
      const other = await createUser();
      const me = await call(
        api.base,
        "GET",
        "/platform/me",
        asBearer(await tokenFor(staff, undefined, { issuer, claims: { is_platform_admin: true } })),
      );
      assertEquals(me.status, 200, me.text);
      assertEquals(
        me.data.warnings.map((w: { code: string }) => w.code),
        smtp ? [] : ["auth_mail_not_configured"],
        me.text,
      );
      const stranger = await call(
        api.base,
        "GET",
        "/platform/me",
        asBearer(await tokenFor(other, undefined, { issuer })),
      );
      assertEquals(stranger.data, { is_platform_admin: false, is_superadmin: false, warnings: [] });
    } finally {
      await api.close();
    }
  }
  await closeSql();
});
