// The local stack itself: the dev server mounts every function as deployed, health checks reach the
// database, the raw-body reader and signature check behave, the bootstrap fails in one clear line.
import { assert, assertEquals, assertMatch, assertRejects } from "./helpers/assert.ts";
import { closeSql, sql, testDbUrl } from "./helpers/db.ts";
import { serve } from "./helpers/server.ts";
import { startDevStack } from "./helpers/dev_stack.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { loadFunctions, router } from "../scripts/dev.ts";
import { parseJson, readRawBody } from "../supabase/functions/_shared/body.ts";
import { AppError } from "../supabase/functions/_shared/errors.ts";
import { hmacSha256Hex, verifyHexSignature } from "../supabase/functions/_shared/hmac.ts";

const root = new URL("../", import.meta.url).pathname;

Deno.test("dev router serves every function at /functions/v1/<name> with a live database", async () => {
  const deps = {
    config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }),
    sql: createSql(testDbUrl(), { max: 2 }),
  };
  const apps = await loadFunctions(deps);
  assert(apps.size >= 1, "at least one function is served");
  const server = await serve(router(apps));
  try {
    for (const name of apps.keys()) {
      const res = await fetch(`${server.url}/functions/v1/${name}/health`);
      assertEquals(res.status, 200, name);
      assertEquals(await res.json(), { status: "ok", function: name });
    }
    const missing = await fetch(`${server.url}/functions/v1/no-such-function/x`);
    assertEquals(missing.status, 404);
    assertEquals((await missing.json()).error.code, "function_not_found");
    const name = [...apps.keys()][0]!;
    const noRoute = await fetch(`${server.url}/functions/v1/${name}/no/such/route`);
    assertEquals(noRoute.status, 404);
    assertEquals((await noRoute.json()).error.code, "not_found");
  } finally {
    await server.close();
    await deps.sql.end();
  }
});

Deno.test("health answers 503 with a JSON error when the database is down", async () => {
  const deadUrl = "postgresql://postgres@127.0.0.1:1/postgres";
  const deps = { config: loadConfig({ SUPABASE_DB_URL: deadUrl }), sql: createSql(deadUrl, { max: 1 }) };
  const apps = await loadFunctions(deps);
  const server = await serve(router(apps));
  try {
    const name = [...apps.keys()][0]!;
    const res = await fetch(`${server.url}/functions/v1/${name}/health`);
    assertEquals(res.status, 503);
    assertEquals((await res.json()).error.code, "service_unavailable");
  } finally {
    await server.close();
    await deps.sql.end();
  }
});

Deno.test("the dev server starts on its own, serves, and shuts down cleanly on SIGINT", async () => {
  const stack = await startDevStack();
  const res = await fetch(`${stack.url}/functions/v1/webhooks/health`);
  assertEquals(res.status, 200);
  await res.body?.cancel();
  await stack.stop(); // rejects unless the server exits 0
});

Deno.test("readRawBody returns the exact bytes and refuses a body past the limit while streaming", async () => {
  const bytes = new Uint8Array([0x7b, 0x7d, 0xff, 0x00]);
  assertEquals(await readRawBody(new Request("http://x", { method: "POST", body: bytes })), bytes);

  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(64 * 1024));
    },
  });
  const err = await assertRejects(() =>
    readRawBody(
      new Request("http://x", { method: "POST", body: endless, duplex: "half" } as RequestInit),
      1024 * 1024,
    )
  );
  assert(err instanceof AppError && err.status === 413);
  assert(pulled <= 20, `stopped reading soon after the limit (pulled ${pulled} chunks)`);

  const declared = new Request("http://x", {
    method: "POST",
    body: "x",
    headers: { "content-length": String(2 * 1024 * 1024) },
  });
  const err2 = await assertRejects(() => readRawBody(declared));
  assert(err2 instanceof AppError && err2.status === 413);
});

Deno.test("parseJson rejects invalid UTF-8 and invalid JSON as 400", () => {
  for (const raw of [new Uint8Array([0xff, 0xfe]), new TextEncoder().encode("{nope")]) {
    try {
      parseJson(raw);
      throw new Error("accepted");
    } catch (e) {
      assert(e instanceof AppError && e.status === 400 && e.code === "invalid_json");
    }
  }
  assertEquals(parseJson(new TextEncoder().encode('{"a":1}')), { a: 1 });
});

