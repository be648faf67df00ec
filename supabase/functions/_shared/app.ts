// The skeleton every function app is built on: its base path (the function name, as Supabase routes
// it), JSON errors mapped in one place, a JSON 404, and a health route that checks each pool can log in.
import { Hono } from "hono";
import type { Config } from "./config.ts";
import type { Sql } from "./db.ts";
import { AppError, errorResponse, notFound } from "./errors.ts";
import { loadConfig } from "./config.ts";
import { checkPools, createPools } from "./pools.ts";
import { setupWarnings } from "./warnings.ts";

export interface AppDeps {
  /** Server-side pool (the function's own database role). */
  sql: Sql;
  /**
   * Pool for queries made on behalf of a user or API key, connected as `edge_user` (Config.userDbUrl);
   * defaults to `sql`.
   */
  userSql?: Sql;
  config: Config;
}

/** `root`: a Hono subclass to build on (the configuration API's OpenAPIHono); a plain Hono by default. */
export function newApp(name: string, deps: AppDeps, root = new Hono()): Hono {
  const app = root.basePath(`/${name}`);
  app.onError((err, c) => errorResponse(c, err));
  app.notFound((c) => errorResponse(c, notFound("not_found", "No such route")));
  // 200 only when every pool the function uses can log in and query; else 503 naming the pool, why, and
  // what to do (the same words the function logged at start). A 200 lists what is wrong with the setup
  // though the function works (Auth mail on a hosted project), so a check that reads the body sees it.
  app.get("/health", async (c) => {
    for (const check of await checkPools(deps)) {
      if (!check.ok) {
        const code = check.code === "database_unavailable" ? "service_unavailable" : check.code;
        throw new AppError(503, code, check.message, { pool: check.pool });
      }
    }
    const warnings = setupWarnings(deps.config);
    return c.json({ status: "ok", function: name, ...(warnings.length > 0 ? { warnings } : {}) });
  });
  return app;
}

/**
 * Dependencies of a deployed function: configuration from the environment and its pools (`userPool` for
 * the configuration API, which acts for users).
 */
export function runtimeDeps(opts: { userPool?: boolean } = {}): AppDeps {
  const config = loadConfig();
  return { config, ...createPools(config, opts) };
}
