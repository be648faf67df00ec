// What `supabase config push` would write to the hosted project, as the pinned CLI itself says it:
// `supabase config diff --output-format json` run against a stand-in for Supabase's Management API on
// loopback (a CLI profile points the CLI there), which answers with a project whose owner changed
// settings in the dashboard (MFA on, rate limits, storage, an OAuth provider). The CLI pushes every
// property supabase/config.toml declares and leaves the others alone, so:
//   - it writes exactly the properties this project decides (the list below), nothing from the CLI's
//     template (before: enable_signup, MFA off, email_sent = 2, storage analytics, the OAuth server...);
//   - every auth setting whose local value would be wrong on a hosted project is overridden in
//     [remotes.production] (the production policy below), and nothing it writes there points at
//     loopback;
//   - every property in supabase/config.toml comes with its reason (a comment in its paragraph).
import { assert, assertEquals } from "./helpers/assert.ts";
import { markedBlock, ROOT } from "./helpers/markdown.ts";
import { serve } from "./helpers/server.ts";
import { CLI_OFFLINE_ENV, SUPABASE_CLI } from "./helpers/supabase_cli.ts";
import { parse } from "smol-toml";

const CONFIG = new URL("supabase/config.toml", ROOT);

/**
 * The properties this project decides: what `config push` writes to the hosted project (the local
 * project, base scope, writes the same but for Auth's SMTP server, which only production declares).
 * Auth's SMTP password is written too, but `config diff` lists it apart (the API never returns it).
 */
const DECIDED = [
  "auth.additional_redirect_urls",
  "auth.email.enable_confirmations",
  "auth.email.max_frequency",
  "auth.email.secure_password_change",
  "auth.email.smtp.admin_email",
  "auth.email.smtp.enabled",
  "auth.email.smtp.host",
  "auth.email.smtp.port",
  "auth.email.smtp.sender_name",
  "auth.email.smtp.user",
  "auth.email.template.confirmation.subject",
  "auth.email.template.recovery.subject",
  "auth.enable_anonymous_sign_ins",
  "auth.enable_refresh_token_rotation",
  "auth.enable_signup",
  "auth.hook.custom_access_token.enabled",
  "auth.hook.custom_access_token.uri",
  "auth.jwt_expiry",
  "auth.minimum_password_length",
  "auth.refresh_token_reuse_interval",
  "auth.site_url",
];

/** What the deploy steps export for `config push`: Auth's SMTP server ([remotes.production.auth.email.smtp]). */
const AUTH_SMTP = {
  AUTH_SMTP_HOST: "smtp.mail-provider.example",
  AUTH_SMTP_USER: "auth-mailer",
  AUTH_SMTP_PASS: `pw-${crypto.randomUUID()}`,
  AUTH_SMTP_ADMIN_EMAIL: "no-reply@church-service.example",
};

const isLoopback = (v: unknown) => /127\.0\.0\.1|localhost|\[::1\]/.test(JSON.stringify(v));
const seconds = (v: unknown) => {
  const m = String(v).match(/^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?$/);
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
};

/** What an auth setting must be on the hosted project, and why. */
const PRODUCTION: Record<string, { must: (v: unknown) => boolean; why: string }> = {
  "auth.site_url": {
    must: (v) => typeof v === "string" && v.startsWith("https://") && !isLoopback(v),
    why: "mail links and redirects go to the deployed settings UI",
  },
  "auth.additional_redirect_urls": {
    must: (v) =>
      Array.isArray(v) && v.length > 0 && v.every((u) => String(u).startsWith("https://")) && !isLoopback(v),
    why: "redirects only to the deployed settings UI",
  },
  "auth.email.enable_confirmations": { must: (v) => v === true, why: "an account proves its address" },
  "auth.email.secure_password_change": { must: (v) => v === true, why: "a stolen session cannot lock out" },
  "auth.email.max_frequency": { must: (v) => seconds(v) >= 60, why: "no mail flood to one address" },
  "auth.minimum_password_length": { must: (v) => Number(v) >= 8, why: "giving records behind passwords" },
  "auth.jwt_expiry": { must: (v) => v === 3600, why: "the specification's expires_in" },
  "auth.enable_refresh_token_rotation": {
    must: (v) => v === true,
    why: "a replayed refresh token ends the session",
  },
  "auth.enable_anonymous_sign_ins": { must: (v) => v === false, why: "every token is a person" },
  "auth.hook.custom_access_token.enabled": { must: (v) => v === true, why: "tokens carry the organization" },
  "auth.email.smtp.enabled": {
    must: (v) => v === true,
    why: "Supabase's default mailer reaches only the project's team: no church could confirm its account",
  },
  "auth.email.smtp.host": { must: (v) => v === AUTH_SMTP.AUTH_SMTP_HOST, why: "from the environment" },
  "auth.email.smtp.port": { must: (v) => v === 465 || v === 587, why: "Auth's TLS or STARTTLS port" },
  "auth.email.smtp.user": { must: (v) => v === AUTH_SMTP.AUTH_SMTP_USER, why: "from the environment" },
  "auth.email.smtp.admin_email": {
    must: (v) => v === AUTH_SMTP.AUTH_SMTP_ADMIN_EMAIL,
    why: "from the environment",
  },
  "auth.hook.custom_access_token.uri": {
    must: (v) => v === "pg-functions://postgres/public/custom_access_token_hook",
    why: "the hook the migrations define",
  },
};