Deno.test("verifyHexSignature: exact HMAC over the raw bytes, constant-time, tolerant only of case and prefix", async () => {
  const body = new TextEncoder().encode('{"event":"charged"}');
  const sig = await hmacSha256Hex("s3cret", body);
  assertMatch(sig, /^[0-9a-f]{64}$/);
  assert(await verifyHexSignature("s3cret", body, sig));
  assert(await verifyHexSignature("s3cret", body, sig.toUpperCase()));
  assert(await verifyHexSignature("s3cret", body, `sha256=${sig}`));
  assert(!(await verifyHexSignature("other", body, sig)), "another secret");
  assert(!(await verifyHexSignature("s3cret", body, sig.slice(0, 62))), "truncated");
  assert(!(await verifyHexSignature("s3cret", body, "")), "empty");
  assert(!(await verifyHexSignature("s3cret", body, null)), "missing");
  assert(!(await verifyHexSignature("s3cret", body, sig.replace(/.$/, "g"))), "not hex");
  const spaced = new TextEncoder().encode('{"event": "charged"}');
  assert(!(await verifyHexSignature("s3cret", spaced, sig)), "re-encoded body does not verify");
});

Deno.test("db-bootstrap ends with one clear line for an unreachable database", async () => {
  const out = await new Deno.Command("bash", {
    args: ["scripts/db-bootstrap.sh", "postgresql://postgres:hunter2@127.0.0.1:1/postgres"],
    cwd: root,
  }).output();
  assertEquals(out.code, 1);
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assertEquals(stderr.split("\n").length, 1, stderr);
  assertMatch(
    stderr,
    /^db-bootstrap: cannot connect to postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres/,
  );
  assert(!stderr.includes("hunter2"), "password is not printed");
});

Deno.test("db-bootstrap refused for want of a password says how to give one or trust the local cluster", async () => {
  // The run's cluster asks for a password, as Debian's default cluster does on 127.0.0.1 (scram-sha-256).
  const url = new URL(testDbUrl());
  url.password = "not-the-password";
  const out = await new Deno.Command("bash", {
    args: ["scripts/db-bootstrap.sh", url.href],
    cwd: root,
    env: { PGPASSWORD: "" },
  }).output();
  assertEquals(out.code, 1);
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assertMatch(stderr, /^db-bootstrap: cannot connect to .*password authentication failed/);
  assertMatch(
    stderr,
    /export SUPABASE_DB_URL=postgresql:\/\/postgres:<password>@127\.0\.0\.1:5432\/postgres/,
  );
  assertMatch(stderr, /host all all 127\.0\.0\.1\/32 trust/);
  assert(!stderr.includes("not-the-password"), "the password is not printed");
});

Deno.test("db-bootstrap refuses a database without pg_cron preloaded, saying what to run", async () => {
  // The test cluster's template database stands in for "a database pg_cron does not run in".
  const url = testDbUrl().replace(/\/postgres$/, "/template1");
  const out = await new Deno.Command("bash", { args: ["scripts/db-bootstrap.sh", url], cwd: root }).output();
  assertEquals(out.code, 1);
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assertEquals(stderr.split("\n").length, 1, stderr);
  assertMatch(stderr, /pg_cron runs only in database 'postgres'/);
});

Deno.test("db-bootstrap run again keeps the migrations' revoked privileges: a new table is not truncatable by users", async () => {
  // npm run dev bootstraps on every start; the platform script must not grant back TRUNCATE, REFERENCES
  // and TRIGGER on tables created after that.
  const out = await new Deno.Command("bash", { args: ["scripts/db-bootstrap.sh", testDbUrl()], cwd: root })
    .output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const rows = await sql().begin(async (tx) => {
    await tx`create table public.bootstrap_again_probe (id int)`;
    const found = await tx<{ role: string; privilege: string }[]>`
      select r.role, p.privilege
      from (values ('anon'), ('authenticated')) r(role)
      cross join (values ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) p(privilege)
      where has_table_privilege(r.role, 'public.bootstrap_again_probe', p.privilege)`;
    await tx`drop table public.bootstrap_again_probe`;
    return found;
  });
  assertEquals(rows.map((r) => `${r.role} ${r.privilege}`), []);
});

