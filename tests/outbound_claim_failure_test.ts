// Results and the next claim are written in one call (private.webhook_record_and_claim). A claim that
// fails must not take the results down with it: the writer's further tries only record. Otherwise the
// deliveries in flight would stay unrecorded and be sent again once their leases ran out. The test
// breaks private.webhook_claim for a moment, in the test run's own database, and puts it back.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import {
  addMembers,
  allDelivered,
  createEndpoint,
  deliveriesOf,
  gate,
  retireEndpoints,
  testEngine,
} from "./helpers/outbound.ts";

const CLAIM = "private.webhook_claim(integer, bigint, integer, integer, integer)";

Deno.test("results are recorded while every claim fails", async () => {
  const tenant = await createTenant();
  const hold = gate();
  const receiver = await startReceiver(async () => {
    await hold.wait;
    return new Response("ok");
  });
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  const [original] = await sql()<{ def: string }[]>`select pg_get_functiondef(${CLAIM}::regprocedure) as def`;
  const errors: string[] = [];
  const engine = testEngine({ log: (e) => errors.push(String(e.msg)) });
  const stop = new AbortController();
  const started = Date.now();
  const run = engine.run({ signal: stop.signal, deadline: started + 10_000 });
  try {
    await addMembers(tenant.organizationId, 3);
    engine.wake();
    await receiver.waitFor(3, 5000);
    // All three are in flight; from now on every claim fails, alone or along with the results.
    await sql().unsafe(`
      create or replace function private.webhook_claim(max_rows integer, max_bytes bigint,
                                                       per_endpoint integer, per_organization integer,
                                                       lease_seconds integer)
      returns setof private.webhook_claimed language plpgsql as $$
      begin
        raise exception 'claim broken by the test';
      end;
      $$`);
    hold.open();
    await allDelivered(ep.id, 3, started, 7000);
    const rows = await deliveriesOf(ep.id);
    assertEquals(rows.length, 3);
    assertEquals(rows.map((d) => d.attempt_count), [1, 1, 1], "one attempt each, recorded once");
    assert(errors.includes("writing results failed; recording alone"), `logged: ${errors.join("; ")}`);
  } finally {
    hold.open();
    await sql().unsafe(original!.def);
    stop.abort();
    await run;
    await retireEndpoints(ep.id);
    await receiver.close();
  }
  assertEquals(receiver.requests.length, 3, "nothing sent twice");
});

Deno.test("cleanup", async () => {
  await closeSql();
});
