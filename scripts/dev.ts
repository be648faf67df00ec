// Local service: every function in supabase/functions/ served from one process at
// http://127.0.0.1:54321/functions/v1/<name>, each mounted from its app module exactly as its index.ts
// deploys it, and a stand-in for Supabase Auth at /auth/v1 (scripts/local-auth/). Run through
// scripts/dev.sh, which prepares the database first.
//
// The functions verify user tokens exactly as deployed ones do: SUPABASE_URL is this server's own URL,
// so they fetch the key set from /auth/v1/.well-known/jwks.json; no shared secret is trusted.
//
// Outbound webhooks are delivered from this process too (there is no pg_net locally): a delivery
// engine wakes on the outbox triggers' NOTIFY and on a short poll, so a local delivery arrives within
// a second. WEBHOOKS_DEV_DISPATCH=false turns that off.
//
// SIGTERM or SIGINT stops it as the Edge Runtime's shutdown notice (`beforeunload`) stops a deployed
// function: runs stop claiming, give back what they claimed and had not sent, record what they sent;
// then the pools close. It exits within 5 s whatever happens (docs/reliability/hosted.md#a-stop).
import { type AppDeps, runtimeDeps } from "../supabase/functions/_shared/app.ts";
import { checkPools } from "../supabase/functions/_shared/pools.ts";
import { startLocalDispatcher } from "../supabase/functions/webhook-dispatcher/local_loop.ts";
import { type AuthService, createAuthService } from "./local-auth/service.ts";
import { localAnonKey, localSigningKey } from "./local-auth/keys.ts";
import { loadAuthSettings } from "./local-auth/config.ts";
import { createAuthMailer } from "./local-auth/mailer.ts";
import { withLocalCors } from "./local-cors.ts";
import { startWebDev } from "./dev-web.ts";
import { startMailCatcher } from "./dev-mail.ts";
import { startLocalMailSender } from "../supabase/functions/mail-sender/local_loop.ts";
import type { Sql } from "../supabase/functions/_shared/db.ts";

type Fetch = (req: Request) => Response | Promise<Response>;
interface FunctionApp {
  createApp(deps: AppDeps, options?: { shutdown?: AbortSignal }): { fetch: Fetch };
}

const functionsDir = new URL("../supabase/functions/", import.meta.url);

/** Every function's app; `shutdown` is what `beforeunload` aborts in a deployed index.ts. */
export async function loadFunctions(deps: AppDeps, shutdown?: AbortSignal): Promise<Map<string, Fetch>> {
  const apps = new Map<string, Fetch>();
  const names: string[] = [];
  for await (const entry of Deno.readDir(functionsDir)) {
    if (entry.isDirectory && !entry.name.startsWith("_") && !entry.name.startsWith(".")) {
      names.push(entry.name);
    }
  }
  for (const name of names.sort()) {
    const mod = (await import(new URL(`${name}/app.ts`, functionsDir).href)) as FunctionApp;
    const app = mod.createApp(deps, { shutdown });
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

/**
 * The whole local API: /auth/v1/* to the token service (told the client's address, for its attempt
 * limits), /functions/v1/* to the functions (told it in x-forwarded-for), CORS for both.
 */
export function gateway(apps: Map<string, Fetch>, auth: AuthService) {
  const functions = router(apps);
  return withLocalCors((req: Request, info?: Deno.ServeHandlerInfo<Deno.NetAddr>) => {
    const { pathname } = new URL(req.url);
    if (pathname === "/auth/v1" || pathname.startsWith("/auth/v1/")) {
      return auth(req, pathname.slice("/auth/v1".length), info?.remoteAddr.hostname);
    }
    // As the platform's gateway does: the functions learn the client's address from x-forwarded-for
    // (the audit log records it).
    if (info?.remoteAddr.hostname && !req.headers.has("x-forwarded-for")) {
      const headers = new Headers(req.headers);
      headers.set("x-forwarded-for", info.remoteAddr.hostname);
      return functions(new Request(req, { headers }));
    }
    return functions(req);
  });
}

const DEMO_USERS = ["admin@firstchurch.example", "staff@firstchurch.example"];

/** The seeded demo sign-ins that exist in this database (none when the database is down or unseeded). */
async function demoSignIns(sql: Sql): Promise<string[]> {
  const query = sql<{ email: string }[]>`select email from auth.users where email in ${
    sql(DEMO_USERS)
  } order by email`
    .then((rows) => rows.map((r) => r.email))
    .catch(() => [] as string[]);
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), 2000));
  return await Promise.race([query, timeout]);
}

