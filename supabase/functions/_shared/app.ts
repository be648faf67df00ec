// The skeleton every function app is built on: its base path (the function name, as Supabase routes
// it), JSON errors mapped in one place, a JSON 404, and a health route that checks the database.
import { Hono } from "hono";
import type { Config } from "./config.ts";
import { createSql, type Sql } from "./db.ts";
import { errorResponse, notFound, serviceUnavailable } from "./errors.ts";
import { loadConfig } from "./config.ts";

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
  app.get("/health", async (c) => {
    try {
      await deps.sql`select 1`;
    } catch {
      throw serviceUnavailable("Database unavailable");
    }
    return c.json({ status: "ok", function: name });
  });
  return app;
}

/** Dependencies of a deployed function: configuration from the environment and one pool. */
export function runtimeDeps(): AppDeps {
  const config = loadConfig();
  return {
    config,
    sql: createSql(config.dbUrl, { max: config.dbPoolMax, prepare: config.dbPrepare }),
    userSql: createSql(config.userDbUrl, { max: config.dbPoolMax, prepare: config.dbPrepare }),
  };
}
