// What erasing a person costs: per 10,000 of the person's rows, and per batch (each batch is one short
// transaction; the API runs them for up to 2 s, the cron job for the rest).
//   bash scripts/bench/run.sh erasure [person_rows=10000] [other_rows=50000] [rounds=3] [batches=500]
// `batches` may list several batch sizes (`500,2000`): each round then erases one person with each, in
// turn, so the sizes are compared side by side on the same machine load.
// One organization holds `other_rows` events (with deliveries) and inbound log rows of other members,
// and each round a new person with `person_rows` rows of their own, spread over the kinds an erasure
// reaches: attendance (each raising an event and a delivery, with an attempt whose response echoes the
// body), inbound payment log rows naming their e-mail (linked to them, as applying a delivery records),
// and WhatsApp messages in their thread. The erasure follows the person's links (its cost grows with
// their rows), then its leftover report reads the organization's whole history once (that grows with
// the organization): both sizes are printed, and the time of each stage.
import postgres from "postgres";
import { machine, summarize } from "./stats.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) throw new Error("run through scripts/bench/run.sh");
const personRows = Number(Deno.args[0] ?? 10_000);
const otherRows = Number(Deno.args[1] ?? 50_000);
const rounds = Number(Deno.args[2] ?? 3);
const batches = (Deno.args[3] ?? "500").split(",").map(Number);
const sql = postgres(url, { max: 1, onnotice: () => {} });
// The benchmark runs the steps itself; the every-minute job would otherwise join in.
await sql`select cron.unschedule('person-erasure')`;

const [org] = await sql<
  { id: string }[]
>`insert into public.organizations (name) values ('Bench Church') returning id`;
const orgId = org!.id;
const [admin] = await sql<{ id: string }[]>`
  insert into auth.users (id, email, aud, role) values (gen_random_uuid(), 'bench-admin@example.org', 'authenticated',
    'authenticated') returning id`;
await sql`insert into public.profiles (user_id, organization_id, role) values (${
  admin!.id
}, ${orgId}, 'admin')`;
await sql`insert into public.webhook_endpoints (organization_id, url, events)
          values (${orgId}, 'https://bench.example.org/h', array['member.created', 'attendance.marked'])`;
const [account] = await sql<{ id: string }[]>`
  insert into public.messaging_accounts (organization_id, phone_number_id) values (${orgId}, 'bench') returning id`;

const loadStart = performance.now();
await sql`insert into public.members (organization_id, first_name, last_name, email, primary_phone)
          select ${orgId}, 'Other', 'Member' || g, 'other' || g || '@example.org', '+1 555 ' || lpad(g::text, 7, '0')
          from generate_series(1, ${otherRows}) g`;
await sql`insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload, body_sha256,
            signature_valid, status)
          select ${orgId}, 'payments', 'payment.captured', 'other-' || g,
                 jsonb_build_object('payment', jsonb_build_object('email', 'other' || g || '@example.org', 'amount', g)),
                 sha256(('other-' || g)::bytea), true, 'processed'
          from generate_series(1, ${otherRows}) g`;
await sql`vacuum analyze`;
const loadSeconds = (performance.now() - loadStart) / 1000;

