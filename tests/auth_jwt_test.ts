// The JWT verifier against keys made here: ES256 through a JWKS served on loopback (as Supabase Auth
// publishes it), the same JWKS given inline, and the legacy HS256 secret. Then the whole path: a
// request with a token reaches the database as `authenticated`, and RLS decides what it sees.
import * as jose from "jose";
import { assert, assertEquals, assertRejects } from "./helpers/assert.ts";
import { serve, type TestServer } from "./helpers/server.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import {
  createTokenVerifier,
  LOCAL_AUTH_ISSUER,
  requireUser,
  type TokenVerifier,
  type UserEnv,
} from "../supabase/functions/_shared/auth.ts";
import { AppError, errorResponse } from "../supabase/functions/_shared/errors.ts";
import { withClaims } from "../supabase/functions/_shared/db.ts";
import { Hono } from "hono";

const HS_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";
const userId = crypto.randomUUID();
const orgId = crypto.randomUUID();

let authServer: TestServer;
let issuer: string;
let esKey: CryptoKey;
let jwks: jose.JSONWebKeySet;
let remote: TokenVerifier;
let jwksFetches = 0;

async function setup() {
  if (authServer) return;
  const pair = await jose.generateKeyPair("ES256", { extractable: true });
  esKey = pair.privateKey;
  const publicJwk = { ...(await jose.exportJWK(pair.publicKey)), kid: "key-1", alg: "ES256", use: "sig" };
  jwks = { keys: [publicJwk] };
  authServer = await serve((req) => {
    if (new URL(req.url).pathname !== "/auth/v1/.well-known/jwks.json") {
      return new Response("nope", { status: 404 });
    }
    jwksFetches++;
    return Response.json(jwks);
  });
  issuer = `${authServer.url}/auth/v1`;
  remote = createTokenVerifier({ supabaseUrl: authServer.url, jwtSecret: HS_SECRET });
}

function baseClaims(over: Record<string, unknown> = {}) {
  return { sub: userId, role: "authenticated", email: "a@example.org", organization_id: orgId, ...over };
}

function es256(
  claims: Record<string, unknown>,
  opts: { exp?: string | number; aud?: string; iss?: string } = {},
) {
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: "key-1", typ: "JWT" })
    .setIssuedAt()
    .setIssuer(opts.iss ?? issuer)
    .setAudience(opts.aud ?? "authenticated")
    .setExpirationTime(opts.exp ?? "1h")
    .sign(esKey);
}

function hs256(claims: Record<string, unknown>, secret = HS_SECRET, exp: string | number = "1h") {
  return new jose.SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setIssuer(issuer)
    .setAudience("authenticated")
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(secret));
}

async function rejectsWith(verify: TokenVerifier, token: string, code: string) {
  const err = await assertRejects(() => verify(token), `token accepted, expected ${code}`);
  assert(err instanceof AppError, `not an AppError: ${err}`);
  assertEquals([err.status, err.code], [401, code]);
}

Deno.test("ES256 token from the project's JWKS (fetched over HTTP) is accepted with its claims", async () => {
  await setup();
  const claims = await remote(await es256(baseClaims({ is_platform_admin: false })));
  assertEquals([claims.sub, claims.organization_id, claims.role, claims.aud], [
    userId,
    orgId,
    "authenticated",
    "authenticated",
  ]);
  assert(jwksFetches >= 1, "the JWKS was fetched from the auth server");
});

Deno.test("the same JWKS given inline (SUPABASE_JWKS) verifies without any fetch", async () => {
  await setup();
  const before = jwksFetches;
  const inline = createTokenVerifier({ jwks: JSON.stringify(jwks) });
  const token = await es256(baseClaims(), { iss: LOCAL_AUTH_ISSUER });
  assertEquals((await inline(token)).sub, userId);
  assertEquals(jwksFetches, before);
  // Without SUPABASE_URL the issuer is still checked: the local stack's, nothing else.
  await rejectsWith(inline, await es256(baseClaims(), { iss: issuer }), "invalid_token");
});

Deno.test("legacy HS256 tokens verify with JWT_SECRET and not without it", async () => {
  await setup();
  assertEquals((await remote(await hs256(baseClaims()))).sub, userId);
  const asymmetricOnly = createTokenVerifier({ jwks: JSON.stringify(jwks) });
  await rejectsWith(asymmetricOnly, await hs256(baseClaims()), "invalid_token");
  await rejectsWith(
    remote,
    await hs256(baseClaims(), "another-secret-another-secret-another-secret!"),
    "invalid_token",
  );
});

