// Environment configuration, validated once at start-up. Secrets are read here and passed inward as
// values; nothing else reads Deno.env, so tests and the dev server can hand in their own.
import { z } from "zod";

const LOCAL_DB_URL = "postgresql://postgres@127.0.0.1:5432/postgres";

const EnvSchema = z.object({
  SUPABASE_DB_URL: z.string().min(1).default(LOCAL_DB_URL),
  SUPABASE_URL: z.string().url().optional(),
  SUPABASE_JWKS: z.string().optional(),
  JWT_SECRET: z.string().optional(),
  WEBHOOK_DISPATCH_SECRET: z.string().optional(),
  /** "true" lets outbound webhooks target loopback/private addresses and plain http (local dev, tests). */
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: z.enum(["true", "false"]).default("false"),
  DB_POOL_MAX: z.coerce.number().int().positive().default(10),
  /**
   * "false" when the database URL is a transaction-mode pooler that cannot keep prepared statements
   * (PgBouncer before 1.21, Supabase's pooler on 6543): a statement prepared on one server connection
   * would be used on another. Unset: the URL's `prepare` parameter, else false for port 6543, else true.
   */
  DB_PREPARE: z.enum(["true", "false"]).optional(),
  /** The user-request pool's URL; unset: SUPABASE_DB_URL with the user `edge_user` (see userDbUrlOf). */
  USER_DB_URL: z.string().min(1).optional(),
  /** The password of `edge_user`, for the URL derived from SUPABASE_DB_URL. */
  USER_DB_PASSWORD: z.string().optional(),
  /** The plan's limits for one dispatcher invocation (hosted Edge Functions: 2 s of CPU, 150 s / 400 s). */
  WEBHOOK_DISPATCH_CPU_BUDGET_MS: z.coerce.number().int().positive().default(2000),
  WEBHOOK_DISPATCH_WALL_BUDGET_MS: z.coerce.number().int().positive().default(150_000),
  /** How long a request carries a bulk retry on before answering (unset: 1,500 ms to start, 1,000 per poll). */
  WEBHOOKS_BULK_RETRY_BUDGET_MS: z.coerce.number().int().min(0).max(10_000).optional(),
  /** Bearer secret the configuration API presents to the receivers' replay endpoints (not the service key). */
  INBOUND_REPLAY_SECRET: z.string().optional(),
  /** Set by Supabase in every function; read only to refuse it as the replay secret. */
  SUPABASE_SERVICE_ROLE_KEY: z.string().optional(),
  /** Where the functions are served; defaults to SUPABASE_URL + /functions/v1. */
  SUPABASE_FUNCTIONS_URL: z.string().url().optional(),
  /** How mail-sender sends: over SMTP or a provider's HTTP API (Resend's). Default: whichever is configured. */
  MAIL_TRANSPORT: z.enum(["smtp", "resend"]).optional(),
  /** smtp://user:password@host:port (STARTTLS when offered) or smtps://... (TLS from the start, port 465). */
  SMTP_URL: z.string().url().optional(),
  RESEND_API_KEY: z.string().optional(),
  /** The HTTP API's base URL (tests point it at a stand-in on loopback). */
  RESEND_API_URL: z.string().url().default("https://api.resend.com"),
  /** The From of every mail, e.g. `Church settings <no-reply@example.org>`. */
  MAIL_FROM: z.string().min(3).default("Church settings <no-reply@localhost>"),
  /** Where the settings UI is served: links in mails point there. */
  SITE_URL: z.string().url().optional(),
  /** Where an invitee reports an unwanted invitation (the invitation mail names it). */
  MAIL_ABUSE_ADDRESS: z.string().email().optional(),
  /**
   * The SMTP server Supabase Auth sends its mails through ([remotes.production.auth.email.smtp]), set as a
   * secret by the deploy steps from the same variable config push reads: functions cannot read Auth's
   * settings, and on a hosted project without it no new account can confirm its address.
   */
  AUTH_SMTP_HOST: z.string().optional(),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  dbUrl: string;
  supabaseUrl?: string;
  jwks?: string;
  jwtSecret?: string;
  dispatchSecret?: string;
  allowPrivateTargets: boolean;
  dbPoolMax: number;
  /** Whether the pools may use prepared statements (false through a transaction-mode pooler). */
  dbPrepare: boolean;
  /** Where the user-request pool connects: as `edge_user`, which can only become anon or authenticated. */
  userDbUrl: string;
  /**
   * True when neither USER_DB_URL nor USER_DB_PASSWORD is set: the pool reads edge_user's password from
   * the database through the server pool (private.edge_user_password(), set by the migrations).
   */
  userDbPasswordFromDatabase: boolean;
  /** CPU time and wall-clock time one dispatcher invocation may use; it stops claiming with a margin. */
  dispatchCpuBudgetMs: number;
  dispatchWallBudgetMs: number;
  /** How long a request carries a bulk retry on (WEBHOOKS_BULK_RETRY_BUDGET_MS); undefined: the defaults. */
  bulkRetryBudgetMs?: number;
  /** Bearer secret for the receivers' replay endpoints; unset: replay over HTTP is refused (503). */
  replaySecret?: string;
  /** Base URL of the functions, e.g. https://<ref>.supabase.co/functions/v1. */
  functionsUrl?: string;
  /** How mail is sent; undefined: not configured (mails wait in the outbox). */
  mail?: MailConfig;
  /** SUPABASE_URL is a project's address, not loopback (npm run dev, tests): a hosted project. */
  hosted: boolean;
  /** The SMTP server Supabase Auth sends through (AUTH_SMTP_HOST); undefined: not configured. */
  authSmtpHost?: string;
}

export type MailConfig =
  & { from: string; siteUrl: string; abuseAddress?: string }
  & ({ transport: "smtp"; smtpUrl: string } | { transport: "resend"; apiKey: string; apiUrl: string });

export function loadConfig(env: Record<string, string | undefined> = Deno.env.toObject()): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join(".")).join(", ");
    throw new Error(`Invalid environment configuration: ${fields}`);
  }
  const e = parsed.data;
  return {
    dbUrl: e.SUPABASE_DB_URL,
    supabaseUrl: e.SUPABASE_URL,
    jwks: e.SUPABASE_JWKS || undefined,
    jwtSecret: e.JWT_SECRET || undefined,
    dispatchSecret: e.WEBHOOK_DISPATCH_SECRET || undefined,
    allowPrivateTargets: e.WEBHOOKS_ALLOW_PRIVATE_TARGETS === "true",
    dbPoolMax: e.DB_POOL_MAX,
    dbPrepare: prepareOf(e),
    userDbUrl: e.USER_DB_URL ?? userDbUrlOf(e.SUPABASE_DB_URL, e.USER_DB_PASSWORD),
    userDbPasswordFromDatabase: !e.USER_DB_URL && !e.USER_DB_PASSWORD,
    dispatchCpuBudgetMs: e.WEBHOOK_DISPATCH_CPU_BUDGET_MS,
    dispatchWallBudgetMs: e.WEBHOOK_DISPATCH_WALL_BUDGET_MS,
    bulkRetryBudgetMs: e.WEBHOOKS_BULK_RETRY_BUDGET_MS,
    replaySecret: replaySecretOf(e),
    functionsUrl: (e.SUPABASE_FUNCTIONS_URL ??
      (e.SUPABASE_URL ? `${e.SUPABASE_URL.replace(/\/+$/, "")}/functions/v1` : undefined))?.replace(
        /\/+$/,
        "",
      ),
    mail: mailConfigOf(e),
    hosted: hostedUrl(e.SUPABASE_URL),
    authSmtpHost: e.AUTH_SMTP_HOST?.trim() || undefined,
  };
}

