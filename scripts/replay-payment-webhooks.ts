// Operator tool: replay logged payment webhooks through the same code path as a live delivery.
//   npm run replay-payment-webhooks -- --log-id <uuid>
//   npm run replay-payment-webhooks -- --organization <uuid>        (every failed/unmatched row)
// Connects with SUPABASE_DB_URL (server-side; bypasses row-level security like every backend job).
import { parseArgs } from "node:util";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { replayFailed, replayLogged } from "../supabase/functions/_shared/inbound/replay.ts";
import { paymentWebhookSpecs } from "../supabase/functions/_shared/inbound/registry.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const { values } = parseArgs({
  args: Deno.args,
  options: { "log-id": { type: "string" }, organization: { type: "string" } },
});
const logId = values["log-id"];
const organization = values.organization;
if ((!logId && !organization) || [logId, organization].some((v) => v !== undefined && !UUID.test(v))) {
  console.error("usage: replay-payment-webhooks --log-id <uuid> | --organization <uuid>");
  Deno.exit(2);
}

const sql = createSql(loadConfig().dbUrl, { max: 1 });
let failed = 0;
try {
  const outcomes = logId
    ? [await replayLogged(sql, paymentWebhookSpecs, logId, organization)]
    : await replayFailed(sql, paymentWebhookSpecs, organization!);
  for (const o of outcomes) {
    if (o === null) {
      console.error(`no log row ${logId}${organization ? ` in organization ${organization}` : ""}`);
      failed++;
      continue;
    }
    if (o.status === "failed") failed++;
    console.log(JSON.stringify(o));
  }
  console.log(`${outcomes.length} replayed, ${failed} failed`);
} catch (err) {
  // One line, no stack: the usual cause is an unreachable database or a wrong SUPABASE_DB_URL.
  const e = err as { code?: string; message?: string };
  console.error(`replay-payment-webhooks: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? String(err)}`);
  failed++;
} finally {
  await sql.end({ timeout: 5 });
}
Deno.exit(failed ? 1 : 0);
