// A dispatcher in its own process, for the test that kills one with SIGKILL in the middle of a batch.
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { DeliveryEngine } from "../../supabase/functions/webhook-dispatcher/engine.ts";

const sql = createSql(Deno.env.get("TEST_DATABASE_URL")!, { max: 4 });
const engine = new DeliveryEngine(sql, { allowPrivateTargets: true, timeoutMs: 30_000 });
console.log("dispatching");
await engine.run({ stopWhenIdle: true });
await sql.end();
