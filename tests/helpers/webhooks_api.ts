// The configuration API served on loopback the way it is deployed: a server pool and a user pool
// (sessions start as anon), user tokens verified with the test key.
import { createApp } from "../../supabase/functions/webhooks/app.ts";
import { type AppDeps } from "../../supabase/functions/_shared/app.ts";
import { createSql, createUserSql } from "../../supabase/functions/_shared/db.ts";
import { serveFunction } from "./server.ts";
import { testConfig } from "./tokens.ts";

export async function startWebhooksApi(env: Record<string, string> = {}) {
  const config = await testConfig(env);
  const deps: AppDeps = {
    config,
    sql: createSql(config.dbUrl, { max: 4 }),
    userSql: createUserSql(config.dbUrl, { max: 4 }),
  };
  const server = await serveFunction("webhooks", createApp(deps));
  return {
    base: server.base,
    deps,
    close: async () => {
      await server.close();
      await Promise.all([deps.sql.end(), deps.userSql!.end()]);
    },
  };
}
