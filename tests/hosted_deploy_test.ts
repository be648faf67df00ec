// The deploy steps of docs/operations.md, run as written against a database prepared as a hosted project's
// is (tests/helpers/hosted_db.ts: `postgres` not a superuser, Supabase's objects made by the platform's
// superuser, Vault's interface, nothing of ours), end with the configuration API answering a signed-in
// admin. The block runs in bash unchanged but for its `<project-ref>` placeholder; `npx supabase` is
// played by a shim: `db push` (both lines) runs the pinned CLI for real against that database (only
// `--db-url` added, as `link` would have chosen it), `secrets set` stores what the functions will get, and
// the commands that only talk to Supabase's Management API (login, link, config diff/push, functions
// deploy) are recorded (what config push sends is tests/config_push_test.ts's). The webhooks function then
// runs from its deployed entry point with only what a hosted project gives it; Supabase Auth is played by
// the local token service on the same database. The block's last step, the first platform administrator,
// runs as written once a person has signed up (as the block says they must), with the block's connection
// string pointed at the test's database; that person then opens the Platform console and creates the
// first organization, as a church does.
//
// Before the migrations gave edge_user its login, the same run ended with every configuration API call
// answering 500 ("role edge_user is not permitted to log in"), health saying ok, and db-bootstrap on the
// same database saying ready.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { markedBlock, ROOT } from "./helpers/markdown.ts";
import { type HostedDb, startHostedDb } from "./helpers/hosted_db.ts";
import { startFunctionProcess } from "./helpers/function_process.ts";
import { CLI_OFFLINE_ENV, SUPABASE_CLI } from "./helpers/supabase_cli.ts";
import { serve } from "./helpers/server.ts";
import { createSql, type Sql } from "../supabase/functions/_shared/db.ts";
import { type AuthService, createAuthService } from "../scripts/local-auth/service.ts";
import { localSigningKey } from "../scripts/local-auth/keys.ts";
import { loadAuthSettings } from "../scripts/local-auth/config.ts";

const REF = "abcdefghijklmnopqrst";

// `npx` for the block: see the file's header.
const NPX_SHIM = `#!/usr/bin/env bash
set -euo pipefail
[ "\${1:-}" = supabase ] || { echo "npx (test shim): only supabase is played, got: $*" >&2; exit 2; }
shift
printf '%s\\n' "$*" >>"$SHIM_DIR/commands"
case "$1 \${2:-}" in
  "db push")
    shift 2
    args=()
    for a in "$@"; do case "$a" in --linked | --password=* | -p=*) ;; *) args+=("$a") ;; esac; done
    exec "$SUPABASE_CLI" db push \${args[@]+"\${args[@]}"} --db-url "$HOSTED_DB_URL"
    ;;
  "secrets set")
    shift 2
    for a in "$@"; do printf '%s\\0' "$a" >>"$SHIM_DIR/secrets"; done
    ;;
esac
`;

interface Deployed {
  commands: string[];
  /** What `secrets set` stored: the functions' environment. */
  secrets: Record<string, string>;
  output: string;
}

/** Where the deploy block's last step begins: it needs an account, made between the two parts. */
const FIRST_ADMIN_STEP = "# The first platform administrator";

/** The deploy block of docs/operations.md: the steps before the first administrator, and that step. */
async function deployBlock(): Promise<{ deploy: string; firstAdmin: string }> {
  const block = markedBlock(await Deno.readTextFile(new URL("docs/operations.md", ROOT)), "deploy")
    .replaceAll("<project-ref>", REF);
  const at = block.indexOf(FIRST_ADMIN_STEP);
  assert(at > 0, `the deploy block ends with the step that begins "${FIRST_ADMIN_STEP}"`);
  return { deploy: block.slice(0, at), firstAdmin: block.slice(at) };
}

/** Runs `script` (a part of the deploy block) in bash with `npx` played by the shim. */
async function runPart(script: string, db: HostedDb, dir: string, name: string): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", script],
    cwd: ROOT.pathname,
    env: {
      PATH: `${dir}:${Deno.env.get("PATH")}`,
      SHIM_DIR: dir,
      SUPABASE_CLI,
      HOSTED_DB_URL: db.url,
      PGSSLMODE: "disable", // the test cluster has no TLS
      ...CLI_OFFLINE_ENV,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  const output = d.decode(out.stdout) + d.decode(out.stderr);
  assertEquals(out.code, 0, `${name} failed:\n${output}`);
  return output;
}

