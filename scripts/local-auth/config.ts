// The local token service's settings: the [auth] section of supabase/config.toml, the file the hosted
// project is configured from, so both behave alike. GoTrue's own environment variable names override
// single settings (tests use them for a short reuse interval or another hook).
import { parse } from "smol-toml";

export interface AuthSettings {
  /** Access-token lifetime in seconds (jwt_expiry). */
  jwtExpiry: number;
  refreshTokenRotation: boolean;
  /** Seconds a rotated refresh token may still be used (refresh_token_reuse_interval). */
  refreshTokenReuseInterval: number;
  /** `"schema"."function"` of the custom access-token hook, or undefined when the hook is off. */
  accessTokenHook?: string;
  /** The hook's configured URI, as Supabase Auth names it in its error message. */
  accessTokenHookUri?: string;
  /** Whether POST /signup creates users (enable_signup). */
  enableSignup: boolean;
  /** Sign-up confirms the e-mail at once ([auth.email] enable_confirmations = false). */
  autoconfirm: boolean;
  minimumPasswordLength: number;
  /** Sign-in and sign-up requests per client address per 5 minutes ([auth.rate_limit] sign_in_sign_ups). */
  signInsPerFiveMinutes: number;
  /** E-mail links and codes checked per client address per 5 minutes ([auth.rate_limit] token_verifications). */
  verificationsPerFiveMinutes: number;
  /** Where e-mail links lead when the client names no allowed redirect (site_url; SITE_URL overrides). */
  siteUrl: string;
  /** Redirect targets allowed besides the site's own origin (additional_redirect_urls, globs allowed). */
  additionalRedirectUrls: string[];
  /** Seconds before another confirmation or recovery mail may go to one user ([auth.email] max_frequency). */
  mailMaxFrequency: number;
  /** Digits of the e-mail code ([auth.email] otp_length). */
  otpLength: number;
  /** Seconds an e-mail link or code works ([auth.email] otp_expiry). */
  otpExpiry: number;
  /** A password change needs a session younger than 24 hours ([auth.email] secure_password_change). */
  securePasswordChange: boolean;
  /**
   * A password change names the current password (`current_password`), except in a session begun by
   * an e-mail link or code (Supabase Auth's update_password_require_current_password). On here; the
   * pinned CLI's config.toml has no key for it, so hosted projects set it in the dashboard
   * (docs/operations.md).
   */
  requireCurrentPassword: boolean;
  /** [auth.email.template.<type>]: subject and the HTML file (relative to the project directory). */
  templates: Record<string, { subject?: string; contentPath?: string }>;
}

/** "1s", "60s", "5m", "1h" (Go durations as config.toml writes max_frequency) in seconds. */
export function durationSeconds(value: unknown, fallback: number): number {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value !== "string") return fallback;
  let total = 0;
  let rest = value.trim();
  if (!rest) return fallback;
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  while (rest) {
    const m = rest.match(/^(\d+(?:\.\d+)?)(ms|h|m|s)/);
    if (!m) return fallback;
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return total;
}

const CONFIG = new URL("../../supabase/config.toml", import.meta.url);

function num(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

/** `pg-functions://postgres/<schema>/<function>` as a quoted SQL name. */
export function hookFunctionName(uri: string): string {
  const match = uri.match(/^pg-functions:\/\/[^/]+\/([A-Za-z_][A-Za-z0-9_]*)\/([A-Za-z_][A-Za-z0-9_]*)$/);
  if (!match) {
    throw new Error(`unsupported access-token hook URI ${uri} (only pg-functions:// is served locally)`);
  }
  return `"${match[1]}"."${match[2]}"`;
}

export async function loadAuthSettings(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): Promise<AuthSettings> {
  const toml = parse(await Deno.readTextFile(CONFIG)) as {
    auth?: Record<string, unknown> & {
      hook?: { custom_access_token?: { enabled?: boolean; uri?: string } };
      email?: {
        enable_confirmations?: boolean;
        max_frequency?: string;
        otp_length?: number;
        otp_expiry?: number;
        secure_password_change?: boolean;
        template?: Record<string, { subject?: string; content_path?: string }>;
      };
      rate_limit?: { sign_in_sign_ups?: number; token_verifications?: number };
    };
  };
  const auth = toml.auth ?? {};
  const hook = auth.hook?.custom_access_token;
  const hookEnabled =
    (env.GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED ?? String(hook?.enabled ?? false)) === "true";
  const hookUri = env.GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI ?? hook?.uri;
  return {
    jwtExpiry: num(Number(env.GOTRUE_JWT_EXP ?? auth.jwt_expiry), 3600),
    refreshTokenRotation: (env.GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED ??
      String(auth.enable_refresh_token_rotation ?? true)) === "true",
    refreshTokenReuseInterval: num(
      Number(env.GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL ?? auth.refresh_token_reuse_interval),
      10,
    ),
    accessTokenHook: hookEnabled && hookUri ? hookFunctionName(hookUri) : undefined,
    accessTokenHookUri: hookEnabled ? hookUri : undefined,
    enableSignup: (env.GOTRUE_DISABLE_SIGNUP ?? String(!(auth.enable_signup ?? true))) !== "true",
    autoconfirm: (env.GOTRUE_MAILER_AUTOCONFIRM ?? String(!(auth.email?.enable_confirmations ?? false))) ===
      "true",
    minimumPasswordLength: num(Number(env.GOTRUE_PASSWORD_MIN_LENGTH ?? auth.minimum_password_length), 6),
    // The Supabase CLI hands sign_in_sign_ups to Supabase Auth as GOTRUE_RATE_LIMIT_OTP.
    signInsPerFiveMinutes: num(Number(env.GOTRUE_RATE_LIMIT_OTP ?? auth.rate_limit?.sign_in_sign_ups), 30),
    verificationsPerFiveMinutes: num(
      Number(env.GOTRUE_RATE_LIMIT_VERIFY ?? auth.rate_limit?.token_verifications),
      30,
    ),
    // The dev server sets SITE_URL to the settings UI it serves, which is where mail links must lead.
    siteUrl: env.GOTRUE_SITE_URL ?? env.SITE_URL ?? String(auth.site_url ?? "http://127.0.0.1:3000"),
    additionalRedirectUrls: Array.isArray(auth.additional_redirect_urls)
      ? (auth.additional_redirect_urls as unknown[]).map(String)
      : [],
    mailMaxFrequency: durationSeconds(env.GOTRUE_SMTP_MAX_FREQUENCY ?? auth.email?.max_frequency, 60),
    otpLength: num(Number(env.GOTRUE_MAILER_OTP_LENGTH ?? auth.email?.otp_length), 6),
    otpExpiry: num(Number(env.GOTRUE_MAILER_OTP_EXP ?? auth.email?.otp_expiry), 3600),
    securePasswordChange: (env.GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION ??
      String(auth.email?.secure_password_change ?? false)) === "true",
    requireCurrentPassword:
      (env.GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD ?? "true") === "true",
    templates: Object.fromEntries(
      Object.entries(auth.email?.template ?? {}).map(([type, t]) => [
        type,
        { subject: t.subject, contentPath: t.content_path },
      ]),
    ),
  };
}
