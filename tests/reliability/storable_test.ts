// What PostgreSQL can hold of a JSON body (the 5xx the hostile suite found), unit by unit and through
// checkout-webhook: bodies jsonb refuses are applied and kept as text, ids it cannot hold are a 400.
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql } from "../helpers/db.ts";
import { createSubscription, deliver, logRows, paymentTenant, subscriptionRow } from "../helpers/payments.ts";
import {
  jsonDepth,
  MAX_JSON_DEPTH,
  storableInPostgres,
  storableString,
  valueDepth,
} from "../../supabase/functions/_shared/storable.ts";
import { serveInbound } from "./harness.ts";

Deno.test("jsonDepth counts brackets outside strings only, and stops early", () => {
  assertEquals(jsonDepth('{"a":[1,{"b":2}]}'), 3);
  assertEquals(jsonDepth('{"a":"[[[[{{{{\\"]]]"}'), 1);
  assertEquals(jsonDepth("[]"), 1);
  assertEquals(jsonDepth('"x"'), 0);
  assertEquals(jsonDepth("[".repeat(100_000)), MAX_JSON_DEPTH + 1);
});

Deno.test("valueDepth walks without recursion", () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assertEquals(valueDepth(deep), MAX_JSON_DEPTH + 1);
  assertEquals(valueDepth({ a: [{ b: 1 }] }), 3);
  assertEquals(valueDepth("x"), 0);
});

Deno.test("storableInPostgres refuses NUL and unpaired surrogates in keys and values", () => {
  assert(storableInPostgres({ a: ["ok", "\ud83d\ude4f", 1, null] }));
  assert(!storableInPostgres({ a: "x\u0000" }));
  assert(!storableInPostgres({ "\ud800": 1 }));
  assert(!storableInPostgres([["\udc00"]]));
  assertEquals(storableString("a\u0000b\ud800"), "a\uFFFDb\uFFFD");
});

Deno.test("checkout-webhook: lone surrogates and deep nesting outside the event are applied and kept as text; a NUL in an id is a 400", async () => {
  const inbound = await serveInbound();
  try {
    const t = await paymentTenant();
    const sub = await createSubscription(t.organizationId, { status: "active" });
    const url = `${inbound.checkout}/${t.organizationId}`;
    const base = `"subscription_id":"${sub.gatewayId}"`;
    const surrogate = `{"event":"paused",${base},"occurred_at":"2026-11-22T09:00:00Z","note":"\\ud800"}`;
    const res = await deliver(url, surrogate, { secret: t.secret, key: `evt_${crypto.randomUUID()}` });
    assertEquals([res.status, res.json.status], [200, "processed"], JSON.stringify(res.json));
    assertEquals((await subscriptionRow(sub.id)).status, "paused");

    const deep = `{"event":"payment_failed",${base},"occurred_at":"2026-11-22T09:01:00Z","note":${
      "[".repeat(20000)
    }${"]".repeat(20000)}}`;
    const res2 = await deliver(url, deep, { secret: t.secret, key: `evt_${crypto.randomUUID()}` });
    assertEquals([res2.status, res2.json.status], [200, "processed"], JSON.stringify(res2.json));
    assertEquals((await subscriptionRow(sub.id)).status, "past_due");

    const nulId =
      `{"event":"cancelled","subscription_id":"${sub.gatewayId}\\u0000","occurred_at":"2026-11-22T09:02:00Z"}`;
    const res3 = await deliver(url, nulId, { secret: t.secret, key: `evt_${crypto.randomUUID()}` });
    assertEquals(res3.status, 400);
    assertEquals((await subscriptionRow(sub.id)).status, "past_due");

    const log = await logRows(t.organizationId);
    assertEquals(log.map((l) => [l.status, l.payload === null, l.raw_body !== null]), [
      ["processed", true, true],
      ["processed", true, true],
      ["rejected", true, true],
    ]);
  } finally {
    await inbound.close();
  }
});

Deno.test("storable cleanup", async () => {
  await closeSql();
});
