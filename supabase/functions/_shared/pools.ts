// A function's database pools, and the check that each can log in: run once at start (its outcome goes
// to the log) and on every GET /<function>/health, so a login that cannot work is said plainly instead of
// surfacing as an error on every request.
// @see docs/operations.md#the-user-request-pools-login
import type { Config } from "./config.ts";
import { createSql, type Sql } from "./db.ts";
import { isDatabaseUnavailable } from "./errors.ts";

export interface Pools {
  /** Server-side pool (SUPABASE_DB_URL, the function's own role). */
  sql: Sql;
  /** The user-request pool, as `edge_user`; only functions that act for users have one. */
  userSql?: Sql;
}

/** How long a password read from the database is reused before it is read again (a changed one). */
const PASSWORD_TTL_MS = 10_000;

/**
 * The user-request pool. Its password is USER_DB_URL's or USER_DB_PASSWORD; with neither, it is read
 * through the server pool (private.edge_user_password(), which the migrations set) when a connection
 * opens, so a password set by `db push` or changed later needs nothing copied into the functions.
 */
export function createUserSql(config: Config, serverSql: Sql, max = config.dbPoolMax): Sql {
  if (!config.userDbPasswordFromDatabase) {
    return createSql(config.userDbUrl, { max, prepare: config.dbPrepare });
  }
  let cached: { at: number; value: Promise<string> } | undefined;
  const password = () => {
    if (!cached || Date.now() - cached.at > PASSWORD_TTL_MS) {
      const value = serverSql<{ password: string | null }[]>`select private.edge_user_password() as password`
        .then(([row]) => row?.password ?? "");
      const entry = { at: Date.now(), value };
      // A failed read is not kept: the next connection asks again.
      value.catch(() => {
        if (cached === entry) cached = undefined;
      });
      cached = entry;
    }
    return cached.value;
  };
  return createSql(config.userDbUrl, { max, prepare: config.dbPrepare, password });
}

/** The pools a deployed function uses; `userPool` for those that act for users (the configuration API). */
export function createPools(config: Config, opts: { userPool?: boolean } = {}): Pools {
  const sql = createSql(config.dbUrl, { max: config.dbPoolMax, prepare: config.dbPrepare });
  return opts.userPool ? { sql, userSql: createUserSql(config, sql) } : { sql };
}

export type PoolName = "server" | "user";

export type PoolCheck =
  | { pool: PoolName; ok: true; role: string }
  | { pool: PoolName; ok: false; code: PoolProblem; message: string };

/**
 * What stops a pool: the database is unreachable, or the login is refused (a wrong password: 28P01; a
 * role without LOGIN: 28000), or the password could not be read (the migrations that set it are missing).
 */
export type PoolProblem = "database_unavailable" | "database_login_failed" | "database_not_migrated";

const FIX: Record<PoolName, string> = {
  server: "check SUPABASE_DB_URL",
  user: "apply the migrations (npx supabase db push, or npm run db:bootstrap locally): they give edge_user " +
    "its login and password; or set USER_DB_PASSWORD / USER_DB_URL to edge_user's own",
};

/** Runs one query on each pool; never throws. */
export async function checkPools(pools: Pools): Promise<PoolCheck[]> {
  const one = async (pool: PoolName, sql: Sql): Promise<PoolCheck> => {
    try {
      const [row] = await sql<{ role: string }[]>`select current_user as role`;
      return { pool, ok: true, role: row!.role };
    } catch (err) {
      return { pool, ok: false, ...problemOf(pool, err) };
    }
  };
  const checks = [one("server", pools.sql)];
  if (pools.userSql) checks.push(one("user", pools.userSql));
  return await Promise.all(checks);
}

function problemOf(pool: PoolName, err: unknown): { code: PoolProblem; message: string } {
  const e = err as { code?: string; message?: string };
  const what = pool === "server" ? "the server pool" : "the user-request pool (edge_user)";
  if (e?.code === "28P01" || e?.code === "28000") {
    return { code: "database_login_failed", message: `${what} cannot log in: ${e.message}; ${FIX[pool]}` };
  }
  // 42883, 42P01, 3F000: private.edge_user_password() or its schema does not exist yet.
  if (e?.code === "42883" || e?.code === "42P01" || e?.code === "3F000") {
    return {
      code: "database_not_migrated",
      message: `${what} cannot read its password: ${e.message}; ${FIX[pool]}`,
    };
  }
  if (isDatabaseUnavailable(err)) {
    return {
      code: "database_unavailable",
      message: `${what} cannot reach the database: ${e?.message ?? err}`,
    };
  }
  return { code: "database_unavailable", message: `${what} failed its check: ${e?.message ?? err}` };
}

/**
 * The start-up line: which role each pool logs in as, or, as an error, which cannot and what to do. No
 * URL or password is logged.
 */
export async function logPoolCheck(name: string, pools: Pools): Promise<PoolCheck[]> {
  const checks = await checkPools(pools);
  const failed = checks.filter((c) => !c.ok);
  if (failed.length === 0) {
    const roles = Object.fromEntries(checks.map((c) => [c.pool, c.ok ? c.role : null]));
    console.log(
      JSON.stringify({ level: "info", msg: "database pools log in", function: name, pools: roles }),
    );
  }
  for (const c of failed) {
    if (c.ok) continue;
    console.error(JSON.stringify({
      level: "error",
      msg: "database pool cannot log in",
      function: name,
      pool: c.pool,
      code: c.code,
      error: c.message,
    }));
  }
  return checks;
}
