// The production path with the real pg_net: pg_cron (and the wake-up trigger, and capped runs asking for
// the next) -> pg_net -> webhook-dispatcher served on loopback, answering 202 and running in the
// background as EdgeRuntime.waitUntil would. pg_net sends a batch of requests and starts nothing new until
// every request of the batch has finished, inside one transaction; this measures that no transaction
// stays open for more than a few seconds while 20,000 deliveries go out, and that a delivery made while
// no run is going out is sent within 5 s.
//
// Needs pg_net installed and preloaded (shared_preload_libraries=pg_cron,pg_net); skipped, visibly, where
// it is not (here and in CI). Vault is played by a table with its view's name if supabase_vault is absent.
// How it was run: docs/reliability/suites.md#hosted-dispatch-with-pg_net-hosted_dispatch_pgnet_testts
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { serveFunction } from "./helpers/server.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createApp } from "../supabase/functions/webhook-dispatcher/app.ts";

const [probe] = await sql()<{ ready: boolean }[]>`
  select exists (select 1 from pg_available_extensions where name = 'pg_net')
     and current_setting('shared_preload_libraries') like '%pg_net%' as ready`;
const pgNet = probe!.ready;
if (!pgNet) {
  console.log("SKIP hosted_dispatch_pgnet_test: pg_net is not installed and preloaded in this cluster");
}
const TOTAL = Number(Deno.env.get("PGNET_DELIVERIES") ?? 20_000);
const ENDPOINTS = 10;

