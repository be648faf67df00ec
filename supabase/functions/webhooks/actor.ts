// Who is calling the configuration API: a person (Supabase JWT, RLS applies with their claims) or an
// organization API key (automation platforms). Either way the request ends up with claims that
// `withClaims` turns into a `config_api` transaction (everything `authenticated` may do, and what only
// this API may: docs/two-doors.md#two-doors-one-rule), so row-level security decides what it sees.
// @see docs/authentication.md#who-can-call-the-configuration-api
import type { Context, MiddlewareHandler } from "hono";
import type { AppDeps } from "../_shared/app.ts";
import { bearerToken, type TokenVerifier, type UserClaims, UUID } from "../_shared/auth.ts";
import { type JwtClaims, type Sql, type Tx, withClaims } from "../_shared/db.ts";
import { forbidden, unauthorized } from "../_shared/errors.ts";
import { sha256Hex } from "../_shared/hmac.ts";

export const API_KEY_PREFIX = "orgkey_";

export type Actor =
  | { kind: "user"; claims: UserClaims; userId: string }
  | { kind: "api_key"; claims: JwtClaims; apiKeyId: string; organizationId: string };

export type ActorEnv = { Variables: { actor: Actor } };

export const hashApiKey = (key: string): string => sha256Hex(key);

/** A fresh key: the prefix and 32 random bytes, base64url. */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return API_KEY_PREFIX + bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

function presentedCredential(req: Request): string {
  const apiKey = req.headers.get("x-api-key");
  if (apiKey) return apiKey.trim();
  return bearerToken(req);
}

export function authenticate(sql: Sql, verify: TokenVerifier): MiddlewareHandler<ActorEnv> {
  return async (c, next) => {
    const credential = presentedCredential(c.req.raw);
    if (credential.startsWith(API_KEY_PREFIX)) {
      const hash = hashApiKey(credential);
      const [key] = await sql<{ api_key_id: string; organization_id: string }[]>`
        select api_key_id, organization_id from private.authenticate_api_key(${hash})`;
      if (!key) throw unauthorized("invalid_api_key", "API key is not valid or has been revoked");
      c.set("actor", {
        kind: "api_key",
        apiKeyId: key.api_key_id,
        organizationId: key.organization_id,
        claims: { role: "authenticated", api_key_id: key.api_key_id, organization_id: key.organization_id },
      });
    } else {
      // Key identity comes only from the key lookup above: an `api_key_id` in a user's token is dropped
      // (the database ignores it too, for any token with a `sub`).
      const { api_key_id: _ignored, ...claims } = await verify(credential);
      // Supabase Auth names the session in every token it issues; one that names none could never be
      // ended by signing out (asCaller checks that a named one still exists).
      if (typeof claims.session_id !== "string" || !UUID.test(claims.session_id)) {
        throw unauthorized("session_required", "This access token belongs to no session; sign in again");
      }
      c.set("actor", { kind: "user", claims: claims as UserClaims, userId: claims.sub });
    }
    await next();
  };
}

/**
 * Runs `fn` in one transaction as the caller, so row-level security decides what it sees. A person's
 * token must still belong to a live session, checked in the same first query that asks what the
 * caller may configure. @see docs/two-doors.md#sessions-end-everywhere
 */
export async function asCaller<T>(
  deps: AppDeps,
  c: Context<ActorEnv>,
  fn: (tx: Tx, ctx: { organizationId: string | null; actor: Actor; suspended: boolean }) => Promise<T>,
  options: { holdAuthority?: boolean } = {},
): Promise<T> {
  const actor = c.get("actor");
  return await withClaims(
    deps.userSql ?? deps.sql,
    actor.claims,
    async (tx) => {
      // `suspended`: the organization the token or key names is suspended by the platform, so nobody
      // acts for it (docs/platform-console.md#suspending-an-organization). `holdAuthority`: the admin
      // membership or API key the caller acts by stays locked until this transaction ends, so a removal
      // in flight either waits for this write (and then ends what it made) or refuses it.
      const org = options.holdAuthority
        ? tx`private.hold_admin_authority()`
        : tx`private.webhook_admin_organization_id()`;
      const [row] = await tx<{ org: string | null; live: boolean; suspended: boolean }[]>`
      select ${org} as org, private.session_is_live() as live,
             private.claimed_organization_is_suspended() as suspended`;
      if (actor.kind === "user" && !row?.live) {
        throw unauthorized(
          "session_not_found",
          "Your session has ended (signed out or revoked); sign in again",
        );
      }
      return await fn(tx, { organizationId: row?.org ?? null, actor, suspended: row?.suspended ?? false });
    },
    "config_api",
    requestOrigin(c),
  );
}

/**
 * Where the request came from, for the audit log: the client's address as the platform's gateway
 * reports it (the first x-forwarded-for address), else the connection's peer, and the user agent. Only
 * these two reach the database (as request.headers); never a credential.
 */
export function requestOrigin(c: Context): Record<string, string> {
  const forwarded = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
  let peer: string | undefined;
  try {
    const addr = (c.env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr;
    peer = addr?.hostname;
  } catch { /* served without connection info */ }
  const ip = forwarded && /^[0-9A-Fa-f:.]{2,45}$/.test(forwarded) ? forwarded : peer;
  const userAgent = c.req.header("user-agent")?.slice(0, 500);
  return {
    ...(ip ? { "x-forwarded-for": ip } : {}),
    ...(userAgent ? { "user-agent": userAgent } : {}),
  };
}

export const organizationSuspended = () =>
  forbidden(
    "organization_suspended",
    "This organization is suspended by the platform's administrators; nothing can be done for it until it is resumed",
  );

/**
 * `asCaller` for callers who may configure webhooks for their active organization: an admin there
 * (live membership) or a live API key of it. Staff and removed members get 403; what belongs to other
 * organizations is simply invisible (404 further in). A request that may write (any method but GET)
 * holds that authority for its transaction (private.hold_admin_authority).
 */
export function asAdmin<T>(
  deps: AppDeps,
  c: Context<ActorEnv>,
  fn: (tx: Tx, ctx: { organizationId: string; actor: Actor }) => Promise<T>,
): Promise<T> {
  return asCaller(deps, c, (tx, { organizationId, actor, suspended }) => {
    if (!organizationId) {
      if (suspended) throw organizationSuspended();
      if (actor.kind === "user" && !actor.claims.organization_id) {
        throw forbidden("no_active_organization", "Your token names no organization; pick one and refresh");
      }
      throw forbidden("admin_required", "Only administrators of the organization can do this");
    }
    return fn(tx, { organizationId, actor });
  }, { holdAuthority: c.req.method !== "GET" && c.req.method !== "HEAD" });
}