/** A hosted project as its owner left it in the dashboard (the Management API's field names). */
const REMOTE = {
  api: { db_schema: "public,graphql_public", db_extra_search_path: "public,extensions", max_rows: 500 },
  auth: {
    site_url: "https://old-settings.example.org",
    uri_allow_list: "https://old-settings.example.org",
    disable_signup: false,
    mfa_totp_enroll_enabled: true,
    mfa_totp_verify_enabled: true,
    rate_limit_email_sent: 30,
    rate_limit_otp: 60,
    external_google_enabled: true,
    external_phone_enabled: false,
    security_captcha_enabled: true,
  },
  storage: { file_size_limit: 52428800 },
  database: { max_connections: 60 },
};

interface Change {
  path: string[];
  class: "update" | "local_only" | "remote_only";
  declared: boolean;
  local: unknown;
  remote: unknown;
}

/** `config diff --output-format json` for `ref`; the changes config push would write, by dotted path. */
async function diff(api: string, ref: string) {
  const dir = await Deno.makeTempDir({ prefix: "cli-profile-" });
  try {
    await Deno.writeTextFile(
      `${dir}/profile.yaml`,
      `name: management-api-stand-in\napi_url: ${api}\ndashboard_url: ${api}/dashboard\nproject_host: supabase.co\n`,
    );
    const out = await new Deno.Command(SUPABASE_CLI, {
      args: [
        "config",
        "diff",
        "--project-ref",
        ref,
        "--profile",
        `${dir}/profile.yaml`,
        "--output-format",
        "json",
      ],
      cwd: ROOT.pathname,
      env: {
        SUPABASE_ACCESS_TOKEN: `sbp_${"0".repeat(40)}`,
        ...AUTH_SMTP,
        ...CLI_OFFLINE_ENV,
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const d = new TextDecoder();
    const text = d.decode(out.stdout);
    assertEquals(out.code, 0, text + d.decode(out.stderr));
    const report = JSON.parse(text) as {
      target: { local_scope: string };
      changes: (Change & { env_variables?: string[] })[];
      masked: string[][];
    };
    const written = new Map<string, unknown>();
    const leftAlone = new Set<string>();
    const fromEnv = new Map<string, string[]>();
    for (const c of report.changes) {
      if (c.declared && c.class !== "remote_only") written.set(c.path.join("."), c.local);
      else leftAlone.add(c.path.join("."));
      if (c.env_variables) fromEnv.set(c.path.join("."), c.env_variables);
    }
    const masked = report.masked.map((p) => p.join("."));
    return { scope: report.target.local_scope, written, leftAlone, fromEnv, masked };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A project that reports next to nothing: every declared property shows up as one to write. */
const FRESH = { auth: { site_url: "https://fresh.example.org" } };

/** A read-only stand-in for the Management API that reports `remote` as every project's configuration. */
async function startManagementApi(remote: Record<string, unknown>) {
  const requests: string[] = [];
  const server = await serve((req) => {
    const { pathname } = new URL(req.url);
    requests.push(`${req.method} ${pathname}`);
    if (req.method !== "GET") return Response.json({ message: "read-only stand-in" }, { status: 405 });
    if (/^\/v2\/projects\/[a-z]{20}\/config$/.test(pathname)) {
      return Response.json({ data: { attributes: remote } });
    }
    // Anything else it reads (the project's name, to say where it pushes) is not needed here.
    return Response.json({});
  });
  return { url: server.url, requests, close: () => server.close() };
}

const config = parse(await Deno.readTextFile(CONFIG)) as {
  remotes: { production: { project_id: string; auth?: Record<string, unknown> } };
};
const productionRef = config.remotes.production.project_id;

/** The three diffs the tests read, run side by side once (each CLI run takes seconds). */
let diffs:
  | Promise<{
    production: Awaited<ReturnType<typeof diff>>;
    local: Awaited<ReturnType<typeof diff>>;
    productionOverDashboard: Awaited<ReturnType<typeof diff>>;
    dashboardRequests: string[];
  }>
  | undefined;
const allDiffs = () =>
  diffs ??= (async () => {
    const fresh = await startManagementApi(FRESH);
    const dashboard = await startManagementApi(REMOTE);
    try {
      const [production, local, productionOverDashboard] = await Promise.all([
        diff(fresh.url, productionRef),
        diff(fresh.url, "localrefxxxxxxxxxxxx"),
        diff(dashboard.url, productionRef),
      ]);
      return { production, local, productionOverDashboard, dashboardRequests: dashboard.requests };
    } finally {
      await Promise.all([fresh.close(), dashboard.close()]);
    }
  })();

Deno.test("config push writes only what this project decides, and leaves the dashboard's other choices alone", async () => {
  const { production, productionOverDashboard, dashboardRequests } = await allDiffs();
  // Against a project that reports nothing else, every declared property is one to write: exactly these.
  assertEquals(production.scope, "remotes.production", "the production override is the one compared");
  assertEquals([...production.written.keys()].sort(), DECIDED);
  // Against a project whose owner chose MFA, rate limits, storage and a provider: those stay theirs.
  for (const path of productionOverDashboard.written.keys()) {
    assert(DECIDED.includes(path), `${path} would be written`);
  }
  for (
    const path of [
      "auth.mfa.totp.enroll_enabled",
      "auth.mfa.totp.verify_enabled",
      "auth.rate_limit.email_sent",
      "auth.external.google.enabled",
      "auth.captcha.enabled",
      "storage.file_size_limit",
      "api.max_rows",
    ]
  ) {
    assert(!productionOverDashboard.written.has(path), `${path} is left as the dashboard set it`);
  }
  assert(
    dashboardRequests.every((r) => r.startsWith("GET ")),
    `config diff only reads: ${dashboardRequests}`,
  );
});

Deno.test("the production override holds every auth setting whose local value would be wrong on a hosted project", async () => {
  const { production, local } = await allDiffs();
  assertEquals(local.scope, "base");
  const overridden = new Set(flatten({ auth: config.remotes.production.auth ?? {} }));
  const wrong: string[] = [];
  for (const [path, rule] of Object.entries(PRODUCTION)) {
    if (!rule.must(production.written.get(path))) {
      wrong.push(`${path} = ${JSON.stringify(production.written.get(path))} (${rule.why})`);
    }
    // A local value the hosted project must not have: only the override can be what holds it.
    if (!rule.must(local.written.get(path))) {
      assert(overridden.has(path), `${path} differs from local and is not in [remotes.production]`);
    }
  }
  assertEquals(wrong, [], "what config push would write to the hosted project");
  // Every difference between the two is the override's doing, and nothing written there is loopback.
  for (const [path, value] of production.written) {
    if (JSON.stringify(value) !== JSON.stringify(local.written.get(path))) {
      assert(overridden.has(path), `${path} differs without an override`);
    }
    assert(!isLoopback(value), `${path} = ${JSON.stringify(value)} points at loopback`);
  }
});

Deno.test("every property in supabase/config.toml comes with its reason", async () => {
  const paragraphs = (await Deno.readTextFile(CONFIG)).split(/\n\s*\n/);
  const unexplained = paragraphs.filter((p) => {
    const lines = p.split("\n").map((l) => l.trim()).filter(Boolean);
    const keys = lines.filter((l) => /^[A-Za-z_][\w-]*\s*=/.test(l));
    return keys.length > 0 && !lines.some((l) => l.startsWith("#")) &&
      // [functions.*] blocks share one reason, stated above the first of them.
      !lines.some((l) => /^\[functions\./.test(l));
  });
  assertEquals(unexplained, []);
});

function flatten(o: Record<string, unknown>, prefix: string[] = []): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, [...prefix, k])
      : [[...prefix, k].join(".")]
  );
}

/** Runs `config push --yes` for `ref` against a stand-in that records each write and answers 503. */
async function push(ref: string, env: Record<string, string>) {
  const writes: { method: string; path: string; body: Record<string, unknown> }[] = [];
  const server = await serve(async (req) => {
    const { pathname } = new URL(req.url);
    if (req.method === "GET" && /^\/v2\/projects\/[a-z]{20}\/config$/.test(pathname)) {
      return Response.json({ data: { attributes: FRESH } });
    }
    if (req.method === "GET") return Response.json({});
    writes.push({ method: req.method, path: pathname, body: await req.json().catch(() => ({})) });
    // Recorded, never applied: what Supabase's API would have been asked to write is all this needs.
    return Response.json({ message: "stand-in: recorded, not applied" }, { status: 503 });
  });
  const dir = await Deno.makeTempDir({ prefix: "cli-profile-" });
  try {
    await Deno.writeTextFile(
      `${dir}/profile.yaml`,
      `name: management-api-stand-in\napi_url: ${server.url}\ndashboard_url: ${server.url}/dashboard\nproject_host: supabase.co\n`,
    );
    const out = await new Deno.Command(SUPABASE_CLI, {
      args: ["config", "push", "--project-ref", ref, "--profile", `${dir}/profile.yaml`, "--yes"],
      cwd: ROOT.pathname,
      env: { SUPABASE_ACCESS_TOKEN: `sbp_${"0".repeat(40)}`, ...env, ...CLI_OFFLINE_ENV },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const d = new TextDecoder();
    return { writes, output: d.decode(out.stdout) + d.decode(out.stderr) };
  } finally {
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("config push gives Supabase Auth the SMTP server, password included, from the deploy's environment", async () => {
  const { production } = await allDiffs();
  // The diff says where each value came from, and that the password is compared by nobody.
  for (
    const [path, variable] of Object.entries({
      host: "HOST",
      user: "USER",
      admin_email: "ADMIN_EMAIL",
    })
  ) {
    assertEquals(production.fromEnv.get(`auth.email.smtp.${path}`), [`AUTH_SMTP_${variable}`], path);
  }
  assert(production.masked.includes("auth.email.smtp.pass"), "the SMTP password is a credential");

  const { writes, output } = await push(productionRef, AUTH_SMTP);
  const auth = writes.find((w) =>
    w.method === "PATCH" && w.path === `/v1/projects/${productionRef}/config/auth`
  );
  assert(auth, `config push writes Auth's settings: ${JSON.stringify(writes.map((w) => w.path))}\n${output}`);
  assertEquals(
    {
      smtp_host: auth.body.smtp_host,
      smtp_port: String(auth.body.smtp_port),
      smtp_user: auth.body.smtp_user,
      smtp_pass: auth.body.smtp_pass,
      smtp_admin_email: auth.body.smtp_admin_email,
      smtp_sender_name: auth.body.smtp_sender_name,
      mailer_autoconfirm: auth.body.mailer_autoconfirm,
    },
    {
      smtp_host: AUTH_SMTP.AUTH_SMTP_HOST,
      smtp_port: "465",
      smtp_user: AUTH_SMTP.AUTH_SMTP_USER,
      smtp_pass: AUTH_SMTP.AUTH_SMTP_PASS,
      smtp_admin_email: AUTH_SMTP.AUTH_SMTP_ADMIN_EMAIL,
      smtp_sender_name: "Church settings",
      mailer_autoconfirm: false,
    },
  );
  assert(!output.includes(AUTH_SMTP.AUTH_SMTP_PASS), "the CLI does not print the password");
});

Deno.test("every env(...) value in supabase/config.toml is a variable the deploy steps export before the command that reads it", async () => {
  const text = await Deno.readTextFile(CONFIG);
  const variables = [...text.matchAll(/"env\(([A-Z_][A-Z0-9_]*)\)"/g)].map((m) => m[1]!);
  assert(
    variables.includes("AUTH_SMTP_PASS") && variables.includes("SUPABASE_PROJECT_URL"),
    variables.join(),
  );
  const block = markedBlock(await Deno.readTextFile(new URL("docs/operations.md", ROOT)), "deploy");
  const lines = block.split("\n");
  const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
  // [db.vault] is read by db push, [remotes.production] by config diff and config push.
  const readers = { vault: at(/^npx supabase db push/), auth: at(/^npx supabase config diff/) };
  assert(readers.vault >= 0 && readers.auth >= 0, block);
  for (const name of variables) {
    const exported = at(new RegExp(`^export .*\\b${name}=`));
    const reader = name === "SUPABASE_PROJECT_URL" || name === "WEBHOOK_DISPATCH_SECRET"
      ? readers.vault
      : readers.auth;
    assert(
      exported >= 0 && exported < reader,
      `the deploy steps export ${name} before the command that reads it`,
    );
  }
});