interface Round {
  batch: number;
  rows: number;
  startMs: number;
  steps: number[];
  totalMs: number;
  /** Following the person's links (erase_member and every stage before the report). */
  linksMs: number;
  /** The leftover report: reading the organization's history. */
  reportMs: number;
}
const results: Round[] = [];
/** Time spent per batch size and stage, over every person. */
const byStage = new Map<string, number>();
let r = 0;
for (let round = 1; round <= rounds; round++) {
  for (const batch of batches) {
    r++;
    const email = `person${r}@example.org`;
    const digits = `4477009${String(r).padStart(5, "0")}`;
    const share = Math.floor(personRows / 4);
    const [m] = await sql<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (${orgId}, 'Person', ${`Round${r}`}, ${email}, ${"+" + digits}) returning id`;
    await sql`insert into public.attendance (organization_id, member_id, service_date)
            select ${orgId}, ${m!.id}, current_date - g from generate_series(1, ${share}) g`;
    await sql`insert into public.webhook_delivery_attempts (organization_id, delivery_id, attempt_number, attempted_at,
              response_status, response_excerpt)
            select ${orgId}, d.id, 1, now(), 200, left(e.payload::text, 200)
            from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
            where e.payload #>> '{data,row,member_id}' = ${m!.id}`;
    await sql`insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload,
              body_sha256, signature_valid, status, member_ids)
            select ${orgId}, 'payments', 'payment.captured', ${`p${r}-`} || g,
                   jsonb_build_object('payment', jsonb_build_object('email', ${email}::text, 'amount', g)),
                   sha256((${`p${r}-`} || g)::bytea), true, 'processed', array[${m!.id}::uuid]
            from generate_series(1, ${share}) g`;
    const [thread] = await sql<{ id: string }[]>`
    insert into public.whatsapp_conversations (organization_id, contact_phone, member_id, member_match)
    values (${orgId}, ${digits}, ${m!.id}, 'matched') returning id`;
    await sql`insert into public.whatsapp_messages (organization_id, conversation_id, account_id, provider_message_id,
              direction, type, text, status, sender_phone)
            select ${orgId}, ${thread!.id}, ${
      account!.id
    }, ${`wamid.${r}.`} || g, 'inbound', 'text', 'hello ' || g,
                   'received', ${digits}
            from generate_series(1, ${share}) g`;
    await sql`analyze`;

    const t0 = performance.now();
    const [created] = await sql.begin(async (tx) => {
      // As the configuration API runs it: config_api, a token of a live session.
      const [session] = await tx<{ id: string }[]>`
        insert into auth.sessions (id, user_id, created_at, updated_at, aal)
        values (gen_random_uuid(), ${admin!.id}, now(), now(), 'aal1') returning id`;
      await tx`select set_config('request.jwt.claims', ${
        JSON.stringify({ sub: admin!.id, organization_id: orgId, session_id: session!.id })
      }, true),
                    set_config('role', 'config_api', true)`;
      return await tx<{ id: string }[]>`select public.erase_member(${m!.id}) as id`;
    });
    const startMs = performance.now() - t0;
    const steps: number[] = [];
    let stage = "whatsapp";
    let linksMs = startMs;
    let reportMs = 0;
    for (;;) {
      const s = performance.now();
      const [row] = await sql<
        { p: { status: string; stage: string } | null }[]
      >`select private.erasure_step(${created!.id}, ${batch}) as p`;
      const ms = performance.now() - s;
      steps.push(ms);
      byStage.set(
        `${batch} ${stage}`,
        (byStage.get(`${batch} ${stage}`) ?? 0) + ms,
      );
      if (stage.startsWith("leftovers")) reportMs += ms;
      else linksMs += ms;
      if (!row!.p || row!.p.status === "done") break;
      stage = row!.p.stage;
      // The report's part, as the next step will read it (outside the timing).
      if (stage === "leftovers") {
        const [work] = await sql<{ part: string | null }[]>`
          select report_part as part from private.member_erasure_work where erasure_id = ${created!.id}`;
        stage = `leftovers:${work?.part ?? "inbound_log"}`;
      }
    }
    // The steps and erase_member only (not the probes of the report's part between steps).
    const totalMs = linksMs + reportMs;
    const [done] = await sql<{ counts: Record<string, number> }[]>`
    select counts from public.member_erasures where id = ${created!.id}`;
    const rows = Object.entries(done!.counts).filter(([k]) => !k.endsWith("_unlinked") && k !== "shared_kept")
      .reduce(
        (a, [, n]) => a + n,
        0,
      );
    results.push({ batch, rows, startMs, steps, totalMs, linksMs, reportMs });
    console.error(
      `person ${r} (batch ${batch}): ${rows} rows erased in ${
        totalMs.toFixed(0)
      } ms, ${steps.length} batches`,
    );
  }
}

const [history] = await sql<{ events: number; log: number }[]>`
  select (select count(*)::int from public.webhook_events) as events,
         (select count(*)::int from public.inbound_webhook_log) as log`;
const median = (xs: number[]) => summarize(xs).p50;
console.log(`Erasure, ${machine()}`);
console.log(
  `organization: ${history!.events} webhook events (with deliveries) and ${history!.log} inbound log rows ` +
    `(loaded in ${loadSeconds.toFixed(0)} s)`,
);
console.log(
  "| person | batch size | rows erased | erase_member | batches | total | per 10,000 rows | links | report |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const [i, r] of results.entries()) {
  const per10k = (r.totalMs / r.rows * 10_000 / 1000).toFixed(2);
  console.log(
    `| ${i + 1} | ${r.batch} | ${r.rows} | ${r.startMs.toFixed(0)} ms | ${r.steps.length} | ` +
      `${(r.totalMs / 1000).toFixed(2)} s | ${per10k} s | ${(r.linksMs / 1000).toFixed(2)} s | ` +
      `${(r.reportMs / 1000).toFixed(2)} s |`,
  );
}
for (const batch of batches) {
  const mine = results.filter((r) => r.batch === batch);
  const steps = summarize(mine.flatMap((r) => r.steps));
  const per10k = median(mine.map((r) => r.totalMs / r.rows * 10_000)) / 1000;
  const links10k = median(mine.map((r) => r.linksMs / r.rows * 10_000)) / 1000;
  const history100k = (history!.events + history!.log) / 100_000;
  const report100k = median(mine.map((r) => r.reportMs)) / history100k / 1000;
  console.log(
    `batch ${batch}: following the links, median ${links10k.toFixed(2)} s per 10,000 of the person's ` +
      `rows; the report, median ${report100k.toFixed(2)} s per 100,000 rows of history (events and log)`,
  );
  console.log(
    `batch ${batch}: median per 10,000 rows ${per10k.toFixed(2)} s; one batch p50 ${
      steps.p50.toFixed(0)
    } ms, ` +
      `p90 ${steps.p90.toFixed(0)} ms, max ${steps.max.toFixed(0)} ms`,
  );
}
for (const batch of batches) {
  const stages = [...byStage].filter(([k]) => k.startsWith(`${batch} `));
  const total = stages.reduce((a, [, ms]) => a + ms, 0);
  console.log(
    `batch ${batch}, share of the time per stage: ` +
      stages.map(([k, ms]) => `${k.split(" ")[1]} ${(ms / total * 100).toFixed(0)}%`).join(", "),
  );
}
await sql.end();
