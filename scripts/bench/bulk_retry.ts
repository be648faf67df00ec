// Bulk retry of a filtered set, through the configuration API, timed to completion: `n` failing
// deliveries (retrying, due in an hour, last answer 503) of one organization's endpoint among
// `others` delivered ones, retried with POST /deliveries/retry and followed by GET
// /deliveries/retries/{id} (each poll carries the job on, as the page's polls do) until it is done.
// The cron job is unscheduled so only the API moves it. Prints the time to the first answer, to
// completion, the batches, and how many were queued (every one of them: checked).
//   bash scripts/bench/run.sh bulk_retry [n=10000] [others=50000] [rounds=3]
import { createApp } from "../../supabase/functions/webhooks/app.ts";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { loadConfig } from "../../supabase/functions/_shared/config.ts";
import { sha256Hex } from "../../supabase/functions/_shared/hmac.ts";
import { serveFunction } from "../../tests/helpers/server.ts";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const n = Number(Deno.args[0] ?? 10_000);
const others = Number(Deno.args[1] ?? 50_000);
const rounds = Number(Deno.args[2] ?? 3);

const admin = createSql(url, { max: 2 });
await admin`select cron.unschedule('webhook-bulk-retry')`;
// The dispatcher is not part of this measure (it would send what was queued): nothing claims here.
await admin`select cron.unschedule('webhook-dispatch')`;
const deps = {
  config: loadConfig({ SUPABASE_DB_URL: url }),
  sql: createSql(url, { max: 10 }),
};
const server = await serveFunction("webhooks", createApp(deps));

const [org] = await admin<
  { id: string }[]
>`insert into public.organizations (name) values ('Bench') returning id`;
const organizationId = org!.id;
const key = `orgkey_bench${crypto.randomUUID().replaceAll("-", "")}`;
await admin`insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash)
            values (${organizationId}, 'bench', ${key.slice(0, 12)}, ${sha256Hex(key)})`;
const [ep] = await admin<{ id: string }[]>`
  insert into public.webhook_endpoints (organization_id, url, events)
  values (${organizationId}, 'https://bench.example.org/h', array['member.created']) returning id`;
const headers = { "x-api-key": key, "content-type": "application/json" };

async function load(status: "retrying" | "delivered", count: number) {
  await admin`
    with e as (
      insert into public.webhook_events (organization_id, type, payload)
      select ${organizationId}, 'member.created', jsonb_build_object('n', g) from generate_series(1, ${count}::int) g
      returning id
    )
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                           attempt_count, first_attempt_at, last_attempt_at, last_response_status,
                                           delivered_at)
    select ${organizationId}, e.id, ${ep!.id}, ${status},
           case when ${status} = 'retrying' then now() + interval '1 hour' end, 1, now(), now(),
           case when ${status} = 'retrying' then 503 else 200 end,
           case when ${status} = 'delivered' then now() end
    from e`;
}
await load("delivered", others);

const firstAnswer: number[] = [];
const total: number[] = [];
const batches: number[] = [];
for (let round = 1; round <= rounds; round++) {
  await admin`update public.webhook_deliveries set status = 'delivered', next_attempt_at = null, delivered_at = now()
              where endpoint_id = ${ep!.id} and status <> 'delivered'`;
  await load("retrying", n);
  await admin`vacuum analyze public.webhook_deliveries`;
  const started = performance.now();
  const res = await fetch(`${server.base}/deliveries/retry`, {
    method: "POST",
    headers: {
      ...headers,
      "idempotency-key": `bench-${round}-${crypto.randomUUID()}`,
    },
    body: JSON.stringify({
      endpoint_id: ep!.id,
      status: "retrying",
      status_class: "5xx",
    }),
  });
  let job = await res.json();
  if (res.status !== 202) {
    throw new Error(
      `POST /deliveries/retry: ${res.status} ${JSON.stringify(job)}`,
    );
  }
  firstAnswer.push(performance.now() - started);
  while (job.status === "running") {
    job = await (await fetch(`${server.base}/deliveries/retries/${job.id}`, {
      headers,
    })).json();
  }
  total.push(performance.now() - started);
  const [row] = await admin<{ steps: number; queued: number }[]>`
    select r.steps, (select count(*)::int from public.webhook_deliveries d
                      where d.recovery_id = r.id and d.next_attempt_at <= now()) as queued
    from public.webhook_bulk_retries r where r.id = ${job.id}`;
  batches.push(row!.steps);
  if (job.status !== "done" || job.retried !== n || row!.queued !== n) {
    throw new Error(
      `round ${round}: ${JSON.stringify(job)}, queued ${row!.queued}`,
    );
  }
  console.log(
    `round ${round}: ${n} retried in ${(total.at(-1)! / 1000).toFixed(2)} s (first answer ${
      firstAnswer.at(-1)!.toFixed(0)
    } ms, ${row!.steps} batches)`,
  );
}

const s = summarize(total);
const f = summarize(firstAnswer);
console.log(`\n${machine()}`);
console.log(
  `bulk retry of ${n} failing deliveries among ${others} delivered, through the API, ${rounds} rounds: ` +
    `to completion median ${(s.p50 / 1000).toFixed(2)} s (max ${(s.max / 1000).toFixed(2)} s); ` +
    `first answer median ${f.p50.toFixed(0)} ms; ${batches[0]} batches of 1,000`,
);
await server.close();
await deps.sql.end();
await admin.end();