Deno.test("cleanup", async () => {
  await closeSql();
});

Deno.test("the user pool starts every session without privileges; withClaims grants exactly the claims' access", async () => {
  const { withClaims } = await import("../supabase/functions/_shared/db.ts");
  const userSql = createSql(loadConfig({ SUPABASE_DB_URL: testDbUrl() }).userDbUrl, { max: 1 });
  try {
    const outside = await assertRejects(() => userSql`select count(*) from public.organizations`);
    assertEquals((outside as { code?: string }).code, "42501", "outside a transaction: permission denied");
    const [who] = await withClaims(
      userSql,
      { sub: crypto.randomUUID(), role: "authenticated" },
      (tx) => tx<{ current_user: string }[]>`select current_user`,
    );
    assertEquals(who!.current_user, "authenticated");
    const [after] = await userSql<{ current_user: string }[]>`select current_user`;
    assertEquals(after!.current_user, "edge_user", "the role reverts when the transaction ends");
    // It can become anon or authenticated only: never the service role or the database owner.
    for (const role of ["service_role", "postgres"]) {
      const refused = await assertRejects(() =>
        userSql.begin((tx) => tx`select set_config('role', ${role}, true)`)
      );
      assertEquals((refused as { code?: string }).code, "42501", role);
    }
  } finally {
    await userSql.end();
  }
});

Deno.test("the user pool's URL: edge_user on the same database, a pooler's project suffix kept; prepared statements off on 6543", () => {
  const direct = loadConfig({
    SUPABASE_DB_URL: "postgresql://postgres:owner-pw@db.example.org:5432/postgres",
  });
  assertEquals(direct.userDbUrl, "postgresql://edge_user@db.example.org:5432/postgres");
  assertEquals(direct.dbPrepare, true);
  const pooled = loadConfig({
    SUPABASE_DB_URL: "postgresql://postgres.abcdef:owner-pw@pooler.example.org:6543/postgres",
    USER_DB_PASSWORD: "user pw",
  });
  assertEquals(pooled.userDbUrl, "postgresql://edge_user.abcdef:user%20pw@pooler.example.org:6543/postgres");
  assertEquals(pooled.dbPrepare, false);
  assertEquals(
    loadConfig({ SUPABASE_DB_URL: "postgresql://p@h:6543/d", DB_PREPARE: "true" }).dbPrepare,
    true,
  );
  assertEquals(loadConfig({ SUPABASE_DB_URL: "postgresql://p@h:5432/d?prepare=false" }).dbPrepare, false);
  assertEquals(
    loadConfig({ SUPABASE_DB_URL: "postgresql://p@h/d", USER_DB_URL: "postgresql://u@h/d" }).userDbUrl,
    "postgresql://u@h/d",
  );
});

Deno.test("a backend killed mid-transaction rejects that request as 503 and the process lives on", async () => {
  const { withClaims } = await import("../supabase/functions/_shared/db.ts");
  const { toAppError } = await import("../supabase/functions/_shared/errors.ts");
  const userSql = createSql(loadConfig({ SUPABASE_DB_URL: testDbUrl() }).userDbUrl, { max: 1 });
  const admin = createSql(testDbUrl(), { max: 1 });
  try {
    let pid: number | undefined;
    const request = withClaims(userSql, { sub: crypto.randomUUID(), role: "authenticated" }, async (tx) => {
      const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      pid = row!.pid;
      await tx`select pg_sleep(5)`;
    });
    while (pid === undefined) await new Promise((r) => setTimeout(r, 20));
    await admin`select pg_terminate_backend(${pid})`;
    const err = await assertRejects(() => request);
    assertEquals(toAppError(err).status, 503);
    // The driver's stray write from its timer fires after the rejection; give it the chance to.
    await new Promise((r) => setTimeout(r, 200));
    const [again] = await withClaims(
      userSql,
      { sub: crypto.randomUUID(), role: "authenticated" },
      (tx) => tx<{ ok: number }[]>`select 1 as ok`,
    );
    assertEquals(again!.ok, 1, "the pool reconnects and serves the next request");
  } finally {
    await Promise.all([userSql.end({ timeout: 1 }), admin.end()]);
  }
});
