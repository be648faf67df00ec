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
      email?: { enable_confirmations?: boolean };
      rate_limit?: { sign_in_sign_ups?: number };
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
  };
}
