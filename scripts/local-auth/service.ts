// A local stand-in for Supabase Auth (GoTrue), for development and tests only, never deployed: the
// paths supabase-js uses for password sessions and accounts, with GoTrue's request and response shapes,
// error codes and session rules (internal/api/token.go, token_refresh.go, tokens/service.go, logout.go,
// user.go, signup.go, recover.go, verify.go, mail.go):
//   POST /token?grant_type=password | refresh_token, POST /signup, POST /recover, GET|POST /verify,
//   GET|PUT /user, POST /logout, GET /.well-known/jwks.json
// Confirmation and recovery mails are rendered from config.toml's templates and sent to the local mail
// catcher (mailer.ts).
// Users, sessions and refresh tokens live in auth.users, auth.sessions and auth.refresh_tokens; the
// custom access-token hook is called as supabase_auth_admin exactly as GoTrue calls it; tokens are
// signed ES256 with the key published in the JWKS. Sign-up follows supabase/config.toml (enable_signup,
// enable_confirmations, minimum_password_length); passwords are bcrypt of cost 10, as GoTrue hashes
// them; sign-in and sign-up are limited per client address, and per e-mail and client address together
// (limits.ts), and answer 429 over_request_rate_limit beyond.
import * as jose from "jose";
import type { Sql, Tx } from "../../supabase/functions/_shared/db.ts";
import { secretsEqual } from "../../supabase/functions/_shared/hmac.ts";
import { jsonDepth, MAX_JSON_DEPTH, storableInPostgres } from "../../supabase/functions/_shared/storable.ts";
import type { AuthSettings } from "./config.ts";
import type { SigningKey } from "./keys.ts";
import { AuthError, authErrorResponse, authJson, badRequest, forbidden, internal } from "./errors.ts";
import { validateClaims } from "./claims.ts";
import { AttemptLimiter } from "./limits.ts";
import type { AuthMailer, MailData, MailType } from "./mailer.ts";
import { MailOutbox } from "./outbox.ts";
import { newOtp, referrer, tokenHash } from "./links.ts";

export interface AuthServiceOptions {
  sql: Sql;
  /** `<API URL>/auth/v1`: the `iss` of every token, as Supabase Auth sets it. */
  issuer: string;
  anonKey: string;
  signingKey: SigningKey;
  settings: AuthSettings;
  /** Sends confirmation and recovery mails; without one they are not sent (Supabase Auth's no-op mailer). */
  mailer?: AuthMailer;
  /** Where recovery mails wait to be sent after the answer (tests hand in theirs to watch it). */
  outbox?: MailOutbox;
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000";
const AUDIENCE = "authenticated";
/** GoTrue's bcrypt cost (bcrypt.DefaultCost). */
const BCRYPT_COST = 10;
/**
 * Compared against when the address has no account (or no password), so that answering "invalid
 * credentials" costs one bcrypt of the same cost whether the address is known or not.
 */
const DUMMY_HASH = "$2a$10$AgT2F8ypR8oC8Q/7sqRvXuK1uYB2aarC6He4tx3bI.8Gv/KmbEqQO";
/** Sign-in attempts per e-mail address and client address per 5 minutes (guessing one person's password). */
export const ATTEMPTS_PER_ADDRESS = 10;
const FIVE_MINUTES = 5 * 60_000;
const MAX_BODY = 64 * 1024;
/** bcrypt reads 72 bytes; Supabase Auth refuses longer passwords (password.go MaxPasswordLength). */
const MAX_PASSWORD_BYTES = 72;
/** A password change without reauthentication needs a session younger than this (secure_password_change). */
const REAUTHENTICATE_AFTER = 24 * 3600_000;
/** OAuth error names of GoTrue's error redirects (oauthErrorMap). */
const OAUTH_ERRORS: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized_client",
  403: "access_denied",
  500: "server_error",
  503: "temporarily_unavailable",
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface UserRow {
  id: string;
  aud: string | null;
  role: string | null;
  email: string | null;
  phone: string | null;
  has_password: boolean;
  email_confirmed_at: Date | null;
  phone_confirmed_at: Date | null;
  invited_at: Date | null;
  confirmation_sent_at: Date | null;
  recovery_sent_at: Date | null;
  email_change: string | null;
  email_change_sent_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: Record<string, unknown> | null;
  raw_user_meta_data: Record<string, unknown> | null;
  created_at: Date | null;
  updated_at: Date | null;
  banned_until: Date | null;
  deleted_at: Date | null;
  is_anonymous: boolean | null;
}

const USER_COLUMNS = `id, aud, role, email, phone,
  coalesce(encrypted_password, '') <> '' as has_password, email_confirmed_at, phone_confirmed_at, invited_at,
  confirmation_sent_at, recovery_sent_at, email_change, email_change_sent_at, last_sign_in_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at, banned_until, deleted_at, is_anonymous`;

const iso = (d: Date | null) => (d ? d.toISOString() : undefined);

/** GoTrue's JSON for a user (models.User): empty strings for a missing e-mail or phone, no secrets. */
export function userJson(u: UserRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: u.id,
    aud: u.aud ?? "",
    role: u.role ?? "",
    email: u.email ?? "",
    email_confirmed_at: iso(u.email_confirmed_at),
    invited_at: iso(u.invited_at),
    phone: u.phone ?? "",
    phone_confirmed_at: iso(u.phone_confirmed_at),
    confirmation_sent_at: iso(u.confirmation_sent_at),
    confirmed_at: iso(u.email_confirmed_at ?? u.phone_confirmed_at),
    recovery_sent_at: iso(u.recovery_sent_at),
    new_email: u.email_change || undefined,
    email_change_sent_at: iso(u.email_change_sent_at),
    last_sign_in_at: iso(u.last_sign_in_at),
    app_metadata: u.raw_app_meta_data ?? {},
    user_metadata: u.raw_user_meta_data ?? {},
    identities: [],
    created_at: iso(u.created_at) ?? new Date(0).toISOString(),
    updated_at: iso(u.updated_at) ?? new Date(0).toISOString(),
    banned_until: iso(u.banned_until),
    deleted_at: iso(u.deleted_at),
    is_anonymous: u.is_anonymous ?? false,
  };
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key];
  return out;
}

