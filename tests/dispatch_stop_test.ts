// A stop in the middle of a batch loses nothing and sends nothing twice, and the process is gone within
// 5 s: the webhook-dispatcher served as the Edge Runtime serves it (scripts/edge-runtime.ts: a cron-style
// run answered 202 and running under EdgeRuntime.waitUntil, SIGTERM dispatching `beforeunload`), and the
// dev server (its local loop, plus a run a pg_net-style POST started). Each is stopped while 1,640
// deliveries go to a real receiver on 127.0.0.1, started again, and left to finish; then every delivery
// was received exactly once, recorded delivered after one attempt, and no lease is left.
// docs/reliability/hosted.md#a-stop
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql, testDbUrl } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { addMembers, createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { startDevStack } from "./helpers/dev_stack.ts";

const root = new URL("../", import.meta.url).pathname;
const secret = `dispatch-${crypto.randomUUID()}`;
const ENDPOINTS = 4;
const MEMBERS = 400; // x 4 endpoints: 1,600 deliveries
const PACED = 40; // attendance marks, to a fifth endpoint limited to 10 a second
const TOTAL = MEMBERS * ENDPOINTS + PACED;

/**
 * Four endpoints on one receiver that answers each request after 100 ms, counting each delivery, and a
 * fifth for attendance limited to 10 a second: a claim gives it a second's worth of sends (about 9), each
 * waiting for its turn, so a stop made as its third arrives finds sends claimed and not started.
 */
async function setup() {
  const tenant = await createTenant();
  const received = new Map<string, number>();
  const receiver = await startReceiver(async (req) => {
    const key = `${req.path} ${req.headers.get("webhook-id")}`;
    received.set(key, (received.get(key) ?? 0) + 1);
    await new Promise((r) => setTimeout(r, 100));
    return new Response("ok");
  });
  // Made before any endpoint exists: its own member.created goes nowhere.
  const [member] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'p') returning id`;
  const endpoints: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    endpoints.push(
      (await createEndpoint(tenant.organizationId, `${receiver.url}/e${i}`, ["member.created"])).id,
    );
  }
  const paced = await createEndpoint(tenant.organizationId, `${receiver.url}/paced`, ["attendance.marked"]);
  await sql()`update public.webhook_endpoints set rate_limit_per_second = 10 where id = ${paced.id}`;
  endpoints.push(paced.id);
  // 1,640 deliveries, due at once.
  const raise = async () => {
    await sql()`insert into public.attendance (organization_id, member_id)
                select ${tenant.organizationId}, ${member!.id} from generate_series(1, ${PACED})`;
    await addMembers(tenant.organizationId, MEMBERS);
  };
  const pacedReceived = () => [...received.keys()].filter((k) => k.startsWith("/paced ")).length;
  return { tenant, received, receiver, endpoints, raise, pacedReceived };
}

async function counts(endpoints: string[]) {
  const [c] = await sql()<{ delivered: number; attempts: number; leases: number; total: number }[]>`
    select count(*) filter (where d.status = 'delivered')::int as delivered,
           coalesce(sum(d.attempt_count), 0)::int as attempts,
           count(*)::int as total,
           (select count(*)::int from private.webhook_leases l where l.endpoint_id = any(${endpoints}::uuid[]))
             as leases
    from public.webhook_deliveries d where d.endpoint_id = any(${endpoints}::uuid[])`;
  return c!;
}

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  ms = 60_000,
  detail = () => "",
): Promise<void> {
  for (const started = Date.now(); Date.now() - started < ms;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}: ${detail()}`);
}

/** scripts/edge-runtime.ts serving webhook-dispatcher's index.ts; resolves its URL once it listens. */
async function edgeRuntime() {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "scripts/edge-runtime.ts", "webhook-dispatcher"],
    cwd: root,
    env: {
      SUPABASE_DB_URL: testDbUrl(),
      WEBHOOK_DISPATCH_SECRET: secret,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  await until(
    "the function to listen",
    () => /serving (http:\S+)/.test(out) || out.includes("error"),
    30_000,
  );
  const url = out.match(/serving (http:\S+)/)?.[1];
  assert(url, out);
  const post = async (body: unknown) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  /** SIGTERM; resolves the exit code and how long the exit took. */
  const stop = async () => {
    const t0 = Date.now();
    child.kill("SIGTERM");
    const { code } = await child.status;
    await drained;
    return { code, ms: Date.now() - t0, out };
  };
  return { post, stop, output: () => out };
}

