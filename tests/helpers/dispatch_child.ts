// A dispatcher in its own process: for the test that kills one with SIGKILL in the middle of a batch,
// and for the one where two processes share an endpoint's cap. DISPATCH_PER_ENDPOINT,
// DISPATCH_PER_ORGANIZATION, DISPATCH_MAX_IN_FLIGHT, DISPATCH_MAX_IN_FLIGHT_BYTES, DISPATCH_CLAIM_BATCH,
// DISPATCH_IDLE_GRACE_MS and DISPATCH_POLL_MS tune it; it prints its run's counts as JSON at the end.
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { DeliveryEngine } from "../../supabase/functions/webhook-dispatcher/engine.ts";

const env = (name: string) => Deno.env.get(name) ? Number(Deno.env.get(name)) : undefined;
const sql = createSql(Deno.env.get("TEST_DATABASE_URL")!, { max: 4 });
const engine = new DeliveryEngine(sql, {
  allowPrivateTargets: true,
  timeoutMs: 30_000,
  perEndpoint: env("DISPATCH_PER_ENDPOINT"),
  perOrganization: env("DISPATCH_PER_ORGANIZATION"),
  maxInFlight: env("DISPATCH_MAX_IN_FLIGHT"),
  maxInFlightBytes: env("DISPATCH_MAX_IN_FLIGHT_BYTES"),
  claimBatch: env("DISPATCH_CLAIM_BATCH"),
  log: () => {},
});
console.log("dispatching");
const stats = await engine.run({
  stopWhenIdle: true,
  idleGraceMs: env("DISPATCH_IDLE_GRACE_MS"),
  pollMs: env("DISPATCH_POLL_MS"),
});
console.log(JSON.stringify(stats));
await sql.end();
