// The server pool, the user-request pool (as `edge_user`), and the one way user-facing code touches data:
// a transaction as `authenticated` with the verified claims, so row-level security decides as for
// PostgREST. No session state, so both pools work through a transaction-mode pooler.
// @see docs/operations.md#through-the-pooler and docs/authentication.md#in-edge-functions
import postgres from "postgres";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

let guardInstalled = false;
const pools = new Set<{ markBroken(): void }>();

/** Every pool of the process starts afresh on its next use (after a database restart, say). */
export function resetPools(): void {
  for (const pool of pools) pool.markBroken();
}

/**
 * postgres.js 3.4.9 writes to a dead socket from its own timer when a connection's backend dies during
 * a transaction or on a reserved connection (porsager/postgres#1208): an uncaught TypeError that would
 * end the whole process, and that leaves the connection wedged (every later query on it times out).
 * The query that was running has already been rejected properly (CONNECTION_CLOSED, which becomes a
 * 503). So: swallow exactly that error, loudly, and replace the pools, whose next use opens fresh
 * connections. Anything else still crashes as before.
 */
function installDriverCrashGuard() {
  if (guardInstalled) return;
  guardInstalled = true;
  const fromDriver = (err: unknown) =>
    err instanceof Error && /postgres\/[\d.]+\/src\/connection\.js|nextWrite/.test(err.stack ?? "");
  const swallow = (event: Event, err: Error) => {
    event.preventDefault();
    console.error(JSON.stringify({ level: "error", code: "db_connection_lost", error: err.message }));
    resetPools();
  };
  globalThis.addEventListener("error", (event) => {
    if (event.error instanceof TypeError && fromDriver(event.error)) swallow(event, event.error);
  });
  // The same failure sometimes surfaces instead as the rejection of the driver's own internal ROLLBACK,
  // which nobody awaits: a connection error from inside the driver, never one of our queries. (EPIPE,
  // "This socket has been ended by the other party", is the same write from nextWrite after a restart.)
  globalThis.addEventListener("unhandledrejection", (event) => {
    const err = event.reason as { code?: string } & Error;
    if (fromDriver(err) && /^CONNECTION_|^ECONN|^EPIPE$/.test(err.code ?? "")) swallow(event, err);
    else if (isUnawaitedTypeFetchError(err)) swallow(event, err);
  });
}

/** The database ports the process connects to: a stray socket error names one of them. */
const databasePorts = new Set<string>();
// admin_shutdown, crash_shutdown, cannot_connect_now: the server going away or not back yet;
// too_many_connections: a new connection refused while old pools drain after a reset (found by
// tests/reliability/fault_whatsapp_apply_test.ts with 1,000 messages and ~330 killed backends).
const SERVER_GOING_AWAY = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * postgres.js 3.4.9 also fetches array types on each new connection from an async function nobody
 * awaits (connection.js: `return fetchArrayTypes()`). When the server goes away between the handshake
 * and that query (a restart, terminated backends), the query is rejected with the reconnect's socket
 * error (its stack shows only the socket, no driver frame) or with the server's shutdown error, and the
 * unhandled rejection would end the process. Found by tests/reliability/fault_pg_restart_test.ts (about
 * one run in four under load). No caller's query is affected: each has its own promise, rejected
 * properly. Recognised by the error code and, for socket errors, by naming one of our database ports.
 */
function isUnawaitedTypeFetchError(reason: unknown): reason is Error {
  if (!(reason instanceof Error)) return false;
  const err = reason as Error & { code?: unknown; port?: unknown };
  const code = String(err.code ?? "");
  if (err.name === "PostgresError") return SERVER_GOING_AWAY.has(code);
  if (!/^CONNECTION_|^ECONN|^EPIPE$|^ETIMEDOUT$|^EHOSTUNREACH$|^CONNECT_TIMEOUT$/.test(code)) return false;
  if ([...databasePorts].some((port) => String(err.port) === port || err.message.endsWith(`:${port}`))) {
    return true;
  }
  // "read ECONNRESET" names no address: accept it only when it was raised by the runtime's socket layer
  // alone (no frame of any module's code but the driver's), i.e. nobody's request was waiting for it.
  const frames = (err.stack ?? "").split("\n").filter((l) => /^\s+at /.test(l));
  return frames.length > 0 &&
    frames.every((l) => !/file:\/\//.test(l) || /postgres\/[\d.]+\/src\//.test(l));
}

export interface PoolOptions {
  max?: number;
  /**
   * Prepared statements; false through a transaction-mode pooler (Config.dbPrepare). Unset: the URL's
   * `prepare` parameter, else true.
   */
  prepare?: boolean;
  /** The password, asked for each new connection (instead of the URL's). */
  password?: () => Promise<string>;
}

export function createSql(url: string, options: PoolOptions = {}): Sql {
  installDriverCrashGuard();
  try {
    databasePorts.add(new URL(url).port || "5432");
  } catch { /* postgres.js reports a malformed URL itself */ }
  const open = () =>
    postgres(url, {
      max: options.max ?? 10,
      idle_timeout: 30,
      connect_timeout: 5,
      ...(options.prepare === undefined ? {} : { prepare: options.prepare }),
      ...(options.password ? { pass: options.password } : {}),
      // Our SQL never depends on notices; keeping them out of the logs keeps payloads out too.
      onnotice: () => {},
      // No session state beyond what a transaction-mode pooler passes on (application_name): each
      // request sets its role and claims inside its own transaction (withClaims).
      connection: { application_name: "church-integration" },
    });
  let current = open();
  let broken = false;
  const healthy = () => {
    if (broken) {
      broken = false;
      const old = current;
      current = open();
      // Queries still running on the old pool's good connections get a few seconds to finish.
      old.end({ timeout: 5 }).catch(() => {});
    }
    return current;
  };
  const entry = { markBroken: () => (broken = true) };
  pools.add(entry);
  // The pool callers hold is a stand-in that always forwards to the current postgres.js pool.
  return new Proxy(function () {} as unknown as Sql, {
    apply: (_target, _this, args) => (healthy() as unknown as (...a: unknown[]) => unknown)(...args),
    get: (_target, prop) => {
      const pool = healthy();
      if (prop === "end") {
        return (opts?: { timeout?: number }) => {
          pools.delete(entry);
          return pool.end(opts);
        };
      }
      const value = (pool as unknown as Record<PropertyKey, unknown>)[prop];
      return typeof value === "function" ? value.bind(pool) : value;
    },
  });
}

export type JwtClaims = Record<string, unknown> & { sub?: string; role?: string };

/** The roles a request's transaction may take: PostgREST's two, and the configuration API's own. */
export type RequestRole = "anon" | "authenticated" | "config_api";

/**
 * Runs `fn` in one transaction as `role` with the given claims, as PostgREST does per request. Unset:
 * `authenticated` (or `anon` for an anon token), what the Data API would use for the same token.
 */
export function withClaims<T>(
  sql: Sql,
  claims: JwtClaims,
  fn: (tx: Tx) => Promise<T>,
  role: RequestRole = claims.role === "anon" ? "anon" : "authenticated",
  headers: Record<string, string> = {},
): Promise<T> {
  return sql.begin(async (tx) => {
    // request.headers as PostgREST sets it (lower-case names); the audit log reads the client's address
    // and user agent from it (20261207170100_audit_log.sql).
    await tx`select set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
                    set_config('request.headers', ${JSON.stringify(headers)}, true),
                    set_config('role', ${role}, true)`;
    return await fn(tx);
  }) as Promise<T>;
}