Deno.test("SIGTERM to the hosted path mid-batch: out within 5 s, what was sent recorded, the rest given back; after a restart 0 sent twice, 0 lost", async () => {
  const { received, receiver, endpoints, raise, pacedReceived } = await setup();
  try {
    const first = await edgeRuntime();
    await raise();
    // What the cron job posts: a run with no stop_when_idle, 70 s of budget.
    const started = await first.post({});
    assertEquals([started.status, started.body.started], [202, true]);
    await until("the paced endpoint's third delivery", () => pacedReceived() >= 3);
    const stopped = await first.stop();
    assert(stopped.ms < 5000, `the stop took ${stopped.ms} ms:\n${stopped.out}`);
    assertEquals(stopped.code, 0, stopped.out);
    assert(!stopped.out.includes("CONNECTION_ENDED"), stopped.out);
    const finished = stopped.out.split("\n").map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    }).find((e) => e.msg === "dispatch finished");
    assertEquals(finished?.stopped, "signal", stopped.out);
    // It asked for its successor as it stopped (private.webhook_dispatch_continue(); with no pg_net here
    // there is nothing to post, so null): on a hosted project that run starts in another worker at once,
    // not at the next cron minute (tests/hosted_dispatch_test.ts and tests/hosted_vault_test.ts see it start).
    assert("continued" in finished, `the stopped run asked for its successor: ${JSON.stringify(finished)}`);

    // Nothing sent is left unrecorded, nothing claimed is left leased.
    const after = await counts(endpoints);
    const receivedThen = received.size;
    assert(receivedThen < TOTAL, "the stop came mid-batch");
    assertEquals(after.delivered, receivedThen, "every delivery received was recorded delivered");
    assertEquals(after.attempts, receivedThen, "and nothing else was attempted");
    assertEquals(after.leases, 0, `no lease left behind: ${JSON.stringify(finished)}`);
    assert(
      finished.released > 0,
      `paced sends waiting for their turn were given back: ${JSON.stringify(finished)}`,
    );
    assertEquals(finished.claimed, finished.recorded + finished.released, JSON.stringify(finished));

    // Started again, as pg_net would start it: a run, and one more each second while work is left (the
    // continuations; there is no pg_net here to ask for them).
    const second = await edgeRuntime();
    await until(
      "every delivery",
      async () => {
        if ((await counts(endpoints)).delivered === TOTAL) return true;
        assertEquals((await second.post({ stop_when_idle: true })).status, 202);
        await new Promise((r) => setTimeout(r, 1000));
        return false;
      },
      60_000,
      second.output,
    );
    const end = await second.stop();
    assertEquals(end.code, 0, end.out);

    const dupes = [...received.values()].filter((n) => n > 1).length;
    const total = await counts(endpoints);
    assertEquals(
      [received.size, dupes, total.delivered, total.attempts, total.leases],
      [TOTAL, 0, TOTAL, TOTAL, 0],
      "received once each, delivered after one attempt",
    );
    console.log(
      `hosted path: stopped after ${receivedThen} of ${TOTAL} in ${stopped.ms} ms; claimed ${finished.claimed}, recorded ${finished.recorded}, given back ${finished.released}`,
    );
  } finally {
    await retireEndpoints(...endpoints);
    await receiver.close();
  }
});

Deno.test("SIGTERM to the dev server mid-batch (its local loop and a pg_net-style run): out within 5 s; after a restart 0 sent twice, 0 lost", async () => {
  const { received, receiver, endpoints, raise } = await setup();
  try {
    const env = { WEBHOOK_DISPATCH_SECRET: secret };
    const first = await startDevStack({ env });
    await raise(); // the local loop is woken by the outbox's NOTIFY
    // A pg_net-style start besides the local loop: awaited under plain Deno, for up to its 70 s budget.
    const run = fetch(`${first.url}/functions/v1/webhook-dispatcher`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: "{}",
    }).then(
      async (r) => ({ status: r.status, body: await r.json() }),
      (e) => ({ status: 0, body: String(e) }),
    );
    await until("a quarter of the deliveries", () => received.size >= 400);
    const t0 = Date.now();
    await first.stop("SIGTERM", 5000);
    const ms = Date.now() - t0;
    assert(ms < 5000, `the stop took ${ms} ms:\n${first.output()}`);
    assert(!first.output().includes("CONNECTION_ENDED"), first.output());
    const answered = await run;
    // Answered, whether the stop ended it or its CPU budget did first: under the dev server the budget
    // counts the whole process's CPU (the local loop's too), so a run may end on it before the signal.
    assertEquals(answered.status, 200, JSON.stringify(answered));
    assert(["signal", "cpu"].includes(answered.body.stopped), JSON.stringify(answered));

    const after = await counts(endpoints);
    const receivedThen = received.size;
    assert(receivedThen < TOTAL, "the stop came mid-batch");
    assertEquals(after.delivered, receivedThen, "every delivery received was recorded delivered");
    assertEquals(after.attempts, receivedThen, "and nothing else was attempted");
    assertEquals(after.leases, 0, "no lease left behind");

    const second = await startDevStack({ env });
    await until("every delivery", async () => (await counts(endpoints)).delivered === TOTAL);
    await second.stop("SIGTERM", 5000);

    const dupes = [...received.values()].filter((n) => n > 1).length;
    const total = await counts(endpoints);
    assertEquals(
      [received.size, dupes, total.delivered, total.attempts, total.leases],
      [TOTAL, 0, TOTAL, TOTAL, 0],
      "received once each, delivered after one attempt",
    );
    console.log(`dev server: stopped after ${receivedThen} of ${TOTAL} in ${ms} ms`);
  } finally {
    await retireEndpoints(...endpoints);
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
