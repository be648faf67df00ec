// Local service: every function in supabase/functions/ served from one process at
// http://127.0.0.1:54321/functions/v1/<name>, each mounted from its app module exactly as its index.ts
// deploys it. Run through scripts/dev.sh, which prepares the database first.
//
// Outbound webhooks are delivered from this process too (there is no pg_net locally): a delivery
// engine wakes on the outbox triggers' NOTIFY and on a short poll, so a local delivery arrives within
// a second. WEBHOOKS_DEV_DISPATCH=false turns that off.
import { type AppDeps, runtimeDeps } from "../supabase/functions/_shared/app.ts";
import { startLocalDispatcher } from "../supabase/functions/webhook-dispatcher/local_loop.ts";
import { devJwtSecret } from "./dev-secret.ts";

type Fetch = (req: Request) => Response | Promise<Response>;
interface FunctionApp {
  createApp(deps: AppDeps): { fetch: Fetch };
}

const functionsDir = new URL("../supabase/functions/", import.meta.url);

export async function loadFunctions(deps: AppDeps): Promise<Map<string, Fetch>> {
  const apps = new Map<string, Fetch>();
  const names: string[] = [];
  for await (const entry of Deno.readDir(functionsDir)) {
    if (entry.isDirectory && !entry.name.startsWith("_") && !entry.name.startsWith(".")) {
      names.push(entry.name);
    }
  }
  for (const name of names.sort()) {
    const mod = (await import(new URL(`${name}/app.ts`, functionsDir).href)) as FunctionApp;
    const app = mod.createApp(deps);
    apps.set(name, (req) => app.fetch(req));
  }
  return apps;
}

/** Routes /functions/v1/<name>/... to that function with the path it sees when deployed: /<name>/... */
export function router(apps: Map<string, Fetch>): Fetch {
  return (req) => {
    const url = new URL(req.url);
    const match = url.pathname.match(/^\/functions\/v1\/([^/]+)(\/.*)?$/);
    const fetchFn = match ? apps.get(match[1]!) : undefined;
    if (!match || !fetchFn) {
      return Response.json(
        { error: { code: "function_not_found", message: "No such function", functions: [...apps.keys()] } },
        { status: 404 },
      );
    }
    url.pathname = `/${match[1]}${match[2] ?? ""}`;
    return fetchFn(new Request(url, req));
  };
}

if (import.meta.main) {
  // Supabase Auth does not run locally: tokens from `npm run dev:token` are signed with this secret.
  if (!Deno.env.get("JWT_SECRET") && !Deno.env.get("SUPABASE_JWKS")) {
    Deno.env.set("JWT_SECRET", await devJwtSecret());
  }
  const deps = runtimeDeps();
  const apps = await loadFunctions(deps);
  const port = Number(Deno.env.get("PORT") ?? 54321);
  const controller = new AbortController();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port,
      signal: controller.signal,
      onListen: ({ hostname, port }) => {
        for (const name of apps.keys()) {
          console.log(`serving http://${hostname}:${port}/functions/v1/${name}`);
        }
      },
    },
    router(apps),
  );
  const dispatcher = Deno.env.get("WEBHOOKS_DEV_DISPATCH") === "false" ? undefined : startLocalDispatcher(
    deps.sql,
    { allowPrivateTargets: deps.config.allowPrivateTargets },
  );
  if (dispatcher) console.log("delivering outbound webhooks locally (on NOTIFY and every 500 ms)");
  const shutdown = () => {
    console.log("shutting down");
    controller.abort();
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
  await server.finished;
  await dispatcher?.stop();
  await Promise.all([deps.sql.end({ timeout: 5 }), deps.userSql?.end({ timeout: 5 })]);
}