const banned = (u: UserRow) => u.banned_until !== null && u.banned_until.getTime() > Date.now();

/** GoTrue's v1 refresh token: 12 characters of [a-z0-9] (crypto.SecureAlphanumeric(12)). */
function newRefreshToken(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let out = "";
  while (out.length < 12) {
    for (const b of crypto.getRandomValues(new Uint8Array(16))) {
      // 252 = 7 * 36: rejecting the rest keeps every character equally likely.
      if (b < 252 && out.length < 12) out += alphabet[b % 36];
    }
  }
  return out;
}

async function readJson(req: Request): Promise<Record<string, unknown>> {
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > MAX_BODY) throw new AuthError(413, "request_too_large", "Request body too large");
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (bytes.length > MAX_BODY) throw new AuthError(413, "request_too_large", "Request body too large");
  let parsed: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    parsed = JSON.parse(text);
  } catch (err) {
    throw badRequest("bad_json", `Could not parse request body as JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw badRequest("bad_json", "Could not parse request body as JSON: expected an object");
  }
  // A NUL or an unpaired surrogate in an address, a password or user metadata, or metadata nested past
  // what jsonb takes, would reach PostgreSQL and come back as a 500 "Database error".
  if (!storableInPostgres(parsed) || jsonDepth(text) > MAX_JSON_DEPTH) {
    throw badRequest(
      "validation_failed",
      "The request contains a NUL character, an unpaired surrogate or nesting deeper than 64 levels",
    );
  }
  return parsed as Record<string, unknown>;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

/** validateEmail (mail.go): present, at most 255 characters, an address; lower-cased. */
function validEmail(raw: string): string {
  if (!raw) throw badRequest("validation_failed", "An email address is required");
  if (raw.length > 255) throw badRequest("validation_failed", "An email address is too long");
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(raw)) {
    throw badRequest("validation_failed", "Unable to validate email address: invalid format");
  }
  return raw.toLowerCase();
}

/** checkPasswordStrength (password.go): at most 72 bytes, at least minimum_password_length. */
function checkPassword(password: string, minimum: number): void {
  const bytes = new TextEncoder().encode(password).length;
  if (bytes > MAX_PASSWORD_BYTES) {
    throw badRequest("validation_failed", `Password cannot be longer than ${MAX_PASSWORD_BYTES} characters`);
  }
  if (bytes < minimum) {
    throw new AuthError(422, "weak_password", `Password should be at least ${minimum} characters.`);
  }
}

/** The verification types this stand-in serves, and which stored token each one checks. */
const VERIFY_TYPES: Record<string, "confirmation" | "recovery" | "either"> = {
  signup: "confirmation",
  invite: "confirmation",
  recovery: "recovery",
  magiclink: "recovery",
  email: "either",
};

/** The local Supabase Auth: answers `req` for `path` below /auth/v1, from the client at `clientAddress`. */
export type AuthService = (req: Request, path: string, clientAddress?: string) => Promise<Response>;

const overLimit = () => new AuthError(429, "over_request_rate_limit", "Request rate limit reached");

interface PendingMail {
  userId: string;
  type: MailType;
  to: string;
  data: MailData;
}

function logMailFailure(type: MailType, err: unknown) {
  console.error(JSON.stringify({
    level: "error",
    component: "local-auth",
    msg: "mail not sent",
    type,
    error: (err as Error)?.message ?? String(err),
  }));
}

export function createAuthService(opts: AuthServiceOptions): AuthService {
  const { sql, issuer, signingKey, settings } = opts;
  const outbox = opts.outbox ?? new MailOutbox();
  const jwks = { keys: [signingKey.publicJwk] };
  const publicKey = jose.importJWK(signingKey.publicJwk, "ES256");
  const perClient = new AttemptLimiter(settings.signInsPerFiveMinutes, FIVE_MINUTES);
  const perAddress = new AttemptLimiter(ATTEMPTS_PER_ADDRESS, FIVE_MINUTES);
  // Supabase Auth keeps one bucket per path: recovery and user updates spend sign_in_sign_ups as
  // sign-in does, e-mail links and codes spend token_verifications (apilimiter.go).
  const perClientRecover = new AttemptLimiter(settings.signInsPerFiveMinutes, FIVE_MINUTES);
  const perClientUser = new AttemptLimiter(settings.signInsPerFiveMinutes, FIVE_MINUTES);
  const perClientVerify = new AttemptLimiter(settings.verificationsPerFiveMinutes, FIVE_MINUTES);

  /** Builds the claims, runs the hook, validates and signs: tokens/service.go GenerateAccessToken. */
  async function accessToken(
    tx: Tx,
    req: Request,
    user: UserRow,
    sessionId: string,
    method: "password" | "otp" | "token_refresh",
  ): Promise<{ token: string; expiresAt: number }> {
    const [session] = await tx<
      { aal: string | null }[]
    >`select aal::text from auth.sessions where id = ${sessionId}`;
    const amr = await tx<{ method: string; timestamp: number }[]>`
      select authentication_method as method, extract(epoch from updated_at)::bigint::int as timestamp
      from auth.mfa_amr_claims where session_id = ${sessionId} order by updated_at desc`;
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresAt = issuedAt + settings.jwtExpiry;
    let claims: Record<string, unknown> = {
      iss: issuer,
      sub: user.id,
      aud: user.aud ?? "",
      exp: expiresAt,
      iat: issuedAt,
      email: user.email ?? "",
      phone: user.phone ?? "",
      app_metadata: user.raw_app_meta_data ?? {},
      user_metadata: user.raw_user_meta_data ?? {},
      role: user.role ?? "",
      aal: session?.aal ?? "aal1",
      amr: amr.map((a) => ({ method: a.method, timestamp: a.timestamp })),
      session_id: sessionId,
      is_anonymous: user.is_anonymous ?? false,
    };
    if (settings.accessTokenHook) {
      claims = await runAccessTokenHook(tx, req, user.id, claims, method);
    }
    const token = await new jose.SignJWT(claims as jose.JWTPayload)
      .setProtectedHeader({ alg: "ES256", kid: signingKey.kid, typ: "JWT" })
      .sign(signingKey.privateKey);
    return { token, expiresAt };
  }

  /**
   * hookspgfunc.go: `set local statement_timeout TO '2000'; select <hook>(input)` on the request's
   * transaction (as supabase_auth_admin), then hookserrors.Check, the {claims} output and the minimum
   * claims schema. Any failure fails the request, as it does in Supabase Auth.
   */
  async function runAccessTokenHook(
    tx: Tx,
    req: Request,
    userId: string,
    claims: Record<string, unknown>,
    method: string,
  ): Promise<Record<string, unknown>> {
    const input = {
      metadata: {
        uuid: crypto.randomUUID(),
        time: new Date().toISOString(),
        name: "customize-access-token",
        ...(clientIp(req) ? { ip_address: clientIp(req) } : {}),
      },
      user_id: userId,
      claims,
      authentication_method: method,
    };
    let output: unknown;
    try {
      await tx`set local statement_timeout to '2000'`;
      const [row] = await tx.unsafe<{ output: unknown }[]>(
        `select ${settings.accessTokenHook}($1::jsonb) as output`,
        // postgres.js serializes a jsonb parameter itself (JSON.stringify): hand it the object.
        [input as unknown as string],
      );
      await tx`set local statement_timeout to default`;
      output = row?.output;
    } catch (err) {
      console.error(JSON.stringify({
        level: "warn",
        component: "local-auth",
        msg: "Hook errored out",
        hook: settings.accessTokenHookUri,
        error: (err as Error).message,
      }));
      throw internal(`Error running hook URI: ${settings.accessTokenHookUri}`);
    }
    if (typeof output === "string") {
      try {
        output = JSON.parse(output);
      } catch {
        throw internal("Error unmarshaling JSON output.");
      }
    }
    const out = (typeof output === "object" && output !== null ? output : {}) as Record<string, unknown>;
    const hookError = out.error as { http_code?: unknown; message?: unknown } | undefined;
    if (
      hookError && typeof hookError === "object" && typeof hookError.message === "string" && hookError.message
    ) {
      const status = typeof hookError.http_code === "number" && hookError.http_code
        ? hookError.http_code
        : 500;
      throw new AuthError(status, "", hookError.message);
    }
    if (!("claims" in out)) throw new AuthError(500, "", "output claims field is missing");
    const next = out.claims;
    if (typeof next !== "object" || next === null || Array.isArray(next)) {
      throw internal("Error unmarshaling JSON output.");
    }
    const problems = validateClaims(next as Record<string, unknown>);
    if (problems.length) {
      throw new AuthError(
        500,
        "",
        `output claims do not conform to the expected schema: \n${problems.map((p) => `- ${p}\n`).join("")}`,
      );
    }
    return next as Record<string, unknown>;
  }

  function tokenResponse(user: UserRow, token: string, expiresAt: number, refreshToken: string) {
    return {
      access_token: token,
      token_type: "bearer",
      // As Supabase Auth answers: the configured lifetime (jwt_expiry), not a countdown that reads 3599
      // when the request straddles a second.
      expires_in: settings.jwtExpiry,
      expires_at: expiresAt,
      refresh_token: refreshToken,
      user: userJson(user),
    };
  }

  /** Everything Supabase Auth does in one request runs as its own database role. */
  function asAuthAdmin<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return sql.begin(async (tx) => {
      await tx`set local role supabase_auth_admin`;
      return await fn(tx);
    }) as Promise<T>;
  }

  /**
   * A new session for `user` with its first refresh token and access token: GoTrue's issueRefreshToken,
   * in `tx` when given (an e-mail link's verification), else in a transaction of its own. `method` is
   * the session's authentication method (amr): a password, or an e-mail link or code ("otp").
   */
  function startSession(
    req: Request,
    user: UserRow,
    method: "password" | "otp" = "password",
    within?: Tx,
  ): Promise<ReturnType<typeof tokenResponse>> {
    const issue = async (tx: Tx) => {
      const sessionId = crypto.randomUUID();
      await tx`insert into auth.sessions (id, user_id, created_at, updated_at, aal, user_agent)
               values (${sessionId}, ${user.id}, now(), now(), 'aal1', ${req.headers.get("user-agent")})`;
      await tx`insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method)
               values (gen_random_uuid(), ${sessionId}, now(), now(), ${method})`;
      const refreshToken = newRefreshToken();
      await tx`insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, session_id)
               values (${NIL_UUID}, ${refreshToken}, ${user.id}, false, now(), now(), ${sessionId})`;
      const [signedIn] = await tx.unsafe<UserRow[]>(
        `update auth.users set last_sign_in_at = now(), updated_at = now() where id = $1 returning ${USER_COLUMNS}`,
        [user.id],
      );
      const { token, expiresAt } = await accessToken(tx, req, signedIn!, sessionId, method);
      return tokenResponse(signedIn!, token, expiresAt, refreshToken);
    };
    return within ? issue(within) : asAuthAdmin(issue);
  }

  /** Spends one of the client's sign-in/sign-up attempts (config.toml's sign_in_sign_ups), or 429. */
  function limitClient(clientAddress: string | undefined) {
    if (!perClient.take(clientAddress ?? "unknown")) throw overLimit();
  }

  async function passwordGrant(req: Request, clientAddress?: string): Promise<Response> {
    limitClient(clientAddress);
    const params = await readJson(req);
    const email = str(params.email);
    const phone = str(params.phone);
    const password = str(params.password);
    if (email && phone) {
      throw badRequest(
        "validation_failed",
        "Only an email address or phone number should be provided on login.",
      );
    }
    if (phone) throw new AuthError(422, "phone_provider_disabled", "Phone logins are disabled");
    if (!email) throw badRequest("validation_failed", "missing email or phone");
    // Whether or not an account has this address: guessing one person's password. Counted per address
    // and client together (Supabase Auth limits per client address): a client that spends an address's
    // attempts locks out itself, not the person signing in from their own device.
    const attempts = `${email.trim().toLowerCase()} ${clientAddress ?? "unknown"}`;
    if (!perAddress.take(attempts)) throw overLimit();

    // models.FindUserByEmailAndAudience and the bcrypt comparison in one statement, the same for every
    // address: without an account (or a password) bcrypt runs against DUMMY_HASH, which no stored
    // password equals, so an unknown address costs what a known one does. bcrypt is pgcrypto's where
    // Supabase Auth uses Go's: the same hashes work.
    let user: UserRow | undefined;
    let valid = false;
    try {
      const [row] = await sql.unsafe<(UserRow & { password_ok: boolean | null })[]>(
        `select ${USER_COLUMNS},
                extensions.crypt($4, coalesce(nullif(u.encrypted_password, ''), $5)) = u.encrypted_password
                  as password_ok
         from (select) one
         left join auth.users u
           on u.instance_id = $1 and lower(u.email) = lower($2) and u.aud = $3 and u.is_sso_user = false`,
        [NIL_UUID, email, AUDIENCE, password, DUMMY_HASH],
      );
      user = row?.id ? row : undefined;
      valid = row?.password_ok === true;
    } catch {
      valid = false; // a stored password crypt() does not understand
    }
    const invalid = badRequest("invalid_credentials", "Invalid login credentials");
    if (!user || !user.has_password) throw invalid;
    if (banned(user)) throw badRequest("user_banned", "User is banned");
    if (!valid) throw invalid;
    if (!user.email_confirmed_at) throw badRequest("email_not_confirmed", "Email not confirmed");
    perAddress.forget(attempts);
    return authJson(await startSession(req, user));
  }

  /**
   * sendConfirmation / sendPasswordRecovery (mail.go): at most one such mail per max_frequency for the
   * user (429 over_email_send_rate_limit), a fresh code whose hash is stored and put into the link: in
   * `tx`, and what the mail needs to be sent, which sendUserMail does at once and recover off the
   * request's path.
   */
  async function prepareUserMail(tx: Tx, req: Request, user: UserRow, type: MailType): Promise<PendingMail> {
    const sentAt = type === "confirmation" ? user.confirmation_sent_at : user.recovery_sent_at;
    const until = sentAt ? sentAt.getTime() + settings.mailMaxFrequency * 1000 : 0;
    if (until > Date.now()) {
      const left = Math.floor((until - Date.now()) / 1000);
      throw new AuthError(
        429,
        "over_email_send_rate_limit",
        `For security purposes, you can only request this after ${left} seconds.`,
      );
    }
    const email = user.email ?? "";
    const otp = newOtp(settings.otpLength);
    const hash = tokenHash(email, otp);
    const redirectTo = referrer(req, settings.siteUrl, settings.additionalRedirectUrls);
    const verifyType = type === "confirmation" ? "signup" : "recovery";
    const confirmationUrl = `${issuer}/verify?token=${hash}&type=${verifyType}&redirect_to=${
      /[&=#]/.test(redirectTo) ? encodeURIComponent(redirectTo) : redirectTo
    }`;
    if (type === "confirmation") {
      await tx`update auth.users set confirmation_token = ${hash}, confirmation_sent_at = now() where id = ${user.id}`;
    } else {
      await tx`update auth.users set recovery_token = ${hash}, recovery_sent_at = now() where id = ${user.id}`;
    }
    return {
      userId: user.id,
      type,
      to: email,
      data: {
        SiteURL: settings.siteUrl,
        ConfirmationURL: confirmationUrl,
        Email: email,
        Token: otp,
        TokenHash: hash,
        RedirectTo: redirectTo,
      },
    };
  }

  /** The outbox's send of a recovery mail: when it fails, its code is forgotten (if still the latest). */
  async function sendLater(mail: PendingMail): Promise<void> {
    try {
      await opts.mailer?.send(mail.type, mail.to, mail.data);
    } catch (err) {
      await sql`update auth.users set recovery_token = '', recovery_sent_at = null
                where id = ${mail.userId} and recovery_token = ${mail.data.TokenHash}`;
      throw err;
    }
  }

  /** Sends a prepared mail; a mail that cannot be sent fails the request (500), so `tx` changes nothing. */
  async function sendUserMail(tx: Tx, req: Request, user: UserRow, type: MailType): Promise<void> {
    const mail = await prepareUserMail(tx, req, user, type);
    try {
      await opts.mailer?.send(mail.type, mail.to, mail.data);
    } catch (err) {
      logMailFailure(mail.type, err);
      throw internal(`Error sending ${type} email`);
    }
  }

  /**
   * signup.go for e-mail and password: refused when enable_signup is off; with enable_confirmations off
   * (autoconfirm) the address counts as confirmed at once and a session is returned, as Supabase Auth
   * does; with it on, the user waits unconfirmed and a confirmation mail (link and code) goes out. An
   * address that has an account already: confirmed, an obfuscated user and no mail (or 422
   * user_already_exists under autoconfirm, as Supabase Auth answers); unconfirmed, the mail again.
   */
  async function signup(req: Request, clientAddress?: string): Promise<Response> {
    limitClient(clientAddress);
    if (!settings.enableSignup) {
      throw new AuthError(422, "signup_disabled", "Signups not allowed for this instance");
    }
    const params = await readJson(req);
    const password = str(params.password);
    if (str(params.phone)) throw badRequest("phone_provider_disabled", "Phone signups are disabled");
    if (!password) throw badRequest("validation_failed", "Signup requires a valid password");
    checkPassword(password, settings.minimumPasswordLength);
    const email = validEmail(str(params.email).trim());
    const data = typeof params.data === "object" && params.data !== null && !Array.isArray(params.data)
      ? params.data
      : {};
    // As postgres, as this stand-in has always hashed: bcrypt is pgcrypto's here (Go's in Supabase Auth),
    // and supabase_auth_admin has no business in schema extensions.
    const outcome = await sql.begin(async (tx): Promise<{ user?: UserRow; exists?: boolean }> => {
      // Two sign-ups for one address at once must still make one user.
      await tx`select pg_advisory_xact_lock(hashtext(${"signup:" + email}))`;
      const [existing] = await tx.unsafe<UserRow[]>(
        `select ${USER_COLUMNS} from auth.users where instance_id = $1 and lower(email) = $2 and aud = $3`,
        [NIL_UUID, email, AUDIENCE],
      );
      if (existing?.email_confirmed_at) return { exists: true };
      // An unconfirmed account keeps its password and data: whoever signs up again is not yet known
      // to own the address (signup.go: "we can't be sure of their claimed identity").
      const user = existing ?? (await tx.unsafe<UserRow[]>(
        `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
           raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
           confirmation_token, recovery_token, email_change_token_new, email_change)
         values ($1, gen_random_uuid(), $2, 'authenticated', $3,
           extensions.crypt($4, extensions.gen_salt('bf', ${BCRYPT_COST})), case when $5 then now() end,
           '{"provider":"email","providers":["email"]}', $6::jsonb, now(), now(), '', '', '', '')
         returning ${USER_COLUMNS}`,
        [NIL_UUID, AUDIENCE, email, password, settings.autoconfirm, data as unknown as string],
      ))[0]!;
      if (!user.email_confirmed_at) {
        await sendUserMail(tx, req, user, "confirmation");
        const [sent] = await tx.unsafe<UserRow[]>(`select ${USER_COLUMNS} from auth.users where id = $1`, [
          user.id,
        ]);
        return { user: sent };
      }
      return { user };
    });
    if (outcome.exists) {
      if (settings.autoconfirm) throw new AuthError(422, "user_already_exists", "User already registered");
      // sanitizeUser: what a new sign-up answers, with an id that belongs to nobody.
      const now = new Date().toISOString();
      return authJson({
        id: crypto.randomUUID(),
        aud: AUDIENCE,
        role: "",
        email,
        phone: "",
        confirmation_sent_at: now,
        app_metadata: { provider: "email", providers: ["email"] },
        user_metadata: data,
        identities: [],
        created_at: now,
        updated_at: now,
        is_anonymous: false,
      });
    }
    const user = outcome.user!;
    if (user.email_confirmed_at) return authJson(await startSession(req, user));
    return authJson(userJson(user));
  }

  /**
   * recover.go: a recovery mail (link and code) to an address that has an account. Every address gets
   * the same empty answer, so the answer says nothing about whether an account exists, except (as in
   * Supabase Auth) the 429 over_email_send_rate_limit of a second request within max_frequency. The
   * mail goes through the outbox, after the answer.
   */
  async function recover(req: Request, clientAddress?: string): Promise<Response> {
    if (!perClientRecover.take(clientAddress ?? "unknown")) throw overLimit();
    const params = await readJson(req);
    const raw = str(params.email).trim();
    if (!raw) throw badRequest("validation_failed", "Password recovery requires an email");
    const email = validEmail(raw);
    const mail = await asAuthAdmin(async (tx) => {
      const [user] = await tx.unsafe<UserRow[]>(
        `select ${USER_COLUMNS} from auth.users
         where instance_id = $1 and lower(email) = $2 and aud = $3 and is_sso_user = false
         for update`,
        [NIL_UUID, email, AUDIENCE],
      );
      return user ? await prepareUserMail(tx, req, user, "recovery") : undefined;
    });
    // Sent after the answer: how long the mail server takes must not say whether the address has an
    // account. A mail that cannot go out is logged and its code forgotten, so no link works that never
    // went out and the person may ask again at once.
    if (mail) outbox.add(() => sendLater(mail), (err) => logMailFailure(mail.type, err));
    return authJson({});
  }

  /**
   * verify.go: an e-mail link (GET, token_hash in `token`) or code (POST, `token` with `email`, or
   * `token_hash`) proves the address. A sign-up link confirms it, a recovery link signs in (and
   * confirms an unconfirmed address); either way the stored token is used up and a session begins.
   * GET answers with a redirect carrying the session (or the error) in the fragment, POST with JSON.
   */
  async function verify(req: Request, clientAddress?: string): Promise<Response> {
    if (!perClientVerify.take(clientAddress ?? "unknown")) throw overLimit();
    const get = req.method === "GET";
    let type: string;
    let hash: string;
    let byEmail: string | undefined;
    let redirectTo = "";
    if (get) {
      const q = new URL(req.url).searchParams;
      type = q.get("type") ?? "";
      const token = q.get("token") ?? "";
      if (!type) throw badRequest("validation_failed", "Verify requires a verification type");
      if (!token) throw badRequest("validation_failed", "Verify requires a token or a token hash");
      hash = token;
      redirectTo = referrer(req, settings.siteUrl, settings.additionalRedirectUrls);
    } else {
      const params = await readJson(req);
      type = str(params.type);
      const token = str(params.token);
      const given = str(params.token_hash);
      if (!type) throw badRequest("validation_failed", "Verify requires a verification type");
      if ((!token && !given) || (token && given)) {
        throw badRequest("validation_failed", "Verify requires either a token or a token hash");
      }
      if (token) {
        if (str(params.phone) || !str(params.email)) {
          throw badRequest(
            "validation_failed",
            "Only an email address or phone number should be provided on verify",
          );
        }
        try {
          byEmail = validEmail(str(params.email).trim());
        } catch {
          throw new AuthError(422, "validation_failed", "Invalid email format");
        }
        hash = tokenHash(byEmail, token);
      } else {
        if (str(params.email) || str(params.phone) || str(params.redirect_to)) {
          throw badRequest("validation_failed", "Only the token_hash and type should be provided");
        }
        hash = given;
      }
    }
    const kind = VERIFY_TYPES[type];
    if (!kind) throw badRequest("validation_failed", "Unsupported verification type");
    const outcome = await asAuthAdmin(
      async (tx): Promise<{ body?: ReturnType<typeof tokenResponse>; error?: AuthError }> => {
        const expired = byEmail
          ? new AuthError(403, "otp_expired", "Token has expired or is invalid")
          : new AuthError(403, "otp_expired", "Email link is invalid or has expired");
        const tokenColumns = ", confirmation_token, recovery_token";
        const [user] = await tx.unsafe<
          (UserRow & { confirmation_token: string | null; recovery_token: string | null })[]
        >(
          byEmail
            ? `select ${USER_COLUMNS}${tokenColumns} from auth.users
             where instance_id = $1 and lower(email) = $2 and aud = $3 for update`
            : `select ${USER_COLUMNS}${tokenColumns} from auth.users
             where instance_id = $1 and $2 <> '' and (
               ($3 in ('confirmation', 'either') and confirmation_token = $2) or
               ($3 in ('recovery', 'either') and recovery_token = $2))
             for update`,
          byEmail ? [NIL_UUID, byEmail, AUDIENCE] : [NIL_UUID, hash, kind],
        );
        if (!user) return { error: expired };
        if (banned(user)) return { error: forbidden("user_banned", "User is banned") };
        const matches = (stored: string | null, sentAt: Date | null) =>
          !!stored && stored === hash && !!sentAt &&
          sentAt.getTime() + settings.otpExpiry * 1000 > Date.now();
        const isConfirmation = kind !== "recovery" &&
          matches(user.confirmation_token, user.confirmation_sent_at);
        const isRecovery = !isConfirmation && kind !== "confirmation" &&
          matches(user.recovery_token, user.recovery_sent_at);
        if (!isConfirmation && !isRecovery) return { error: expired };
        // signupVerify / recoverVerify: the token is used up; the address is confirmed either way.
        await tx`update auth.users set
                 confirmation_token = case when ${isConfirmation} then '' else confirmation_token end,
                 recovery_token = case when ${isRecovery} then '' else recovery_token end,
                 email_confirmed_at = coalesce(email_confirmed_at, now()),
                 raw_user_meta_data = coalesce(raw_user_meta_data, '{}'::jsonb) || '{"email_verified": true}',
                 updated_at = now()
               where id = ${user.id}`;
        const [fresh] = await tx.unsafe<UserRow[]>(`select ${USER_COLUMNS} from auth.users where id = $1`, [
          user.id,
        ]);
        return { body: await startSession(req, fresh!, "otp", tx) };
      },
    );
    if (!get) {
      if (outcome.error) throw outcome.error;
      return authJson(outcome.body);
    }
    const target = new URL(redirectTo);
    const fragment = new URLSearchParams();
    if (outcome.error) {
      const name = OAUTH_ERRORS[outcome.error.status];
      if (name) fragment.set("error", name);
      fragment.set("error_code", outcome.error.errorCode);
      fragment.set("error_description", outcome.error.message);
    } else {
      const body = outcome.body!;
      fragment.set("access_token", body.access_token);
      fragment.set("expires_at", String(body.expires_at));
      fragment.set("expires_in", String(body.expires_in));
      fragment.set("refresh_token", body.refresh_token);
      fragment.set("token_type", body.token_type);
      fragment.set("type", type);
    }
    fragment.set("sb", "");
    fragment.sort();
    target.hash = fragment.toString();
    return new Response(null, { status: 303, headers: { location: target.toString() } });
  }

  /**
   * user.go UserUpdate for what an account page changes: the password (minimum length, the current
   * one named outside a recovery session, not the same as the current one, and with
   * secure_password_change a session younger than 24 hours; every other session of the user ends) and user metadata (merged; null removes a key). E-mail and phone changes
   * are not served by this stand-in.
   */
  async function updateUser(req: Request, clientAddress?: string): Promise<Response> {
    const { user, sessionId } = await authenticate(req);
    if (!perClientUser.take(clientAddress ?? "unknown")) throw overLimit();
    const params = await readJson(req);
    if (params.app_metadata !== undefined) {
      throw forbidden("not_admin", "Updating app_metadata requires admin privileges");
    }
    const newEmail = str(params.email).trim();
    if (newEmail && validEmail(newEmail) !== (user.email ?? "")) {
      throw new AuthError(
        422,
        "validation_failed",
        "The local Supabase Auth stand-in does not change e-mail addresses",
      );
    }
    if (str(params.phone)) throw badRequest("phone_provider_disabled", "Phone logins are disabled");
    const password = params.password === undefined || params.password === null
      ? undefined
      : str(params.password);
    if (password !== undefined) checkPassword(password, settings.minimumPasswordLength);
    const data = params.data;
    if (data !== undefined && data !== null && (typeof data !== "object" || Array.isArray(data))) {
      throw badRequest("bad_json", "Could not parse request body as JSON: data must be an object");
    }
    const updated = await sql.begin(async (tx) => {
      if (password !== undefined && password !== "") {
        if (settings.securePasswordChange) {
          const [session] = sessionId
            ? await tx<{ created_at: Date }[]>`select created_at from auth.sessions where id = ${sessionId}`
            : [];
          if (!session || session.created_at.getTime() + REAUTHENTICATE_AFTER < Date.now()) {
            throw badRequest("reauthentication_needed", "Password update requires reauthentication");
          }
        }
        if (settings.requireCurrentPassword) await checkCurrentPassword(tx, user.id, sessionId, params);
        const [same] = await tx<{ same: boolean }[]>`
          select coalesce(encrypted_password, '') <> ''
                 and extensions.crypt(${password}, encrypted_password) = encrypted_password as same
          from auth.users where id = ${user.id}`;
        if (same?.same) {
          throw new AuthError(
            422,
            "same_password",
            "New password should be different from the old password.",
          );
        }
        // UpdatePassword: every emailed token stops working, and every other session ends.
        await tx`update auth.users set
                   encrypted_password = extensions.crypt(${password}, extensions.gen_salt('bf', ${BCRYPT_COST})),
                   confirmation_token = '', confirmation_sent_at = null, recovery_token = '',
                   recovery_sent_at = null, updated_at = now()
                 where id = ${user.id}`;
        if (sessionId) {
          await tx`delete from auth.sessions where user_id = ${user.id} and id <> ${sessionId}`;
        } else {
          await tx`delete from auth.sessions where user_id = ${user.id}`;
        }
      }
      if (data && typeof data === "object") {
        const entries = Object.entries(data as Record<string, unknown>);
        const set = Object.fromEntries(entries.filter(([, v]) => v !== null));
        const drop = entries.filter(([, v]) => v === null).map(([k]) => k);
        await tx`update auth.users set
                   raw_user_meta_data = (coalesce(raw_user_meta_data, '{}'::jsonb) - ${drop}::text[])
                                        || ${set as unknown as string}::jsonb,
                   updated_at = now()
                 where id = ${user.id}`;
      }
      const [row] = await tx.unsafe<UserRow[]>(`select ${USER_COLUMNS} from auth.users where id = $1`, [
        user.id,
      ]);
      return row!;
    });
    return authJson(userJson(updated));
  }

  /**
   * user.go's update_password_require_current_password: a session begun by a password (or a refresh of
   * one) must name the account's current password; a session begun by an e-mail link or code (amr
   * `otp`, `magiclink` or `recovery`: models.Session.IsRecovery) is exempt, since proving the address
   * is how a forgotten password is replaced. So a stolen access token alone cannot take the account.
   */
  async function checkCurrentPassword(
    tx: Tx,
    userId: string,
    sessionId: string | undefined,
    params: Record<string, unknown>,
  ): Promise<void> {
    const [row] = await tx<{ has_password: boolean; recovery: boolean }[]>`
      select coalesce(u.encrypted_password, '') <> '' as has_password,
             exists (select 1 from auth.mfa_amr_claims c
                     where c.session_id = ${sessionId ?? null}::uuid
                       and c.authentication_method in ('otp', 'magiclink', 'recovery')) as recovery
      from auth.users u where u.id = ${userId}`;
    if (!row?.has_password || row.recovery) return;
    const current = str(params.current_password);
    if (!current) {
      throw badRequest("current_password_required", "Current password required when setting new password.");
    }
    const [check] = await tx<{ ok: boolean }[]>`
      select extensions.crypt(${current}, encrypted_password) = encrypted_password as ok
      from auth.users where id = ${userId}`;
    if (!check?.ok) {
      throw badRequest("current_password_mismatch", "Current password required when setting new password.");
    }
  }

  async function refreshTokenGrant(req: Request): Promise<Response> {
    const params = await readJson(req);
    const refreshToken = str(params.refresh_token);
    // RefreshTokenGrantParams.Validate: only v1 tokens (12 characters) are issued here.
    if (!/^[a-z0-9]{12}$/.test(refreshToken)) {
      throw badRequest("validation_failed", "Refresh token is not valid");
    }
    const outcome = await asAuthAdmin(async (tx): Promise<{ body?: unknown; error?: AuthError }> => {
      // Locking the session serializes concurrent refreshes of one session (GoTrue: FOR UPDATE + retry).
      const [found] = await tx<
        {
          id: number;
          token: string;
          revoked: boolean;
          updated_at: Date;
          session_id: string;
          user_id: string;
          not_after: Date | null;
        }[]
      >`
        select rt.id::int, rt.token, coalesce(rt.revoked, false) as revoked, rt.updated_at, rt.session_id,
               s.user_id, s.not_after
        from auth.refresh_tokens rt join auth.sessions s on s.id = rt.session_id
        where rt.token = ${refreshToken}
        for update of s`;
      if (!found) {
        return {
          error: badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found"),
        };
      }
      const [user] = await tx.unsafe<UserRow[]>(`select ${USER_COLUMNS} from auth.users where id = $1`, [
        found.user_id,
      ]);
      if (!user) {
        return {
          error: badRequest("refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found"),
        };
      }
      if (banned(user)) return { error: badRequest("user_banned", "Invalid Refresh Token: User Banned") };
      if (found.not_after && found.not_after.getTime() < Date.now()) {
        return { error: badRequest("session_expired", "Invalid Refresh Token: Session Expired") };
      }

      let issued = "";
      if (found.revoked) {
        const [active] = await tx<{ token: string; parent: string | null }[]>`
          select token, parent from auth.refresh_tokens
          where session_id = ${found.session_id} and revoked is false order by id desc limit 1`;
        if (active && active.parent === found.token) {
          // The client lost the answer to its last refresh: hand it the token that answer carried.
          issued = active.token;
        } else {
          const reuseUntil = found.updated_at.getTime() + settings.refreshTokenReuseInterval * 1000;
          if (Date.now() > reuseUntil) {
            if (settings.refreshTokenRotation) {
              // Possible theft: the whole session goes (GoTrue's LogoutSession), so neither this
              // token's holder nor the session's other holder can refresh any more, and the
              // session's access tokens stop working at /user.
              await tx`delete from auth.sessions where id = ${found.session_id}`;
            }
            return { error: badRequest("refresh_token_already_used", "Invalid Refresh Token: Already Used") };
          }
        }
      }
      if (!issued) {
        // GrantRefreshTokenSwap: the presented token is used up, its child carries on the session.
        await tx`update auth.refresh_tokens set revoked = true, updated_at = now() where id = ${found.id}`;
        issued = newRefreshToken();
        await tx`insert into auth.refresh_tokens
                   (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
                 values (${NIL_UUID}, ${issued}, ${user.id}, false, now(), now(), ${found.token}, ${found.session_id})`;
      }
      const { token, expiresAt } = await accessToken(tx, req, user, found.session_id, "token_refresh");
      await tx`update auth.sessions
               set refreshed_at = now() at time zone 'utc', updated_at = now(), user_agent = ${
        req.headers.get("user-agent")
      }
               where id = ${found.session_id}`;
      return { body: tokenResponse(user, token, expiresAt, issued) };
    });
    // A detected reuse must stay committed (the session is gone) while the request still fails.
    if (outcome.error) throw outcome.error;
    return authJson(outcome.body);
  }

  /** auth.go requireAuthentication: a valid token of ours, its user, and its session if it names one. */
  async function authenticate(
    req: Request,
  ): Promise<{ user: UserRow; claims: jose.JWTPayload; sessionId?: string }> {
    const match = (req.headers.get("authorization") ?? "").match(/^(?:B|b)earer (\S+$)/);
    if (!match) throw new AuthError(401, "no_authorization", "This endpoint requires a valid Bearer token");
    let claims: jose.JWTPayload;
    try {
      const header = jose.decodeProtectedHeader(match[1]!);
      if (header.kid !== signingKey.kid) {
        throw new Error(`unrecognized JWT kid ${header.kid} for algorithm ${header.alg}`);
      }
      ({ payload: claims } = await jose.jwtVerify(match[1]!, await publicKey, { algorithms: ["ES256"] }));
    } catch (err) {
      const reason = err instanceof jose.errors.JWTExpired
        ? "token has invalid claims: token is expired"
        : (err as Error).message;
      throw forbidden("bad_jwt", `invalid JWT: unable to parse or verify signature, ${reason}`);
    }
    if (!claims.sub) throw forbidden("bad_jwt", "invalid claim: missing sub claim");
    if (!UUID.test(claims.sub)) throw badRequest("bad_jwt", "invalid claim: sub claim must be a UUID");
    const [user] = await sql.unsafe<UserRow[]>(`select ${USER_COLUMNS} from auth.users where id = $1`, [
      claims.sub,
    ]);
    if (!user) throw forbidden("user_not_found", "User from sub claim in JWT does not exist");
    const sessionId = typeof claims.session_id === "string" && claims.session_id !== NIL_UUID
      ? claims.session_id
      : undefined;
    if (sessionId) {
      if (!UUID.test(sessionId)) throw forbidden("bad_jwt", "invalid claim: session_id claim must be a UUID");
      const [session] = await sql`select 1 from auth.sessions where id = ${sessionId}`;
      if (!session) {
        throw forbidden("session_not_found", "Session from session_id claim in JWT does not exist");
      }
    }
    if (banned(user)) throw forbidden("user_banned", "User is banned");
    return { user, claims, sessionId };
  }

  async function getUser(req: Request): Promise<Response> {
    const { user, claims } = await authenticate(req);
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    if (aud !== AUDIENCE) {
      throw badRequest("validation_failed", "Token audience doesn't match request audience");
    }
    return authJson(userJson(user));
  }

  async function logout(req: Request): Promise<Response> {
    const scope = new URL(req.url).searchParams.get("scope") ?? "";
    if (!["", "global", "local", "others"].includes(scope)) {
      throw badRequest("validation_failed", `Unsupported logout scope "${scope}"`);
    }
    const { user, sessionId } = await authenticate(req);
    if (sessionId && scope === "local") {
      await sql`delete from auth.sessions where id = ${sessionId}`;
    } else if (sessionId && scope === "others") {
      await sql`delete from auth.sessions where id <> ${sessionId} and user_id = ${user.id}`;
    } else {
      await sql`delete from auth.sessions where user_id = ${user.id}`;
    }
    return new Response(null, { status: 204 });
  }

  function apiKeyError(req: Request): Response | undefined {
    const key = req.headers.get("apikey") ?? new URL(req.url).searchParams.get("apikey");
    if (!key) {
      return Response.json(
        {
          message: "No API key found in request",
          hint: "No `apikey` request header or url param was found.",
        },
        { status: 401 },
      );
    }
    if (!secretsEqual(key, opts.anonKey)) {
      return Response.json(
        { message: "Invalid API key", hint: "Double check your Supabase `anon` or `service_role` API key." },
        { status: 401 },
      );
    }
    return undefined;
  }

  async function route(req: Request, path: string, clientAddress?: string): Promise<Response> {
    // The key set is public, as on a hosted project: verifiers fetch it without an API key.
    if (path === "/.well-known/jwks.json" && req.method === "GET") {
      return new Response(JSON.stringify(jwks), {
        headers: { "content-type": "application/json", "cache-control": "public, max-age=600" },
      });
    }
    // An e-mail link is opened by a browser, which sends no API key: Supabase's gateway serves
    // GET /auth/v1/verify without one, as it does the key set.
    const emailLink = path === "/verify" && req.method === "GET";
    const refused = emailLink ? undefined : apiKeyError(req);
    if (refused) return refused;
    if (path === "/token" && req.method === "POST") {
      const grant = new URL(req.url).searchParams.get("grant_type");
      if (grant === "password") return await passwordGrant(req, clientAddress);
      if (grant === "refresh_token") return await refreshTokenGrant(req);
      throw badRequest("invalid_credentials", "unsupported_grant_type");
    }
    if (path === "/signup" && req.method === "POST") return await signup(req, clientAddress);
    if (path === "/recover" && req.method === "POST") return await recover(req, clientAddress);
    if (path === "/verify" && (req.method === "GET" || req.method === "POST")) {
      return await verify(req, clientAddress);
    }
    if (path === "/user" && req.method === "GET") return await getUser(req);
    if (path === "/user" && req.method === "PUT") return await updateUser(req, clientAddress);
    if (path === "/logout" && req.method === "POST") return await logout(req);
    const known = ["/token", "/signup", "/recover", "/verify", "/user", "/logout", "/.well-known/jwks.json"]
      .includes(path);
    if (known) throw new AuthError(405, "method_not_allowed", "Method not allowed");
    throw new AuthError(404, "not_found", "This path is not served by the local Supabase Auth stand-in");
  }

  return async (req, path, clientAddress) => {
    try {
      return await route(req, path, clientAddress);
    } catch (err) {
      if (err instanceof AuthError) return authErrorResponse(req, err);
      console.error(
        JSON.stringify({ level: "error", component: "local-auth", error: (err as Error).message }),
      );
      return authErrorResponse(req, internal("Database error"));
    }
  };
}

function clientIp(req: Request): string | undefined {
  return req.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || undefined;
}
