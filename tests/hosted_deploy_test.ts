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
import { freePort, serve } from "./helpers/server.ts";
import { createSql, type Sql } from "../supabase/functions/_shared/db.ts";
import { type AuthService, createAuthService } from "../scripts/local-auth/service.ts";
import { localSigningKey } from "../scripts/local-auth/keys.ts";
import { loadAuthSettings } from "../scripts/local-auth/config.ts";
import { createAuthMailer } from "../scripts/local-auth/mailer.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { setupWarnings } from "../supabase/functions/_shared/warnings.ts";
import { parse } from "smol-toml";

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
  "config push")
    # As the operator runs it (config.toml's project_id is their ref), against the Management API
    # stand-in, which records what it is asked to write, applies nothing and answers 503.
    "$SUPABASE_CLI" config push --project-ref "$PRODUCTION_REF" --profile "$MGMT_PROFILE" --yes \\
      >>"$SHIM_DIR/config-push.log" 2>&1 || true
    ;;
esac
`;

// `npm` for the block: `npm ci` is recorded (node_modules is installed already), the rest is npm.
const NPM_SHIM = `#!/usr/bin/env bash
set -euo pipefail
if [ "\${1:-}" = ci ]; then printf 'npm %s\\n' "$*" >>"$SHIM_DIR/commands"; exit 0; fi
exec "$REAL_NPM" "$@"
`;

interface Deployed {
  commands: string[];
  /** What `secrets set` stored: the functions' environment. */
  secrets: Record<string, string>;
  /** What `config push` asked the Management API to write to Supabase Auth. */
  auth: Record<string, unknown>;
  output: string;
}

/**
 * Where the block's Auth SMTP server is: a mail catcher on a loopback address of its own, on the port
 * config.toml names (465), that wants this user and password.
 */
interface AuthSmtp {
  host: string;
  user: string;
  pass: string;
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
async function runPart(
  script: string,
  db: HostedDb,
  dir: string,
  name: string,
  env: Record<string, string> = {},
): Promise<string> {
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
      ...env,
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

/**
 * The block's Auth SMTP placeholders filled in: the catcher's address, port, user and password where an
 * operator writes their provider's.
 */
function withAuthSmtp(deploy: string, smtp: AuthSmtp): string {
  const placeholders: [string, string][] = [
    ["AUTH_SMTP_HOST=smtp.example.org", `AUTH_SMTP_HOST=${smtp.host}`],
    ["AUTH_SMTP_USER='<smtp user>'", `AUTH_SMTP_USER='${smtp.user}'`],
    ["AUTH_SMTP_PASS='<smtp password>'", `AUTH_SMTP_PASS='${smtp.pass}'`],
  ];
  for (const [placeholder, value] of placeholders) {
    assert(deploy.includes(placeholder), `the deploy steps export ${placeholder}`);
    deploy = deploy.replace(placeholder, value);
  }
  return deploy;
}

/** A read-only Management API stand-in but for the writes it records (and answers 503: never applied). */
async function startManagementApi() {
  const writes: { path: string; body: Record<string, unknown> }[] = [];
  const server = await serve(async (req) => {
    const { pathname } = new URL(req.url);
    if (req.method === "GET" && /^\/v2\/projects\/[a-z]{20}\/config$/.test(pathname)) {
      return Response.json({ data: { attributes: { auth: { site_url: "https://fresh.example.org" } } } });
    }
    if (req.method === "GET") return Response.json({});
    writes.push({ path: pathname, body: await req.json().catch(() => ({})) });
    return Response.json({ message: "stand-in: recorded, not applied" }, { status: 503 });
  });
  return { url: server.url, writes, close: () => server.close() };
}

/** Runs the deploy block of docs/operations.md, but for its last step, against `db`. */
async function runDeployBlock(db: HostedDb, deploy: string, smtp: AuthSmtp): Promise<Deployed> {
  const dir = await Deno.makeTempDir({ prefix: "deploy-shim-" });
  const api = await startManagementApi();
  try {
    await Deno.writeTextFile(`${dir}/npx`, NPX_SHIM, { mode: 0o755 });
    await Deno.writeTextFile(`${dir}/npm`, NPM_SHIM, { mode: 0o755 });
    await Deno.writeTextFile(
      `${dir}/profile.yaml`,
      `name: management-api-stand-in\napi_url: ${api.url}\ndashboard_url: ${api.url}/dashboard\nproject_host: supabase.co\n`,
    );
    const realNpm = new TextDecoder().decode(
      (await new Deno.Command("bash", { args: ["-c", "command -v npm"], stdout: "piped" }).output()).stdout,
    ).trim();
    const config = parse(await Deno.readTextFile(new URL("supabase/config.toml", ROOT))) as {
      remotes: { production: { project_id: string } };
    };
    const output = await runPart(withAuthSmtp(deploy, smtp), db, dir, "the deploy block", {
      REAL_NPM: realNpm,
      MGMT_PROFILE: `${dir}/profile.yaml`,
      PRODUCTION_REF: config.remotes.production.project_id,
      SUPABASE_ACCESS_TOKEN: `sbp_${"0".repeat(40)}`,
    });
    const secrets: Record<string, string> = {};
    for (const pair of (await Deno.readTextFile(`${dir}/secrets`).catch(() => "")).split("\0")) {
      const eq = pair.indexOf("=");
      if (eq > 0) secrets[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const commands = (await Deno.readTextFile(`${dir}/commands`)).trim().split("\n");
    const pushed = api.writes.find((w) => /^\/v1\/projects\/[a-z]{20}\/config\/auth$/.test(w.path));
    const log = await Deno.readTextFile(`${dir}/config-push.log`).catch(() => "");
    assert(pushed, `config push wrote Auth's settings:\n${log}`);
    return { commands, secrets, auth: pushed.body, output };
  } finally {
    await api.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * MailDev, wanting `user` and `pass` over SMTP, as the block's Auth SMTP provider: on port 465, as
 * config.toml writes it, of a loopback address no other run picks (127.x.y.z; a port under 1024 needs
 * root, as the test suite runs).
 */
async function startMailCatcher(user: string, pass: string) {
  const host = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${
    1 + Math.floor(Math.random() * 250)
  }`;
  const [smtpPort, webPort] = [465, freePort()];
  const child = new Deno.Command("node", {
    args: [
      new URL("node_modules/maildev/dist/bin/maildev.js", ROOT).pathname,
      "--smtp",
      String(smtpPort),
      "--web",
      String(webPort),
      "--ip",
      host,
      "--web-ip",
      "127.0.0.1",
      "--incoming-user",
      user,
      "--incoming-pass",
      pass,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = (async () => {
    for await (const t of child.stdout.pipeThrough(new TextDecoderStream())) out += t;
  })();
  const drainErr = (async () => {
    for await (const t of child.stderr.pipeThrough(new TextDecoderStream())) out += t;
  })();
  let exited = false;
  child.status.then(() => exited = true);
  // Node takes a while to start on a loaded machine: up to 2 minutes, unless it ends first.
  for (let i = 0; i < 1200 && !exited && !/Web Interface[\s\S]*URL:/.test(out); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert(/Web Interface[\s\S]*URL:/.test(out), `MailDev did not start: ${out}`);
  type Mail = { subject: string; html: string; from: { address: string }[]; to: { address: string }[] };
  return {
    host,
    /** The mails that reached `address`, waiting up to 30 s for the first. */
    async mailsTo(address: string): Promise<Mail[]> {
      for (let i = 0; i < 150; i++) {
        const list = await (await fetch(`http://127.0.0.1:${webPort}/api/email`)).json() as Mail[];
        const found = list.filter((m) => m.to.some((t) => t.address === address));
        if (found.length > 0) return found;
        await new Promise((r) => setTimeout(r, 200));
      }
      return [];
    },
    close: async () => {
      child.kill("SIGTERM");
      await child.status;
      await Promise.all([drain, drainErr]);
    },
  };
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

