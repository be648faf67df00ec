// The local token service's keys, made on first use and kept out of git (supabase/.temp is ignored):
// the anon key every /auth/v1 call must carry in `apikey` (as Supabase's gateway demands), and the ES256
// key pair access tokens are signed with, published at /auth/v1/.well-known/jwks.json under its `kid`.
// LOCAL_AUTH_DIR moves both (tests give each dev server its own); SUPABASE_ANON_KEY overrides the anon key.
import * as jose from "jose";

const DEFAULT_DIR = new URL("../../supabase/.temp/", import.meta.url);

export function keysDir(): URL {
  const dir = Deno.env.get("LOCAL_AUTH_DIR");
  return dir ? new URL(`file://${dir.replace(/\/?$/, "/")}`) : DEFAULT_DIR;
}

/** Reads `name` in `dir`, or writes `make()` there first; a concurrent first start reads the winner's. */
async function readOrCreate(dir: URL, name: string, make: () => Promise<string>): Promise<string> {
  const file = new URL(name, dir);
  try {
    return await readComplete(file);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(dir, { recursive: true });
  const value = await make();
  // Written under a unique name and then linked into place: the link either wins or finds the file
  // another process linked first, and nobody ever reads a half-written one.
  const tmp = new URL(`${name}.${crypto.randomUUID()}.tmp`, dir);
  await Deno.writeTextFile(tmp, value + "\n", { mode: 0o600 });
  try {
    await Deno.link(tmp.pathname, file.pathname);
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
  return await readComplete(file);
}

async function readComplete(file: URL): Promise<string> {
  const text = (await Deno.readTextFile(file)).trim();
  if (!text) throw new Error(`${file.pathname} is empty; delete it and start again`);
  return text;
}

function randomToken(bytes: number): string {
  return jose.base64url.encode(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The local anon (publishable) key: SUPABASE_ANON_KEY, else the one kept in `anon-key`. */
export async function localAnonKey(dir: URL = keysDir()): Promise<string> {
  const fromEnv = Deno.env.get("SUPABASE_ANON_KEY");
  if (fromEnv) return fromEnv;
  return await readOrCreate(dir, "anon-key", () => Promise.resolve(`sb_publishable_${randomToken(24)}`));
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public half as published in the JWKS. */
  publicJwk: jose.JWK;
}

/** The ES256 signing key, kept as a private JWK in `signing-key.json` (like Supabase's signing_keys.json). */
export async function localSigningKey(dir: URL = keysDir()): Promise<SigningKey> {
  const text = await readOrCreate(dir, "signing-key.json", async () => {
    const pair = await jose.generateKeyPair("ES256", { extractable: true });
    const jwk = await jose.exportJWK(pair.privateKey);
    return JSON.stringify({ ...jwk, kid: crypto.randomUUID(), alg: "ES256", use: "sig", key_ops: ["sign"] });
  });
  const jwk = JSON.parse(text) as jose.JWK & { kid: string; d?: string };
  if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.d || !jwk.kid) {
    throw new Error(`${new URL("signing-key.json", dir).pathname} is not an ES256 private key; delete it`);
  }
  const privateKey = await jose.importJWK(jwk, "ES256") as CryptoKey;
  const { kty, crv, x, y, kid } = jwk;
  return {
    kid,
    privateKey,
    publicJwk: { kty, crv, x, y, kid, alg: "ES256", use: "sig", key_ops: ["verify"] },
  };
}
