// Database helpers for tests: a connection as `postgres` to the run's throwaway database, queries as
// `authenticated` with given JWT claims (what PostgREST does per request) or as `config_api` (what the
// configuration API does), and small factories that create exactly what a test needs.
import {
  createSql,
  type JwtClaims,
  type Sql,
  type Tx,
  withClaims,
} from "../../supabase/functions/_shared/db.ts";

export type { JwtClaims, Sql, Tx };

export function testDbUrl(): string {
  const url = Deno.env.get("TEST_DATABASE_URL");
  if (!url) throw new Error("TEST_DATABASE_URL is not set: run tests through scripts/test.sh");
  return url;
}

let shared: Sql | undefined;

/** One pool for the whole test file (postgres.js connects lazily). Close it with `closeSql()`. */
export function sql(): Sql {
  shared ??= createSql(testDbUrl(), { max: 10 });
  return shared;
}

export async function closeSql(): Promise<void> {
  const s = shared;
  shared = undefined;
  await s?.end({ timeout: 5 });
}

/** Runs `fn` as `authenticated` with these claims inside one transaction, like a PostgREST request. */
export function asUser<T>(claims: JwtClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withClaims(sql(), claims, fn);
}

/** The same through the configuration API's door: as `config_api` (webhooks/actor.ts). */
export function asConfigApi<T>(claims: JwtClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withClaims(sql(), claims, fn, "config_api");
}

export interface TestUser {
  id: string;
  email: string;
  /** The session the user is signed in with (auth.sessions), which claimsFor names. */
  sessionId: string;
}

/** A user, signed in: with a session of theirs in auth.sessions, as signing in makes one. */
export async function createUser(email = `user-${crypto.randomUUID()}@example.org`): Promise<TestUser> {
  const [row] = await sql()<{ id: string; session_id: string }[]>`
    with u as (
      insert into auth.users (id, email, aud, role) values (gen_random_uuid(), ${email}, 'authenticated', 'authenticated')
      returning id
    ), s as (
      insert into auth.sessions (id, user_id, created_at, updated_at, aal)
      select gen_random_uuid(), u.id, now(), now(), 'aal1' from u
      returning id, user_id
    )
    select s.user_id as id, s.id as session_id from s`;
  return { id: row!.id, email, sessionId: row!.session_id };
}

export async function createOrganization(
  name = `Church ${crypto.randomUUID().slice(0, 8)}`,
): Promise<string> {
  const [row] = await sql()<
    { id: string }[]
  >`insert into public.organizations (name) values (${name}) returning id`;
  return row!.id;
}

export async function addMember(userId: string, organizationId: string, role: "admin" | "staff" = "staff") {
  await sql()`insert into public.profiles (user_id, organization_id, role) values (${userId}, ${organizationId}, ${role})`;
}

/**
 * The claims a signed-in user's token carries, as the access-token hook would produce them, naming the
 * user's session (a token of a session that has ended: pass its `session_id` in `extra`).
 */
export function claimsFor(user: TestUser, organizationId?: string, extra: JwtClaims = {}): JwtClaims {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: "http://127.0.0.1:54321/auth/v1",
    aud: "authenticated",
    sub: user.id,
    email: user.email,
    role: "authenticated",
    session_id: user.sessionId,
    iat: now,
    exp: now + 3600,
    ...(organizationId ? { organization_id: organizationId } : {}),
    is_platform_admin: false,
    is_superadmin: false,
    ...extra,
  };
}

/** An organization with an admin and a staff member, ready for tenancy tests. */
export async function createTenant(name?: string) {
  const organizationId = await createOrganization(name);
  const admin = await createUser();
  const staff = await createUser();
  await addMember(admin.id, organizationId, "admin");
  await addMember(staff.id, organizationId, "staff");
  return {
    organizationId,
    admin,
    staff,
    adminClaims: claimsFor(admin, organizationId),
    staffClaims: claimsFor(staff, organizationId),
  };
}
