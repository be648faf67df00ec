// The settings UI as a person meets it:
//   1. the production bundle's JavaScript and CSS, gzipped (goal: under 100 kB for the whole app);
//   2. Webhook Logs with 10,000 deliveries in the organization: time from navigation start until the
//      first page of deliveries is on screen, in Chromium (goal: under 1 s). Each load is a fresh
//      navigation of the signed-in page: it loads the app, restores the session, asks /me, the
//      endpoints, the catalogue and the first page of deliveries, and renders them.
// Run: bash scripts/bench/run.sh settings_web   (BENCH_DELIVERIES, BENCH_REPEATS to change the sizes)
import { gzipSync } from "node:zlib";
import { buildWeb, launchBrowser, serveStatic } from "../../web/tests/helpers/browser.ts";
import { machine, summarize } from "./stats.ts";

// The callback given to page.evaluate runs in the page, which has a DOM (Deno's types do not).
declare const document: {
  querySelectorAll(selector: string): { length: number };
};

const dbUrl = Deno.env.get("BENCH_DATABASE_URL");
if (!dbUrl) {
  throw new Error(
    "BENCH_DATABASE_URL is not set: run through scripts/bench/run.sh settings_web",
  );
}
Deno.env.set("TEST_DATABASE_URL", dbUrl);
const { closeSql, sql } = await import("../../tests/helpers/db.ts");
const { startDevStack, upsertDevUser } = await import(
  "../../tests/helpers/dev_stack.ts"
);

const DELIVERIES = Number(Deno.env.get("BENCH_DELIVERIES") ?? 10_000);
const REPEATS = Number(Deno.env.get("BENCH_REPEATS") ?? 15);
const PASSWORD = "bench-password";

// 1. Bundle size --------------------------------------------------------------------------------------
const dist = await buildWeb("http://127.0.0.1:54321", "bench");
let raw = 0;
let gz = 0;
let cssGz = 0;
for await (const f of Deno.readDir(`${dist}/assets`)) {
  if (f.name.endsWith(".css")) {
    cssGz += gzipSync(await Deno.readFile(`${dist}/assets/${f.name}`), { level: 9 }).length;
  }
  if (!f.name.endsWith(".js")) continue;
  const bytes = await Deno.readFile(`${dist}/assets/${f.name}`);
  raw += bytes.length;
  gz += gzipSync(bytes, { level: 9 }).length;
}
await Deno.remove(dist, { recursive: true });

// 2. Webhook Logs with many deliveries ----------------------------------------------------------------
async function seed(org: string, endpointUrl: string) {
  const [e] = await sql()<{ id: string }[]>`
    insert into public.webhook_endpoints (organization_id, url, events)
    values (${org}, ${endpointUrl}, '{member.created,donation.recorded}') returning id`;
  // Newest first is what the page shows; spread over the last days, with failures among them.
  await sql()`
    with ev as (
      insert into public.webhook_events (organization_id, type, payload, created_at)
      select ${org}, case when g % 3 = 0 then 'donation.recorded' else 'member.created' end,
             jsonb_build_object('id', gen_random_uuid(), 'type', 'member.created', 'organization_id', ${org}::uuid,
                                'data', jsonb_build_object('row', jsonb_build_object('n', g, 'first_name', 'Member ' || g))),
             now() - make_interval(secs => g * 20)
      from generate_series(1, ${DELIVERIES}) g
      returning id, created_at)
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, attempt_count,
      next_attempt_at, first_attempt_at, last_attempt_at, last_response_status, last_error, delivered_at, created_at)
    select ${org}, ev.id, ${e!.id},
           case when random() < 0.08 then 'permanently_failed' else 'delivered' end, 1,
           null, ev.created_at, ev.created_at, 200, null, ev.created_at, ev.created_at
    from ev`;
  await sql()`update public.webhook_deliveries set last_response_status = 500, last_error = 'HTTP 500',
              delivered_at = null where organization_id = ${org} and status = 'permanently_failed'`;
}

const email = `bench-${crypto.randomUUID().slice(0, 8)}@example.org`;
const mine = await upsertDevUser({
  email,
  password: PASSWORD,
  organization: "Bench Church",
  role: "admin",
});
const other = await upsertDevUser({
  email: `other-${email}`,
  password: PASSWORD,
  organization: "Other Church",
  role: "admin",
});
await seed(mine.organizationId!, "https://hooks.example.org/bench");
await seed(other.organizationId!, "https://hooks.example.org/other"); // the same amount elsewhere
await sql()`analyze`;

const stack = await startDevStack({ env: { WEBHOOKS_DEV_DISPATCH: "false" } });
const built = await buildWeb(stack.url, stack.anonKey);
const site = serveStatic(built);
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
const logs = `${site.url}/settings/integrations/webhook-logs`;

await page.goto(`${site.url}/auth`);
await page.getByLabel("E-mail").fill(email);
await page.getByLabel("Password").fill(PASSWORD);
await page.getByRole("button", { name: "Sign in" }).click();
await page.waitForURL(/webhooks$/);

const shown: number[] = [];
for (let i = 0; i < REPEATS + 2; i++) {
  await page.goto(logs);
  const handle = await page.waitForFunction(
    () => document.querySelectorAll("table.logs tbody tr").length >= 50 ? performance.now() : false,
    null,
    { polling: "raf", timeout: 30_000 },
  );
  const ms = (await handle.jsonValue()) as number;
  if (i >= 2) shown.push(ms); // two warm-up loads
}

// The API alone, side by side: the first page of deliveries as the page asks for it.
const token = await page.evaluate(() => {
  const key = Object.keys(localStorage).find((k) => k.includes("session"))!;
  return JSON.parse(localStorage.getItem(key)!).access_token as string;
});
const api: number[] = [];
for (let i = 0; i < REPEATS + 2; i++) {
  const t0 = performance.now();
  const res = await fetch(
    `${stack.url}/functions/v1/webhooks/deliveries?limit=50`,
    {
      headers: { authorization: `Bearer ${token}`, apikey: stack.anonKey },
    },
  );
  const body = await res.json();
  if (res.status !== 200 || body.data.length !== 50) {
    throw new Error(`deliveries: ${res.status}`);
  }
  if (i >= 2) api.push(performance.now() - t0);
}

await browser.close();
await site.close();
await stack.stop();
await Deno.remove(built, { recursive: true });
await closeSql();

const s = summarize(shown);
const a = summarize(api);
const f = (n: number) => n.toFixed(0);
console.log(`machine: ${machine()}`);
console.log(
  `bundle: ${(raw / 1024).toFixed(1)} kB JavaScript, ${(gz / 1024).toFixed(1)} kB gzipped, CSS ${
    (cssGz / 1024).toFixed(1)
  } kB gzipped (goal < 100 kB for the whole app)`,
);
console.log(
  `Webhook Logs, ${DELIVERIES} deliveries in the organization (+${DELIVERIES} in another), ${REPEATS} loads:`,
);
console.log(`| measure | p50 ms | p90 ms | max ms |`);
console.log(`|---|---|---|---|`);
console.log(
  `| navigation start -> first 50 deliveries on screen | ${f(s.p50)} | ${f(s.p90)} | ${f(s.max)} |`,
);
console.log(
  `| GET /deliveries?limit=50 alone (HTTP, loopback) | ${f(a.p50)} | ${f(a.p90)} | ${f(a.max)} |`,
);