/**
 * Supabase Auth played by the local token service, on the project's database as the platform's role,
 * configured as `config push` configured the project's (`pushed`: the settings it wrote): confirmations
 * on, and its mail through the SMTP server the deploy steps named.
 */
async function startAuth(admin: Sql, pushed: Record<string, unknown>) {
  const keys = await Deno.makeTempDir({ prefix: "hosted-auth-" });
  const anonKey = `sb_publishable_${crypto.randomUUID()}`;
  const service = Promise.withResolvers<AuthService>();
  const server = await serve(async (req) => {
    const path = new URL(req.url).pathname;
    if (!path.startsWith("/auth/v1/")) return new Response("not found", { status: 404 });
    return (await service.promise)(req, path.slice("/auth/v1".length), "127.0.0.1");
  });
  // GoTrue's variables for the Management API's fields (what Supabase Auth runs with on the project).
  const settings = await loadAuthSettings({
    GOTRUE_MAILER_AUTOCONFIRM: String(pushed.mailer_autoconfirm),
    GOTRUE_SITE_URL: String(pushed.site_url),
    GOTRUE_PASSWORD_MIN_LENGTH: String(pushed.password_min_length),
  });
  const smtpUrl = `smtp://${encodeURIComponent(String(pushed.smtp_user))}:${
    encodeURIComponent(String(pushed.smtp_pass))
  }@${pushed.smtp_host}:${pushed.smtp_port}`;
  const mailer = await createAuthMailer(settings, {
    smtpUrl,
    from: `${pushed.smtp_sender_name} <${pushed.smtp_admin_email}>`,
  });
  service.resolve(createAuthService({
    sql: admin,
    issuer: `${server.url}/auth/v1`,
    anonKey,
    signingKey: await localSigningKey(new URL(`file://${keys}/`)),
    settings,
    mailer,
  }));
  return {
    url: server.url,
    anonKey,
    close: async () => {
      await server.close();
      mailer.close();
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
    const smtp = { user: "auth-mailer", pass: `smtp-${crypto.randomUUID()}` };
    const mail = await startMailCatcher(smtp.user, smtp.pass);
    try {
      // As the platform leaves it: postgres is not a superuser, and nothing of ours exists yet.
      assertEquals(
        (await db.psqlAdmin("select rolsuper from pg_roles where rolname = 'postgres'")).trim(),
        "f",
      );
      const block = await deployBlock();
      const deployed = await runDeployBlock(db, block.deploy, { ...smtp, host: mail.host });

      // The block's own order: the pinned CLIs installed, signed in and linked first, secrets before the
      // database (the same dispatch secret goes to both), the database before Auth's settings (the hook
      // they enable is a function the migrations make) and before the functions.
      const index = (prefix: string) => deployed.commands.findIndex((c) => c.startsWith(prefix));
      for (
        const step of ["npm ci", "login", "link", "secrets set", "db push", "config push", "functions deploy"]
      ) {
        assert(index(step) >= 0, `the deploy steps run ${step}: ${deployed.commands.join("; ")}`);
      }
      assertEquals(index("npm ci"), 0, "npm ci comes first: without it npx fetches another CLI");
      assert(index("login") < index("link") && index("link") < index("secrets set"));
      assert(index("secrets set") < index("db push") && index("db push") < index("config push"));
      assert(index("db push") < index("functions deploy"));

      // Supabase Auth's mail: config push gave Auth the SMTP server the block exported, password
      // included, and the functions its host, so their health does not warn.
      assertEquals(
        [
          deployed.auth.smtp_host,
          String(deployed.auth.smtp_port),
          deployed.auth.smtp_user,
          deployed.auth.smtp_pass,
        ],
        [mail.host, "465", smtp.user, smtp.pass],
      );
      assertEquals(deployed.auth.mailer_autoconfirm, false, "new accounts confirm their address");
      assertEquals(deployed.secrets.AUTH_SMTP_HOST, mail.host);
      const hosted = { ...deployed.secrets, SUPABASE_URL: `https://${REF}.supabase.co` };
      assertEquals(setupWarnings(loadConfig(hosted)), []);
      assertEquals(
        setupWarnings(loadConfig({ ...hosted, AUTH_SMTP_HOST: "" })).map((w) => w.code),
        ["auth_mail_not_configured"],
      );

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

      // The first person signs up (the settings UI's "Create an account"): Auth, as config push set it
      // up, mails the confirmation through the SMTP server the block named; the link's token confirms
      // the address. Then the block's last step makes them the platform's first administrator.
      auth = await startAuth(admin, deployed.auth);
      const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.org`;
      const password = "hosted-admin-password";
      const signup = await fetch(`${auth.url}/auth/v1/signup`, {
        method: "POST",
        headers: { apikey: auth.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email, password }),
      });
      assertEquals(signup.status, 200, await signup.text());
      const early = await fetch(`${auth.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: auth.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email, password }),
      });
      assertEquals((await early.json()).error_code, "email_not_confirmed", "no sign-in before the mail");
      const [confirmation] = await mail.mailsTo(email);
      assert(
        confirmation,
        "the confirmation mail reached the new address through the configured SMTP server",
      );
      assertEquals(confirmation.subject, "Confirm your e-mail address");
      assertEquals(
        confirmation.from[0]?.address,
        "no-reply@example.org",
        "from the block's AUTH_SMTP_ADMIN_EMAIL",
      );
      const tokenHash = /token_hash=([^&"]+)/.exec(confirmation.html)?.[1];
      assert(tokenHash, confirmation.html);
      const verified = await fetch(`${auth.url}/auth/v1/verify`, {
        method: "POST",
        headers: { apikey: auth.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ type: "signup", token_hash: decodeURIComponent(tokenHash) }),
      });
      assertEquals(verified.status, 200, await verified.text());
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
      await mail.close();
      await admin.end({ timeout: 5 });
      await db.close();
    }
  },
});
