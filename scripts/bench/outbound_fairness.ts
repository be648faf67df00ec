// Fairness across organizations: one organization has 100,000 deliveries due over 20 endpoints that
// answer in 2 s; meanwhile another organization creates one member at a time. How long does that lone
// delivery take from its commit to its receiver? Goal: p99 of 20 under 2 s.
//
// The dispatcher runs alone in its own process as the dev server runs it (scripts/bench/dispatcher_child.ts,
// woken by NOTIFY); the receivers run here. Modes, side by side in one run (BENCH_MODES, comma-separated):
//   cap     the dispatcher's defaults (per-organization cap, organizations in turn)
//   nocap   the per-organization cap turned off (organizations still take turns within a claim)
//   before  the same defaults, named for a run from a checkout of the code before the cap existed
// BENCH_DUE (default 100000), BENCH_SAMPLES (20), BENCH_SAMPLE_TIMEOUT_MS (30000), BENCH_HOLD_MS (2000).
// Run it through scripts/bench/outbound_fairness.sh (a throwaway database).
import { createServer } from "node:http";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("BENCH_DATABASE_URL is not set; run scripts/bench/outbound_fairness.sh");
const MODES = (Deno.env.get("BENCH_MODES") ?? "cap,nocap").split(",");
const DUE = Number(Deno.env.get("BENCH_DUE") ?? 100_000);
const SAMPLES = Number(Deno.env.get("BENCH_SAMPLES") ?? 20);
const SAMPLE_TIMEOUT_MS = Number(Deno.env.get("BENCH_SAMPLE_TIMEOUT_MS") ?? 30_000);
const HOLD_MS = Number(Deno.env.get("BENCH_HOLD_MS") ?? 2000);
const HEAVY_ENDPOINTS = 20;
const sql = createSql(url, { max: 4 });
const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(", ");

// Receivers: 20 slow ones for the heavy organization (each its own port), one quick one for the light.
let heavyActive = 0;
let heavyMaxActive = 0;
let heavyReceived = 0;
const arrivals = new Map<string, number>();
async function listen(handler: (body: string) => Promise<void> | void): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", async () => {
      await handler(new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c]))));
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
}
const heavyUrls: string[] = [];
for (let i = 0; i < HEAVY_ENDPOINTS; i++) {
  heavyUrls.push(
    await listen(async () => {
      heavyReceived++;
      heavyActive++;
      heavyMaxActive = Math.max(heavyMaxActive, heavyActive);
      await new Promise((r) => setTimeout(r, HOLD_MS));
      heavyActive--;
    }),
  );
}
const lightUrl = await listen((body) => {
  const tag = /"last_name": "([^"]*)"/.exec(body)?.[1];
  if (tag) arrivals.set(tag, Date.now());
});

const [heavy] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('heavy') returning id`;
const [light] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('light') returning id`;
const heavyIds = (await sql<{ id: string }[]>`
  insert into public.webhook_endpoints (organization_id, url, events)
  select ${heavy!.id}, u, array['member.created'] from unnest(${heavyUrls}::text[]) u returning id`).map((
  r,
) => r.id);
await sql`insert into public.webhook_endpoints (organization_id, url, events)
          values (${light!.id}, ${lightUrl}, array['member.created'])`;

/** The heavy organization's backlog, afresh: DUE deliveries over its 20 endpoints, all due now. */
async function heavyBacklog(): Promise<void> {
  await sql`delete from public.webhook_events where organization_id in (${heavy!.id}, ${light!.id})`;
  await sql`delete from private.webhook_leases`;
  await sql`
    with e as (
      insert into public.webhook_events (organization_id, type, payload)
      select ${heavy!.id}, 'member.created', jsonb_build_object('n', g) from generate_series(1, ${DUE}::int) g
      returning id
    ), numbered as (select id, row_number() over () as i from e)
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id)
    select ${heavy!.id}, numbered.id, (${heavyIds}::uuid[])[1 + (numbered.i % ${HEAVY_ENDPOINTS}::int)]
    from numbered`;
  await sql`analyze public.webhook_deliveries`;
}

function startDispatcher(perOrganization?: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./dispatcher_child.ts", import.meta.url).pathname],
    env: {
      BENCH_DATABASE_URL: url!,
      ...(perOrganization ? { BENCH_PER_ORGANIZATION: String(perOrganization) } : {}),
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const ready = (async () => {
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("dispatcher exited before it was ready");
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});
  })();
  return { child, ready };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runMode(mode: string) {
  await heavyBacklog();
  heavyMaxActive = 0;
  heavyReceived = 0;
  arrivals.clear();
  const { child, ready } = startDispatcher(mode === "nocap" ? 1_000_000 : undefined);
  await ready;
  // The heavy organization saturates first: its 20 endpoints take what they can.
  const warm = Date.now();
  while (heavyActive < 20 && Date.now() - warm < 10_000) await sleep(50);
  await sleep(HOLD_MS + 500);
  const latencies: number[] = [];
  let missing = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const tag = `${mode}-${i}`;
    await sql`insert into public.members (organization_id, first_name, last_name)
              values (${light!.id}, 'lone', ${tag})`;
    const committed = Date.now();
    while (!arrivals.has(tag) && Date.now() - committed < SAMPLE_TIMEOUT_MS) await sleep(2);
    const at = arrivals.get(tag);
    if (at === undefined) {
      missing++;
      // One that did not arrive within the timeout would only queue the next ones behind it.
      break;
    }
    latencies.push(at - committed);
    await sleep(250);
  }
  const inFlightDuringSamples = heavyMaxActive;
  child.kill("SIGTERM");
  await child.status;
  return { mode, latencies, missing, heavyMaxActive: inFlightDuringSamples, heavyReceived };
}

console.log(`started ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log(
  `${machine()}; ${
    DUE.toLocaleString("en")
  } due over ${HEAVY_ENDPOINTS} endpoints answering in ${HOLD_MS} ms; ` +
    `${SAMPLES} lone deliveries of another organization, one at a time`,
);
const rows: string[] = [];
for (const mode of MODES) {
  const r = await runMode(mode);
  const s = summarize(r.latencies);
  const line =
    `| ${mode} | ${s.n} of ${SAMPLES}${
      r.missing ? ` (one not there after ${SAMPLE_TIMEOUT_MS} ms)` : ""
    } | ` +
    `${s.p50} ms | ${s.p99} ms | ${s.max} ms | ${r.heavyMaxActive} |`;
  rows.push(line);
  console.log(
    `${mode}: ${JSON.stringify({ ...s, missing: r.missing, heavy_max_in_flight: r.heavyMaxActive })}`,
  );
}
console.log("");
console.log(`finished ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}, load average ${loadavg()}`);
console.log("");
console.log(
  "| dispatcher | lone deliveries arrived | p50 | p99 | max | heavy organization's most in flight |",
);
console.log("|---|---|---|---|---|---|");
for (const line of rows) console.log(line);
await sql.end();
Deno.exit(0);