if (import.meta.main) {
  const port = Number(Deno.env.get("PORT") ?? 54321);
  const [anonKey, signingKey] = await Promise.all([localAnonKey(), localSigningKey()]);
  // Requests that arrive while the functions load wait for them.
  const handler = Promise.withResolvers<ReturnType<typeof gateway>>();
  const controller = new AbortController();
  let listening!: (port: number) => void;
  const bound = new Promise<number>((resolve) => (listening = resolve));
  let server: Deno.HttpServer;
  // Requests being answered: a run a request started (pg_net's, `wait: true`) still writes through the
  // pools after the server stops listening; they close only once these are answered.
  const answering = new Set<Promise<unknown>>();
  try {
    server = Deno.serve(
      { hostname: "127.0.0.1", port, signal: controller.signal, onListen: ({ port }) => listening(port) },
      (req, info) => {
        const answer = handler.promise.then((h) => h(req, info));
        const tracked = answer.catch(() => {}).finally(() => answering.delete(tracked));
        answering.add(tracked);
        return answer;
      },
    );
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      console.error(
        `dev: port ${port} is already in use (another dev server?); stop it or choose another: PORT=54331 npm run dev`,
      );
      Deno.exit(1);
    }
    throw err;
  }
  const url = `http://127.0.0.1:${await bound}`;
  for (const name of ["JWT_SECRET", "SUPABASE_JWKS"]) {
    if (Deno.env.get(name)) {
      console.log(`ignoring ${name}: the local functions trust only the local token service's JWKS`);
      Deno.env.delete(name);
    }
  }
  Deno.env.set("SUPABASE_URL", url);
  // Replay through the configuration API asks the receiver functions over HTTP ({SUPABASE_URL}/functions/v1)
  // with the replay secret, as deployed: here they are this process.
  if (!Deno.env.get("INBOUND_REPLAY_SECRET")) {
    Deno.env.set("INBOUND_REPLAY_SECRET", `local-replay-${crypto.randomUUID()}`);
  }
  // Mail goes to a local catcher with a web inbox (unless mail is configured otherwise), and its links
  // point at the settings UI this server starts.
  const mailCatcher = await startMailCatcher();
  if (mailCatcher) Deno.env.set("SMTP_URL", mailCatcher.smtpUrl);
  if (!Deno.env.get("SITE_URL")) {
    Deno.env.set("SITE_URL", `http://127.0.0.1:${Deno.env.get("WEB_PORT") ?? 54323}`);
  }
  // Read after SITE_URL is known: the local Auth's e-mail links lead to the settings UI, and its
  // confirmation and recovery mails go to the same catcher (or SMTP server) as every other mail.
  const settings = await loadAuthSettings();
  const authMailer = await createAuthMailer(settings, {
    smtpUrl: Deno.env.get("SMTP_URL"),
    from: Deno.env.get("MAIL_FROM"),
  });
  const deps = runtimeDeps({ userPool: true });
  // Both pools must log in before anything is served: a user pool that cannot (edge_user's password,
  // say) would otherwise answer every configuration API call with an error after saying "ready". A
  // database that is not up yet is said too, but served through: the pools reconnect when it is.
  const failed = (await checkPools(deps)).filter((c) => !c.ok);
  for (const c of failed) if (!c.ok) console.error(`dev: ${c.message}`);
  if (failed.some((c) => !c.ok && c.code !== "database_unavailable")) {
    controller.abort();
    await Promise.all([deps.sql.end({ timeout: 1 }), deps.userSql?.end({ timeout: 1 })]);
    Deno.exit(1);
  }
  // Aborted on SIGTERM/SIGINT, as `beforeunload` aborts it in each deployed index.ts.
  const stopping = new AbortController();
  const apps = await loadFunctions(deps, stopping.signal);
  const auth = createAuthService({
    sql: deps.sql,
    issuer: `${url}/auth/v1`,
    anonKey,
    signingKey,
    settings,
    mailer: authMailer,
  });
  handler.resolve(gateway(apps, auth));
  for (const name of apps.keys()) console.log(`serving ${url}/functions/v1/${name}`);
  const dispatcher = Deno.env.get("WEBHOOKS_DEV_DISPATCH") === "false" ? undefined : startLocalDispatcher(
    deps.sql,
    { allowPrivateTargets: deps.config.allowPrivateTargets },
  );
  if (dispatcher) console.log("delivering outbound webhooks locally (on NOTIFY and every 500 ms)");
  const mailSender = deps.config.mail ? startLocalMailSender(deps.sql, deps.config.mail) : undefined;
  if (mailSender) {
    console.log(`sending mail locally over ${deps.config.mail!.transport} (on NOTIFY and every 2 s)`);
  }
  const demo = await demoSignIns(deps.sql);
  console.log("");
  console.log(`API URL:   ${url}`);
  console.log(
    `Auth URL:  ${url}/auth/v1 (local stand-in for Supabase Auth; JWKS at /auth/v1/.well-known/jwks.json)`,
  );
  console.log(`anon key:  ${anonKey}`);
  if (demo.length) {
    console.log(`demo sign-ins (supabase/seed.sql), password demo-password: ${demo.join(", ")}`);
    console.log(
      `  curl -s -X POST '${url}/auth/v1/token?grant_type=password' -H 'apikey: ${anonKey}' ` +
        `-H 'content-type: application/json' -d '{"email":"${demo[0]}","password":"demo-password"}'`,
    );
  }
  // The settings UI (web/) on its own port, against this stack (needs --allow-run, which dev.sh gives).
  const web = await startWebDev(url, anonKey);
  if (web) console.log(`Settings UI: ${web.url}  (web/, Vite; sign in with a demo account)`);
  if (mailCatcher) {
    console.log(
      `Mail:        ${mailCatcher.url}  (MailDev inbox: invitations, endpoint alerts, sign-up and password mails)`,
    );
  }
  console.log(`dev server ready on ${url} (Ctrl-C stops it)`);

  const shutdown = () => {
    if (stopping.signal.aborted) return;
    console.log("shutting down");
    // Runs started by requests (a pg_net call, `wait: true`) stop first, so their requests end at once
    // and are answered (shutdown() lets requests under way finish; the abort signal would cut them).
    stopping.abort();
    void server.shutdown();
    // Never longer than 5 s: whatever is not written by then is left to its lease, as on a crash.
    Deno.unrefTimer(setTimeout(() => {
      console.error("dev: still stopping after 4.5 s; exiting now");
      Deno.exit(1);
    }, 4500));
  };
  Deno.addSignalListener("SIGINT", shutdown);
  Deno.addSignalListener("SIGTERM", shutdown);
  await server.finished;
  await Promise.all([...answering]);
  // The local loops stop as the runs did (what was sent recorded, what was not given back); the settings
  // UI and the mail catcher with them; the pools last.
  await Promise.all([dispatcher?.stop(), mailSender?.stop(), web?.stop(), mailCatcher?.stop()]);
  authMailer.close();
  await Promise.all([deps.sql.end({ timeout: 2 }), deps.userSql?.end({ timeout: 2 })]);
  console.log("stopped");
  Deno.exit(0);
}
