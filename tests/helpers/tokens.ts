// Access tokens as Supabase Auth would sign them, with a key pair made for the test run, and the
// function configuration that trusts exactly that key.
import * as jose from "jose";
import { LOCAL_AUTH_ISSUER } from "../../supabase/functions/_shared/auth.ts";
import { type Config, loadConfig } from "../../supabase/functions/_shared/config.ts";
import { testDbUrl, type TestUser } from "./db.ts";

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

export async function tokenFor(
  user: TestUser,
  organizationId?: string,
  opts: {
    /** null: no `exp` claim at all. */
    expiresIn?: string | number | null;
    /** null: no `iss` claim at all. Default: the issuer the functions expect without SUPABASE_URL. */
    issuer?: string | null;
    claims?: Record<string, unknown>;
  } = {},
): Promise<string> {
  const { privateKey } = await signingKeys();
  const jwt = new jose.SignJWT({
    sub: user.id,
    email: user.email,
    role: "authenticated",
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