Deno.test({
  name:
    `pg_net drives the dispatcher: no transaction open > 5 s for ${TOTAL} deliveries; a lone delivery out in < 5 s`,
  ignore: !pgNet,
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const db = sql();
    await db`create extension if not exists pg_net`;
    const ownVault =
      (await db`select 1 from pg_available_extensions where name = 'supabase_vault'`).length === 0;
    if (ownVault) {
      await db`create schema if not exists vault`;
      await db`create table if not exists vault.decrypted_secrets (name text, decrypted_secret text)`;
    } else {
      await db`create extension if not exists supabase_vault cascade`;
    }
    const secret = `dispatch-${crypto.randomUUID()}`;
    let running = 0;
    let runs = 0;
    const pending = new Set<Promise<unknown>>();
    const app = createApp({
      config: loadConfig({
        SUPABASE_DB_URL: testDbUrl(),
        WEBHOOK_DISPATCH_SECRET: secret,
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
      }),
      sql: db,
    }, {
      log: () => {},
      // EdgeRuntime.waitUntil: the promise runs on; the worker is kept until it settles.
      waitUntil: (p) => {
        running++;
        runs++;
        const tracked = p.finally(() => {
          running--;
          pending.delete(tracked);
        });
        pending.add(tracked);
      },
    });
    // What started each run: the cron job (no stop_when_idle), a wake-up (idle_grace_ms) or a continuation.
    const started: { at: number; kind: string }[] = [];
    const fn = await serveFunction("webhook-dispatcher", {
      fetch: async (req: Request) => {
        const body = await req.clone().json().catch(() => ({}));
        // A continuation waits 10 s for work its predecessor still holds the caps of; a wake-up 3 s.
        const kind = !body.stop_when_idle ? "cron" : body.idle_grace_ms >= 10_000 ? "continue" : "wake";
        started.push({ at: Date.now(), kind });
        return await app.fetch(req);
      },
    });
    const kinds = (since: number) =>
      JSON.stringify(
        started.filter((s) => s.at >= since).reduce<Record<string, number>>((acc, s) => {
          acc[s.kind] = (acc[s.kind] ?? 0) + 1;
          return acc;
        }, {}),
      );
    const projectUrl = fn.base.replace(/\/functions\/v1\/webhook-dispatcher$/, "");
    if (ownVault) {
      await db`insert into vault.decrypted_secrets values ('project_url', ${projectUrl}),
                                                     ('webhook_dispatch_secret', ${secret})`;
    } else {
      await db`select vault.create_secret(${projectUrl}, 'project_url')`;
      await db`select vault.create_secret(${secret}, 'webhook_dispatch_secret')`;
    }
    const seen = new Map<string, number>();
    const receiver = await startReceiver((req) => {
      // One event goes to every endpoint under the same webhook-id: a delivery is (path, id).
      const id = `${req.path} ${req.headers.get("webhook-id")}`;
      seen.set(id, (seen.get(id) ?? 0) + 1);
      return new Response("ok");
    });
    const tenant = await createTenant();
    const endpoints = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      endpoints.push(
        await createEndpoint(tenant.organizationId, `${receiver.url}/e${i}`, ["attendance.marked"]),
      );
    }
    const [member] = await db<{ id: string }[]>`
      insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x') returning id`;
    try {
      // 1. A delivery made while no run is going: out within 5 s (the wake-up trigger). The cron job is
      //    off for this part, so nothing else can have sent it.
      await db`select cron.unschedule('webhook-dispatch')`;
      while (running > 0) await new Promise((r) => setTimeout(r, 100));
      await db`update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher'`;
      const before = receiver.requests.length;
      const t0 = Date.now();
      await db`insert into public.attendance (organization_id, member_id) values (${tenant.organizationId}, ${
        member!.id
      })`;
      await receiver.waitFor(before + ENDPOINTS, 5000);
      const lone = Date.now() - t0;
      console.log(
        `lone delivery (to ${ENDPOINTS} endpoints) received ${lone} ms after its commit, runs: ${runs}`,
      );

      // 2. New deliveries wake the dispatcher (trigger), capped runs ask for the next (pg_net each time),
      //    cron ticks add runs; 3. the same with the wake-up trigger off: the cron job alone starts it.
      await db`select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()')`;
      let expected = ENDPOINTS;
      for (const mode of ["woken", "cron only"] as const) {
        if (mode === "cron only") {
          // No run may be going when the backlog arrives: the next cron tick (up to a minute) starts it.
          await db`alter table public.webhook_deliveries disable trigger webhook_deliveries_wake_dispatcher`;
          await db`select cron.unschedule('webhook-dispatch')`;
          while (running > 0) await new Promise((r) => setTimeout(r, 100));
          await db`select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()')`;
        }
        const runsBefore = runs;
        const per = Math.ceil(TOTAL / ENDPOINTS);
        const start = Date.now();
        await db`insert into public.attendance (organization_id, member_id)
                 select ${tenant.organizationId}, ${member!.id} from generate_series(1, ${per})`;
        const target = (expected += ENDPOINTS * per);
        let maxXact = 0;
        let maxNetXact = 0;
        let maxXminAge = 0;
        let firstAt = 0;
        const monitor = sql();
        while (seen.size < target && Date.now() - start < 600_000) {
          const [s] = await monitor<{ xact: number | null; net: number | null; xmin: number | null }[]>`
            select max(extract(epoch from clock_timestamp() - xact_start))::float8 as xact,
                   max(extract(epoch from clock_timestamp() - xact_start))
                     filter (where backend_type ilike '%pg_net%')::float8 as net,
                   max(age(backend_xmin))::float8 as xmin
            from pg_stat_activity where pid <> pg_backend_pid() and xact_start is not null`;
          maxXact = Math.max(maxXact, s!.xact ?? 0);
          maxNetXact = Math.max(maxNetXact, s!.net ?? 0);
          maxXminAge = Math.max(maxXminAge, s!.xmin ?? 0);
          if (!firstAt && seen.size > expected - ENDPOINTS * per) firstAt = Date.now();
          await new Promise((r) => setTimeout(r, 100));
        }
        const took = Date.now() - start;
        const [counts] = await db<{ delivered: number; requests: number; non2xx: number }[]>`
          select count(*) filter (where d.status = 'delivered')::int as delivered,
                 (select count(*)::int from net._http_response) as requests,
                 (select count(*)::int from net._http_response where status_code is distinct from 202) as non2xx
          from public.webhook_deliveries d where d.organization_id = ${tenant.organizationId}`;
        const dupes = [...seen.values()].filter((n) => n > 1).length;
        console.log(
          `${mode}: ${ENDPOINTS * per} deliveries; first out ${
            firstAt - start
          } ms after the insert, all in ${took} ms; ` +
            `longest open transaction ${maxXact.toFixed(2)} s (pg_net worker ${maxNetXact.toFixed(2)} s), ` +
            `oldest backend_xmin age ${maxXminAge}; dispatcher runs ${runs - runsBefore} ${kinds(start)}, ` +
            `the first ${
              (started.find((x) => x.at >= start)?.at ?? start) - start
            } ms after the insert began; ` +
            `pg_net responses so far ${counts!.requests} (${counts!.non2xx} not 202); duplicates ${dupes}`,
        );
        assertEquals(seen.size, target, "every delivery arrived");
        assertEquals(counts!.delivered, target, "and is marked delivered");
        assert(maxXact < 5, `a transaction stayed open ${maxXact.toFixed(2)} s`);
        assertEquals(counts!.non2xx, 0, "every pg_net request answered 202");
        assertEquals(dupes, 0, "nothing sent twice");
      }
      const workers = await db<{ backend_type: string }[]>`
        select distinct backend_type from pg_stat_activity where backend_type ilike '%pg_net%'`;
      assert(workers.length > 0, "the pg_net worker is visible to the sampler");
    } finally {
      await db`alter table public.webhook_deliveries enable trigger webhook_deliveries_wake_dispatcher`;
      await retireEndpoints(...endpoints.map((e) => e.id));
      await Promise.allSettled([...pending]);
      await db`select cron.schedule('webhook-dispatch', '* * * * *', 'select private.webhook_invoke_dispatcher()')`;
      if (ownVault) await db`drop schema vault cascade`;
      await db`drop extension pg_net`;
      await Promise.all([fn.close(), receiver.close()]);
    }
  },
});

Deno.test("cleanup", async () => {
  await closeSql();
});
