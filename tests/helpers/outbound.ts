// Helpers for the outbound webhook tests: endpoints, a delivery engine on the test database, receivers
// that misbehave in the ways real ones do.
import { DeliveryEngine, type EngineOptions } from "../../supabase/functions/webhook-dispatcher/engine.ts";
import { sql, testDbUrl } from "./db.ts";
import { startReceiver } from "./receiver.ts";

export interface TestEndpoint {
  id: string;
  secret: string;
}

export async function createEndpoint(
  organizationId: string,
  url: string,
  events: string[],
): Promise<TestEndpoint> {
  const [row] = await sql()<TestEndpoint[]>`
    insert into public.webhook_endpoints (organization_id, url, events)
    values (${organizationId}, ${url}, ${events}) returning id, secret`;
  return row!;
}

/** `n` members for the organization in one statement: one member.created event each. */
export async function addMembers(organizationId: string, n: number): Promise<void> {
  await sql()`insert into public.members (organization_id, first_name)
              select ${organizationId}, 'm' || g from generate_series(1, ${n}::int) g`;
}

/**
 * A dispatcher in its own process, as deployed (tests/helpers/dispatch_child.ts: its DISPATCH_* variables
 * tune it, DENO_V8_FLAGS limits its heap), on the test database.
 */
export function spawnDispatcher(
  env: Record<string, string> = {},
  stderr: "null" | "inherit" | "piped" = "null",
): DispatcherChild {
  // Its connections carry a name of their own (postgres.js takes connection parameters from the URL),
  // so killDispatcher can tell when the database is done with them.
  const applicationName = `dispatch-child-${crypto.randomUUID()}`;
  const url = new URL(testDbUrl());
  url.searchParams.set("application_name", applicationName);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--no-check",
      "tests/helpers/dispatch_child.ts",
    ],
    cwd: new URL("../../", import.meta.url).pathname,
    env: { TEST_DATABASE_URL: url.toString(), ...env },
    stdout: "null",
    stderr,
  }).spawn();
  return Object.assign(child, { applicationName });
}

export type DispatcherChild = Deno.ChildProcess & { applicationName: string };

/**
 * SIGKILLs a dispatcher process and waits until the database has no connection of it left. A dead
 * process's statements do not die with it: one it sent before the kill (queued behind another on its
 * connection, or not yet read by a busy backend) still runs afterwards, and a claim that runs after
 * runOutLeases leases its rows again for a full lease, out of reach of the dispatchers that follow.
 * Its backends end only after their last statement, on reading the closed socket.
 */
export async function killDispatcher(child: DispatcherChild): Promise<Deno.CommandStatus> {
  child.kill("SIGKILL");
  const status = await child.status;
  for (const started = Date.now(); Date.now() - started < 30_000;) {
    const [left] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where application_name = ${child.applicationName}`;
    if (left!.n === 0) return status;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the connections of ${child.applicationName} outlived it by 30 s`);
}

/** An engine on the test database that may deliver to loopback receivers. */
export function testEngine(options: Partial<EngineOptions> = {}): DeliveryEngine {
  return new DeliveryEngine(sql(), { allowPrivateTargets: true, log: () => {}, ...options });
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  first_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  leased_until: Date | null;
}

export async function deliveriesOf(endpointId: string): Promise<DeliveryRow[]> {
  return await sql()<DeliveryRow[]>`
    select d.id, d.event_id, d.endpoint_id, d.status, d.attempt_count, d.next_attempt_at, d.first_attempt_at,
           d.last_response_status, d.last_error, l.leased_until
    from public.webhook_deliveries d left join private.webhook_leases l on l.delivery_id = d.id
    where d.endpoint_id = ${endpointId} order by d.created_at, d.id`;
}

/**
 * The clock moves past the live leases of these endpoints' deliveries (a dead dispatcher's). A claim
 * the dispatcher had under way when it was killed still runs to its end in the database and commits
 * (the server notices the client is gone only when it answers), so that is waited for first:
 * otherwise its leases would be taken after the clock moved, and hold their deliveries for a minute.
 */
export async function runOutLeases(endpointIds: string[]): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [busy] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where pid <> pg_backend_pid() and state <> 'idle' and query ilike '%private.webhook_%claim%'`;
    if (busy!.n === 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await sql()`update private.webhook_leases set leased_until = now() - interval '1 second'
              where endpoint_id = any(${endpointIds}::uuid[]) and leased_until > now()`;
}

/** Milliseconds from `since` until every delivery of the endpoint is recorded delivered. */
export async function allDelivered(
  endpointId: string,
  count: number,
  since: number,
  limitMs: number,
): Promise<number> {
  while (Date.now() - since < limitMs) {
    const rows = await deliveriesOf(endpointId);
    if (rows.length === count && rows.every((d) => d.status === "delivered")) return Date.now() - since;
    await new Promise((r) => setTimeout(r, 20));
  }
  const statuses = (await deliveriesOf(endpointId)).map((d) => d.status);
  throw new Error(`not all ${count} delivered within ${limitMs} ms: ${statuses.join(", ")}`);
}

/** Disables the endpoint: its open deliveries end, so later tests' engines never pick them up. */
export async function retireEndpoints(...ids: string[]): Promise<void> {
  await sql()`update public.webhook_endpoints set enabled = false, disabled_reason = 'test finished'
              where id = any(${ids}::uuid[]) and enabled`;
}

/** Headers as a plain object, as the standardwebhooks library wants them. */
export function headerObject(headers: Headers): Record<string, string> {
  return Object.fromEntries(headers.entries());
}

/** A TCP server on loopback that accepts connections and closes them without answering. */
export function startSlammer(): { url: string; connections: () => number; close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let count = 0;
  (async () => {
    for await (const conn of listener) {
      count++;
      const buf = new Uint8Array(1024);
      conn.read(buf).catch(() => null).finally(() => {
        try {
          conn.close();
        } catch { /* already closed */ }
      });
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return { url: `http://127.0.0.1:${port}/hook`, connections: () => count, close: () => listener.close() };
}

/** A promise the test resolves later: lets a receiver hang until the test lets it go. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/**
 * A receiver that counts, per path and webhook-id, how often each delivery arrived and how often one
 * arrived while the same delivery was still being answered (a concurrent double send).
 */
export async function startOverlapReceiver() {
  const active = new Map<string, number>();
  const seen = new Map<string, number>();
  const counts = { overlap: 0, seen };
  const receiver = await startReceiver(async (req) => {
    const key = `${req.path} ${req.headers.get("webhook-id")}`;
    active.set(key, (active.get(key) ?? 0) + 1);
    seen.set(key, (seen.get(key) ?? 0) + 1);
    if (active.get(key)! > 1) counts.overlap++;
    await new Promise((r) => setTimeout(r, 2));
    active.set(key, active.get(key)! - 1);
    return new Response("ok");
  });
  return { receiver, counts };
}