/** Whether `supabaseUrl` is a hosted project's address: set, and not on loopback. */
function hostedUrl(supabaseUrl: string | undefined): boolean {
  if (!supabaseUrl) return false;
  const host = new URL(supabaseUrl).hostname.replace(/^\[|\]$/g, "");
  return !(host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "::1");
}

function mailConfigOf(e: Env): MailConfig | undefined {
  const transport = e.MAIL_TRANSPORT ?? (e.SMTP_URL ? "smtp" : e.RESEND_API_KEY ? "resend" : undefined);
  // Every mail links to the settings UI: without its address there is nothing to send.
  if (!e.SITE_URL) return undefined;
  const common = {
    from: e.MAIL_FROM,
    siteUrl: e.SITE_URL.replace(/\/+$/, ""),
    abuseAddress: e.MAIL_ABUSE_ADDRESS,
  };
  if (transport === "smtp" && e.SMTP_URL) return { ...common, transport, smtpUrl: e.SMTP_URL };
  if (transport === "resend" && e.RESEND_API_KEY) {
    return { ...common, transport, apiKey: e.RESEND_API_KEY, apiUrl: e.RESEND_API_URL.replace(/\/+$/, "") };
  }
  return undefined;
}

/** Shortest replay secret accepted: it opens every organization's log to replay, so it must not be guessable. */
export const MIN_REPLAY_SECRET_LENGTH = 32;

/**
 * The replay secret, or undefined (replay answers 503 "not configured") when it is too short to resist
 * guessing or is the service-role key: the receivers' replay endpoints must never accept the key that
 * opens the whole database, and a caller holding only the replay secret can do nothing but replay.
 */
function replaySecretOf(e: Env): string | undefined {
  const secret = e.INBOUND_REPLAY_SECRET;
  if (!secret || secret.length < MIN_REPLAY_SECRET_LENGTH) return undefined;
  if (e.SUPABASE_SERVICE_ROLE_KEY && secret === e.SUPABASE_SERVICE_ROLE_KEY) return undefined;
  return secret;
}

/** The login role of the user-request pool (created by the tenancy migration). */
const USER_DB_ROLE = "edge_user";

/** DB_PREPARE, else the URL's own `prepare` parameter (postgres.js reads it too), else not on 6543. */
function prepareOf(e: Env): boolean {
  if (e.DB_PREPARE) return e.DB_PREPARE === "true";
  try {
    const url = new URL(e.SUPABASE_DB_URL);
    const param = url.searchParams.get("prepare");
    if (param !== null) return param !== "false";
    return url.port !== "6543";
  } catch {
    return true;
  }
}

/**
 * SUPABASE_DB_URL with `edge_user` as the user (keeping a pooler's `.<project-ref>` suffix) and its own
 * password, so a query outside the request's transaction runs with no privileges.
 * @see docs/operations.md#through-the-pooler
 */
function userDbUrlOf(dbUrl: string, password?: string): string {
  let url: URL;
  try {
    url = new URL(dbUrl);
  } catch {
    return dbUrl; // postgres.js reports a malformed URL itself
  }
  const suffix = decodeURIComponent(url.username).match(/^postgres(\..+)$/)?.[1] ?? "";
  url.username = encodeURIComponent(USER_DB_ROLE + suffix);
  url.password = password ? encodeURIComponent(password) : "";
  return url.toString();
}
