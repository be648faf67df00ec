// Access tokens as Supabase Auth would sign them, with a key pair made for the test run, each for a
// session of its own in auth.sessions (as signing in makes one), and the function configuration that
// trusts exactly that key.
import * as jose from "jose";
import { LOCAL_AUTH_ISSUER } from "../../supabase/functions/_shared/auth.ts";
import { type Config, loadConfig } from "../../supabase/functions/_shared/config.ts";
import { sql, testDbUrl, type TestUser } from "./db.ts";

let keys: Promise<{ privateKey: CryptoKey; jwks: string }> | undefined;

function signingKeys() {
  keys ??= (async () => {
    const pair = await jose.generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: "test-key", alg: "ES256", use: "sig" };
    return { privateKey: pair.privateKey, jwks: JSON.stringify({ keys: [jwk] }) };
  })();
  return keys;
}

/** Function configuration for tests: the test database, and user tokens verified with the test key. */
export async function testConfig(extra: Record<string, string> = {}): Promise<Config> {
  return loadConfig({ SUPABASE_DB_URL: testDbUrl(), SUPABASE_JWKS: (await signingKeys()).jwks, ...extra });
}

/** A new session of the user's in auth.sessions (none when the user does not exist); its id. */
export async function newSession(user: TestUser): Promise<string> {
  const id = crypto.randomUUID();
  await sql()`insert into auth.sessions (id, user_id, created_at, updated_at, aal)
              select ${id}, id, now(), now(), 'aal1' from auth.users where id = ${user.id}`;
  return id;
}

export async function tokenFor(
  user: TestUser,
  organizationId?: string,
  opts: {
    /** null: no `exp` claim at all. */
    expiresIn?: string | number | null;
    /** null: no `iss` claim at all. Default: the issuer the functions expect without SUPABASE_URL. */
    issuer?: string | null;
    /** The session the token names; null: no `session_id` claim. Default: a new session. */
    session?: string | null;
    claims?: Record<string, unknown>;
  } = {},
): Promise<string> {
  const { privateKey } = await signingKeys();
  const session = opts.session === undefined ? await newSession(user) : opts.session;
  const jwt = new jose.SignJWT({
    sub: user.id,
    email: user.email,
    role: "authenticated",
    ...(session ? { session_id: session } : {}),
    ...(organizationId ? { organization_id: organizationId } : {}),
    is_platform_admin: false,
    is_superadmin: false,
    ...opts.claims,
  })
    .setProtectedHeader({ alg: "ES256", kid: "test-key", typ: "JWT" })
    .setIssuedAt()
    .setAudience("authenticated");
  if (opts.expiresIn !== null) jwt.setExpirationTime(opts.expiresIn ?? "1h");
  if (opts.issuer !== null) jwt.setIssuer(opts.issuer ?? LOCAL_AUTH_ISSUER);
  return await jwt.sign(privateKey);
}
