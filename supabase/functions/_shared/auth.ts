// Verifies the Supabase Auth access token a user request carries, so functions that serve users can run
// their queries as `authenticated` with claims the provider signed. Claims read anywhere else (the
// browser) are only hints; this check and row-level security are what count.
import type { Context, MiddlewareHandler } from "hono";
import * as jose from "jose";
import { unauthorized } from "./errors.ts";
import type { Config } from "./config.ts";
import type { JwtClaims } from "./db.ts";

export interface UserClaims extends JwtClaims {
  sub: string;
  role: string;
  aud: string | string[];
  exp: number;
  email?: string;
  organization_id?: string;
  is_platform_admin?: boolean;
  is_superadmin?: boolean;
}

export type TokenVerifier = (token: string) => Promise<UserClaims>;

/** The issuer of Supabase Auth's local stack (`supabase start`), expected when SUPABASE_URL is unset. */
export const LOCAL_AUTH_ISSUER = "http://127.0.0.1:54321/auth/v1";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ASYMMETRIC = ["ES256", "RS256", "EdDSA"];

/**
 * Builds the verifier once per process: the JWKS given inline (SUPABASE_JWKS), else the project's
 * published JWKS (fetched and cached by jose), and the legacy HS256 secret when configured.
 * @see docs/authentication.md#in-edge-functions (what a token must carry, and the 401 each failure gets)
 */
export function createTokenVerifier(
  config: Pick<Config, "jwks" | "supabaseUrl" | "jwtSecret">,
): TokenVerifier {
  let keySet: jose.JWTVerifyGetKey | undefined;
  if (config.jwks) {
    keySet = jose.createLocalJWKSet(JSON.parse(config.jwks) as jose.JSONWebKeySet);
  } else if (config.supabaseUrl) {
    keySet = jose.createRemoteJWKSet(new URL("/auth/v1/.well-known/jwks.json", config.supabaseUrl), {
      cooldownDuration: 30_000,
      cacheMaxAge: 10 * 60_000,
    });
  }
  const secret = config.jwtSecret ? new TextEncoder().encode(config.jwtSecret) : undefined;
  // Always checked: a token another Supabase project (or any other issuer sharing a key) signed is not
  // ours. Without SUPABASE_URL (tests, scripts) the expected issuer is the local stack's.
  const issuer = config.supabaseUrl ? new URL("/auth/v1", config.supabaseUrl).href : LOCAL_AUTH_ISSUER;
  // `exp` is required: jose only checks it when present, and a token that never expires cannot be
  // taken back.
  const options: jose.JWTVerifyOptions = {
    audience: "authenticated",
    issuer,
    requiredClaims: ["exp", "iss"],
    clockTolerance: 5,
  };

  return async (token: string) => {
    let header: jose.ProtectedHeaderParameters;
    try {
      header = jose.decodeProtectedHeader(token);
    } catch {
      throw unauthorized("invalid_token", "Malformed access token");
    }
    let payload: jose.JWTPayload;
    try {
      if (header.alg === "HS256") {
        if (!secret) throw unauthorized("invalid_token", "Unsupported token signature");
        ({ payload } = await jose.jwtVerify(token, secret, { ...options, algorithms: ["HS256"] }));
      } else if (header.alg && ASYMMETRIC.includes(header.alg) && keySet) {
        ({ payload } = await jose.jwtVerify(token, keySet, { ...options, algorithms: ASYMMETRIC }));
      } else {
        throw unauthorized("invalid_token", "Unsupported token signature");
      }
    } catch (err) {
      if (err instanceof jose.errors.JWTExpired) {
        throw unauthorized("token_expired", "Access token has expired");
      }
      if (err instanceof jose.errors.JOSEError || err instanceof TypeError) {
        throw unauthorized("invalid_token", "Access token is not valid");
      }
      throw err;
    }
    if (typeof payload.sub !== "string" || !UUID.test(payload.sub) || typeof payload.role !== "string") {
      throw unauthorized("invalid_token", "Access token lacks the user or role claim");
    }
    if (payload.role !== "authenticated") throw unauthorized("invalid_token", "Not a signed-in user's token");
    if (payload.organization_id !== undefined && !UUID.test(String(payload.organization_id))) {
      throw unauthorized("invalid_token", "Access token carries a malformed organization_id");
    }
    return payload as UserClaims;
  };
}

/** The bearer token of a request, or a 401. */
export function bearerToken(req: Request): string {
  const header = req.headers.get("authorization") ?? "";
  const match = header.match(/^Bearer\s+(\S+)$/i);
  if (!match) throw unauthorized("missing_token", "Authorization: Bearer <access token> is required");
  return match[1]!;
}

export type UserEnv = { Variables: { claims: UserClaims } };

/** Hono middleware: verifies the bearer token and exposes its claims as `c.get("claims")`. */
export function requireUser(verify: TokenVerifier): MiddlewareHandler<UserEnv> {
  return async (c: Context<UserEnv>, next) => {
    c.set("claims", await verify(bearerToken(c.req.raw)));
    await next();
  };
}
