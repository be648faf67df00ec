// Operator tool: replay logged inbound webhooks (payments and WhatsApp) through the same code path as a
// live delivery, the receiver that owns each row.
//   npm run replay-inbound-webhooks -- --log-id <uuid>
//   npm run replay-inbound-webhooks -- --organization <uuid> [--stale-after <seconds>]
//       every failed or unmatched row of the organization, and rows left 'received' (an interrupted
//       apply) for longer than --stale-after (default 300)
// Connects with SUPABASE_DB_URL (server-side; bypasses row-level security like every backend job). A
// script, not a function: it may import the receivers' code, which the configuration API may not.
import { parseArgs } from "node:util";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import {
  replayFailed,
  replayLogged,
  type ReplayOutcome,
} from "../supabase/functions/_shared/inbound/replay.ts";
import type { Provider, Receiver } from "../supabase/functions/_shared/inbound/types.ts";
import { receiver as checkout } from "../supabase/functions/checkout-webhook/app.ts";
import { receiver as payments } from "../supabase/functions/payments-webhook/app.ts";
import { receiver as whatsapp } from "../supabase/functions/messaging-webhook/app.ts";

const RECEIVERS: Record<Provider, Receiver<never>> = {
  checkout: checkout as Receiver<never>,
  payments: payments as Receiver<never>,
  whatsapp: whatsapp as Receiver<never>,
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "log-id": { type: "string" },
    organization: { type: "string" },
    "stale-after": { type: "string" },
  },
});
const logId = values["log-id"];
const organization = values.organization;
const staleAfter = values["stale-after"] === undefined ? 300 : Number(values["stale-after"]);
if (
  (!logId && !organization) || [logId, organization].some((v) => v !== undefined && !UUID.test(v)) ||
  !Number.isInteger(staleAfter) || staleAfter < 0
) {
  console.error(
    "usage: replay-inbound-webhooks --log-id <uuid> | --organization <uuid> [--stale-after <seconds>]",
  );
  Deno.exit(2);
}

const sql = createSql(loadConfig().dbUrl, { max: 1 });
let failed = 0;
let replayed = 0;
let alreadyApplied = 0;
let skipped = 0;
try {
  const outcomes: (ReplayOutcome | null)[] = [];
  if (logId) {
    const [row] = await sql<{ provider: Provider }[]>`
      select provider from public.inbound_webhook_log where id = ${logId}::uuid`;
    outcomes.push(row ? await replayLogged(sql, RECEIVERS[row.provider], logId, organization) : null);
  } else {
    for (const receiver of Object.values(RECEIVERS)) {
      outcomes.push(...await replayFailed(sql, receiver, organization!, { staleAfterSeconds: staleAfter }));
    }
  }
  for (const o of outcomes) {
    if (o === null) {
      console.error(`no log row ${logId}${organization ? ` in organization ${organization}` : ""}`);
      failed++;
      continue;
    }
    if (o.status === "failed") failed++;
    if (o.status === "processed" || o.status === "unmatched") replayed++;
    if (o.status === "duplicate") alreadyApplied++;
    if (o.status === "skipped") skipped++;
    console.log(JSON.stringify(o));
  }
  // Only rows that went through the receiver's apply again count as replayed.
  console.log(
    `${replayed} replayed, ${failed} failed, ${alreadyApplied} already applied, ${skipped} skipped`,
  );
} catch (err) {
  // One line, no stack: the usual cause is an unreachable database or a wrong SUPABASE_DB_URL.
  const e = err as { code?: string; message?: string };
  console.error(`replay-inbound-webhooks: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? String(err)}`);
  failed++;
} finally {
  await sql.end({ timeout: 5 });
}
Deno.exit(failed ? 1 : 0);
