// Retention while deliveries go on: runs the scheduled procedure (private.retention_run, batches of
// 1,000 events) to the end with every organization's retention set to `days`, while a second connection
// runs the dispatcher's database work in a loop (20 new members = 80 deliveries through the outbox, the
// claim, the results). The loop's rate alone (10 s just before and 10 s just after) and during retention.
import type postgres from "postgres";
import { dispatcherRound } from "./delivery_history.ts";
import { summarize } from "./stats.ts";

export async function retentionUnderLoad(
  sql: postgres.Sql,
  worker: postgres.Sql,
  organizationId: string,
  days: number,
) {
  const dispatchRound = () => dispatcherRound(worker, organizationId);
  async function roundsFor(ms: number): Promise<number[]> {
    const samples: number[] = [];
    const end = performance.now() + ms;
    while (performance.now() < end) samples.push(await dispatchRound());
    return samples;
  }
  for (let i = 0; i < 5; i++) await dispatchRound(); // warm up
  const quiet = await roundsFor(10_000);

  await sql`insert into public.organization_log_retention (organization_id, webhook_log_days)
            select id, ${days} from public.organizations
            on conflict (organization_id) do update set webhook_log_days = excluded.webhook_log_days`;
  // Everything older than the cutoff that is gone afterwards was removed by retention (the loop only
  // adds new rows).
  const cutoff =
    (await sql<{ at: string }[]>`select (now() - make_interval(days => ${days}))::text as at`)[0]!.at;
  const old = async () =>
    (await sql<{ d: number; a: number; e: number }[]>`
      select (select count(*)::int from public.webhook_deliveries where created_at < ${cutoff}::timestamptz) as d,
             (select count(*)::int from public.webhook_delivery_attempts a where a.delivery_id in
                (select id from public.webhook_deliveries where created_at < ${cutoff}::timestamptz)) as a,
             (select count(*)::int from public.webhook_events where created_at < ${cutoff}::timestamptz) as e`)[
      0
    ]!;
  const before = await old();

  let busy: number[] = [];
  let running = true;
  const during = (async () => {
    while (running) busy.push(await dispatchRound());
  })();
  const t0 = performance.now();
  await sql`call private.retention_run(1000, interval '1 hour')`;
  const seconds = (performance.now() - t0) / 1000;
  running = false;
  await during;
  busy = busy.slice(1); // the round already running when retention started
  // Alone again right after, so that a change in what else the machine runs during a long retention
  // shows up as a difference between the two quiet measurements rather than as retention's cost.
  const quietAfter = await roundsFor(10_000);
  const after = await old();

  const rate = (s: number[]) => (s.length * 80) / (s.reduce((a, x) => a + x, 0) / 1000);
  const removed = {
    deliveries: before.d - after.d,
    attempts: before.a - after.a,
    events: before.e - after.e,
  };
  return {
    seconds,
    removed,
    keptOld: after,
    secondsPerMillion: seconds / (removed.deliveries / 1e6),
    quiet: { ...summarize(quiet), rate: rate(quiet) },
    busy: { ...summarize(busy), rate: rate(busy) },
    quietAfter: { ...summarize(quietAfter), rate: rate(quietAfter) },
    ratio: rate(busy) / rate([...quiet, ...quietAfter]),
  };
}

export function printRetention(r: Awaited<ReturnType<typeof retentionUnderLoad>>) {
  console.log(
    `removed ${r.removed.deliveries} deliveries, ${r.removed.attempts} attempts and ${r.removed.events} events ` +
      `in ${r.seconds.toFixed(1)} s: ${r.secondsPerMillion.toFixed(1)} s per million deliveries removed`,
  );
  console.log(
    `kept though older than the cutoff (a delivery attempted within the period): ${r.keptOld.d} deliveries`,
  );
  console.log("| dispatcher database work (80 deliveries per round) | rounds | p50 | p90 | deliveries/s |");
  console.log("|---|---|---|---|---|");
  const rows = [["alone, before", r.quiet], ["while retention runs", r.busy], [
    "alone, after",
    r.quietAfter,
  ]] as const;
  for (const [name, s] of rows) {
    console.log(
      `| ${name} | ${s.n} | ${s.p50.toFixed(1)} ms | ${s.p90.toFixed(1)} ms | ${s.rate.toFixed(0)} |`,
    );
  }
  console.log(
    `throughput during retention: ${(100 * r.ratio).toFixed(0)}% of alone (before and after together)`,
  );
}