/** Runs the deploy block of docs/operations.md, but for its last step, against `db`. */
async function runDeployBlock(db: HostedDb, deploy: string): Promise<Deployed> {
  const dir = await Deno.makeTempDir({ prefix: "deploy-shim-" });
  try {
    await Deno.writeTextFile(`${dir}/npx`, NPX_SHIM, { mode: 0o755 });
    const output = await runPart(deploy, db, dir, "the deploy block");
    const secrets: Record<string, string> = {};
    for (const pair of (await Deno.readTextFile(`${dir}/secrets`).catch(() => "")).split("\0")) {
      const eq = pair.indexOf("=");
      if (eq > 0) secrets[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const commands = (await Deno.readTextFile(`${dir}/commands`)).trim().split("\n");
    return { commands, secrets, output };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The block's last step as written, for the account `email`: only its placeholders filled in (the
 * dashboard's connection string becomes the test database's, as postgres).
 */
async function runFirstAdminStep(db: HostedDb, step: string, email: string): Promise<string> {
  const connection = /'postgresql:\/\/postgres:<database password>@[^']+'/;
  assert(connection.test(step), `the step sets the dashboard's connection string:\n${step}`);
  assert(step.includes("<your e-mail>"), step);
  const script = step.replace(connection, `'${db.url}'`).replaceAll("<your e-mail>", email);
  const dir = await Deno.makeTempDir({ prefix: "first-admin-" });
  try {
    return await runPart(script, db, dir, "the first administrator's step");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Supabase Auth played by the local token service, on the project's database as the platform's role. */
async function startAuth(admin: Sql) {
  const keys = await Deno.makeTempDir({ prefix: "hosted-auth-" });
  const anonKey = `sb_publishable_${crypto.randomUUID()}`;
  const service = Promise.withResolvers<AuthService>();
  const server = await serve(async (req) => {
    const path = new URL(req.url).pathname;
    if (!path.startsWith("/auth/v1/")) return new Response("not found", { status: 404 });
    return (await service.promise)(req, path.slice("/auth/v1".length), "127.0.0.1");
  });
  service.resolve(createAuthService({
    sql: admin,
    issuer: `${server.url}/auth/v1`,
    anonKey,
    signingKey: await localSigningKey(new URL(`file://${keys}/`)),
    settings: await loadAuthSettings({}),
  }));
  return {
    url: server.url,
    anonKey,
    close: async () => {
      await server.close();
      await Deno.remove(keys, { recursive: true });
    },
  };
}

async function signIn(authUrl: string, anonKey: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${authUrl}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body = await res.json();
  assertEquals(res.status, 200, JSON.stringify(body));
  return body.access_token;
}

Deno.test({
  name:
    "the deploy steps of docs/operations.md, run as written on a hosted-like database, end with a first administrator who creates the first organization and uses it",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const db = await startHostedDb();
    const admin = createSql(db.adminUrl, { max: 2 });
    let auth: Awaited<ReturnType<typeof startAuth>> | undefined;
    try {
      // As the platform leaves it: postgres is not a superuser, and nothing of ours exists yet.
      assertEquals(
        (await db.psqlAdmin("select rolsuper from pg_roles where rolname = 'postgres'")).trim(),
        "f",
      );
      const block = await deployBlock();
      const deployed = await runDeployBlock(db, block.deploy);

      // The block's own order: linked first, secrets before the database (the same dispatch secret goes
      // to both), the functions last.
      const index = (prefix: string) => deployed.commands.findIndex((c) => c.startsWith(prefix));
      for (const step of ["link", "secrets set", "db push", "config push", "functions deploy"]) {
        assert(index(step) >= 0, `the deploy steps run supabase ${step}: ${deployed.commands.join("; ")}`);
      }
      assert(index("link") < index("secrets set") && index("secrets set") < index("db push"));
      assert(index("db push") < index("functions deploy"));

      // db push applied every migration and wrote the Vault secrets from the same variables.
      const migrations = [...Deno.readDirSync(new URL("supabase/migrations/", ROOT))]
        .filter((e) => e.name.endsWith(".sql")).length;
      const [state] = await admin<{ applied: number; login: boolean; url: string; secret: string }[]>`
        select (select count(*)::int from supabase_migrations.schema_migrations) as applied,
               (select rolcanlogin from pg_roles where rolname = 'edge_user') as login,
               (select decrypted_secret from vault.decrypted_secrets where name = 'project_url') as url,
               (select decrypted_secret from vault.decrypted_secrets where name = 'webhook_dispatch_secret') as secret`;
      assertEquals(state!.applied, migrations, deployed.output);
      assertEquals(state!.login, true, "edge_user can log in after db push");
      assertEquals(state!.url, `https://${REF}.supabase.co`);
      assert(deployed.secrets.WEBHOOK_DISPATCH_SECRET, "secrets set stores WEBHOOK_DISPATCH_SECRET");
      assertEquals(state!.secret, deployed.secrets.WEBHOOK_DISPATCH_SECRET, "Vault and the function agree");
      assert(
        (deployed.secrets.INBOUND_REPLAY_SECRET ?? "").length >= 32,
        "a replay secret of 32+ characters",
      );

      // The first person signs up (the settings UI's "Create an account"), then the block's last step
      // makes them the platform's first administrator.
      auth = await startAuth(admin);
      const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.org`;
      const password = "hosted-admin-password";
      const signup = await fetch(`${auth.url}/auth/v1/signup`, {
        method: "POST",
        headers: { apikey: auth.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email, password }),
      });
      assertEquals(signup.status, 200, await signup.text());
      const granted = await runFirstAdminStep(db, block.firstAdmin, email);
      assert(granted.includes(`${email} (`) && granted.includes("is a platform superadmin"), granted);
      const [flags] = await admin<{ is_superadmin: boolean }[]>`
        select f.is_superadmin from public.platform_user_flags f join auth.users u on u.id = f.user_id
        where u.email = ${email}`;
      assertEquals(flags?.is_superadmin, true, "the block's last step made the person a superadmin");

      // The function as deployed: only the stored secrets and what the platform sets.
      const fn = await startFunctionProcess("webhooks", {
        ...deployed.secrets,
        SUPABASE_URL: auth.url,
        SUPABASE_DB_URL: db.url,
        SUPABASE_ANON_KEY: auth.anonKey,
        SUPABASE_SERVICE_ROLE_KEY: `service-${crypto.randomUUID()}`,
      });
      try {
        const log = await fn.waitForLog(/database pool/);
        assertMatch(log, /"msg":"database pools log in".*"user":"edge_user"/);
        const health = await fetch(`${fn.base}/health`);
        assertEquals(health.status, 200, await health.text());
        const call = async (token: string, path: string, body?: unknown) => {
          const res = await fetch(`${fn.base}${path}`, {
            method: body === undefined ? "GET" : "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          const text = await res.text();
          return { status: res.status, text, json: () => JSON.parse(text) };
        };
        // The superadmin opens the Platform console; nobody's organization exists yet.
        const first = await signIn(auth.url, auth.anonKey, email, password);
        const platform = await call(first, "/platform/organizations");
        assertEquals(platform.status, 200, `${platform.text}\n${fn.output()}`);
        // The first church sets itself up: the signed-in person creates it and is its admin.
        const created = await call(first, "/organizations", {
          name: "First Church",
          time_zone: "Europe/London",
        });
        assertEquals(created.status, 201, `${created.text}\n${fn.output()}`);
        assertEquals(created.json().role, "admin");
        const token = await signIn(auth.url, auth.anonKey, email, password);
        for (const path of ["/me", "/endpoints", "/platform/organizations"]) {
          const res = await call(token, path);
          assertEquals(res.status, 200, `${path}: ${res.text}\n${fn.output()}`);
        }
        const me = (await call(token, "/me")).json();
        assertEquals(
          me.active_organization_id,
          created.json().id,
          "the next sign-in lands in the new organization",
        );
      } finally {
        await fn.stop();
      }

      // The same function when edge_user cannot log in: said at start and by health, 503 on every call.
      await db.psqlAdmin("alter role edge_user nologin");
      const broken = await startFunctionProcess("webhooks", {
        ...deployed.secrets,
        SUPABASE_URL: auth.url,
        SUPABASE_DB_URL: db.url,
      });
      try {
        const log = await broken.waitForLog(/database pool/);
        assertMatch(log, /"msg":"database pool cannot log in".*"pool":"user".*not permitted to log in/);
        const health = await fetch(`${broken.base}/health`);
        const body = await health.json();
        assertEquals(health.status, 503);
        assertEquals(body.error.code, "database_login_failed");
        assertMatch(body.error.message, /edge_user.*db push/);
        const token = await signIn(auth.url, auth.anonKey, email, password);
        const res = await fetch(`${broken.base}/endpoints`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assertEquals(res.status, 503, "a refused login is ours to fix: 503, so callers retry");
        assertEquals((await res.json()).error.code, "database_login_failed");
      } finally {
        await broken.stop();
      }

      // And db-bootstrap, run on that database, ends with one line saying so instead of "ready" (it logs in
      // as edge_user the way the functions will). Before, it said ready.
      const bootstrap = await new Deno.Command("bash", {
        args: ["scripts/db-bootstrap.sh", db.adminUrl],
        cwd: ROOT.pathname,
        env: { PGPASSWORD: "" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(bootstrap.stderr) + new TextDecoder().decode(bootstrap.stdout);
      assertEquals(bootstrap.code, 1, said);
      assertMatch(
        said,
        /^db-bootstrap: edge_user \(the configuration API's user-request pool\) cannot log in to postgresql:\/\/supabase_admin:\*\*\*@[^ ]+: .*"edge_user" is not permitted to log in; allow it in pg_hba\.conf/m,
      );
      assert(!/is ready/.test(said), said);
    } finally {
      await auth?.close();
      await admin.end({ timeout: 5 });
      await db.close();
    }
  },
});