Deno.test("expired tokens are refused as token_expired", async () => {
  await setup();
  const past = Math.floor(Date.now() / 1000) - 60;
  await rejectsWith(remote, await es256(baseClaims(), { exp: past }), "token_expired");
  await rejectsWith(remote, await hs256(baseClaims(), HS_SECRET, past), "token_expired");
});

Deno.test("tampered payloads, foreign keys, wrong audience or issuer are refused", async () => {
  await setup();
  const good = await es256(baseClaims());
  const [h, p, s] = good.split(".");
  const forged = jose.base64url.encode(
    JSON.stringify({
      ...JSON.parse(new TextDecoder().decode(jose.base64url.decode(p!))),
      organization_id: crypto.randomUUID(),
    }),
  );
  await rejectsWith(remote, `${h}.${forged}.${s}`, "invalid_token");

  const other = await jose.generateKeyPair("ES256");
  const wrongKey = await new jose.SignJWT(baseClaims())
    .setProtectedHeader({ alg: "ES256", kid: "key-1" })
    .setIssuer(issuer).setAudience("authenticated").setExpirationTime("1h")
    .sign(other.privateKey);
  await rejectsWith(remote, wrongKey, "invalid_token");
  await rejectsWith(remote, await es256(baseClaims(), { aud: "anon" }), "invalid_token");
  await rejectsWith(
    remote,
    await es256(baseClaims(), { iss: "https://evil.example/auth/v1" }),
    "invalid_token",
  );
});

Deno.test("unsigned (alg: none) and malformed tokens are refused", async () => {
  await setup();
  const none = new jose.UnsecuredJWT(baseClaims()).setIssuer(issuer).setAudience("authenticated")
    .setExpirationTime("1h").encode();
  await rejectsWith(remote, none, "invalid_token");
  for (const junk of ["", "abc", "a.b.c", "eyJhbGciOiJFUzI1NiJ9..", `${none}x`]) {
    await rejectsWith(remote, junk, "invalid_token");
  }
});

Deno.test("tokens without a user, with a non-user role, or a malformed organization_id are refused", async () => {
  await setup();
  const { sub: _sub, ...noSub } = baseClaims();
  await rejectsWith(remote, await es256(noSub), "invalid_token");
  await rejectsWith(remote, await es256(baseClaims({ sub: "not-a-uuid" })), "invalid_token");
  const { role: _role, ...noRole } = baseClaims();
  await rejectsWith(remote, await es256(noRole), "invalid_token");
  await rejectsWith(remote, await es256(baseClaims({ role: "service_role" })), "invalid_token");
  await rejectsWith(
    remote,
    await es256(baseClaims({ organization_id: "'; drop table x; --" })),
    "invalid_token",
  );
});

Deno.test("a verified request runs as authenticated: RLS shows only the caller's organization", async () => {
  await setup();
  const a = await createTenant("A");
  const b = await createTenant("B");
  const db = sql();
  const app = new Hono<UserEnv>();
  app.onError((err, c) => errorResponse(c, err));
  app.use("*", requireUser(remote));
  app.get("/orgs", async (c) => {
    const rows = await withClaims(
      db,
      c.get("claims"),
      (tx) => tx<{ id: string }[]>`select id from public.organizations`,
    );
    return c.json(rows.map((r) => r.id));
  });
  const server = await serve(app.fetch);
  try {
    const token = await es256({
      sub: a.admin.id,
      role: "authenticated",
      organization_id: a.organizationId,
      session_id: a.admin.sessionId,
    });
    const ok = await fetch(`${server.url}/orgs`, { headers: { authorization: `Bearer ${token}` } });
    assertEquals(ok.status, 200);
    const ids = await ok.json();
    assert(ids.includes(a.organizationId) && !ids.includes(b.organizationId), JSON.stringify(ids));

    // Claiming B in a token signed by the provider still shows nothing of B: membership is checked live.
    const claimB = await es256({
      sub: a.admin.id,
      role: "authenticated",
      organization_id: b.organizationId,
      session_id: a.admin.sessionId,
    });
    const res = await fetch(`${server.url}/orgs`, { headers: { authorization: `Bearer ${claimB}` } });
    assert(!(await res.json()).includes(b.organizationId));

    const attempts: Record<string, string>[] = [{}, { authorization: "Basic abc" }, {
      authorization: "Bearer nope",
    }];
    for (const headers of attempts) {
      const denied = await fetch(`${server.url}/orgs`, { headers });
      assertEquals(denied.status, 401);
      const body = await denied.json();
      assert(["missing_token", "invalid_token"].includes(body.error.code), JSON.stringify(body));
    }
  } finally {
    await server.close();
  }
});

Deno.test("cleanup", async () => {
  await authServer?.close();
  await closeSql();
});
