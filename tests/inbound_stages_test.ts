// The inbound pipeline stage by stage, the same table of attacks and failures run against all three
// receivers: bad signature, oversized body, duplicate, replay of an applied payload, and the
// database connection lost in the middle of applying (the payload stays in the log and one replay
// through the configuration API applies it exactly once).
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, type Sql, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startInboundStack } from "./helpers/inbound_stack.ts";
import { createSubscription, paymentTenant } from "./helpers/payments.ts";
import { change, createAccount, newPhone, textMessage, webhookBody } from "./helpers/whatsapp.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";

const stack = await startInboundStack();
const api = stack.base("webhooks");

interface Case {
  /** Serves one delivery; a fresh body per call unless the same one is passed back. */
  nextBody(): string;
  post(raw: string, signWith?: string): Promise<Response>;
  secret: string;
  organizationId: string;
  adminToken: string;
  /** How many times the effect of `raw` has been applied (rows it created / state it moved). */
  applied(raw: string): Promise<number>;
  /** Holds a lock the apply of `raw` needs, until release() (to kill the connection mid-apply). */
  block(raw: string): Promise<{ release(): Promise<void> }>;
}

type Factory = () => Promise<Case>;

async function holdLock(statement: (tx: Sql) => Promise<unknown>) {
  const holder = await sql().reserve();
  await holder`begin`;
  await statement(holder as unknown as Sql);
  return {
    release: async () => {
      await holder`rollback`;
      holder.release();
    },
  };
}

const post = (url: string, header: string, prefix = "") => async (raw: string, signWith?: string) =>
  await fetch(url, {
    method: "POST",
    body: raw,
    headers: {
      "content-type": "application/json",
      ...(signWith === undefined ? {} : { [header]: prefix + await hmacSha256Hex(signWith, raw) }),
    },
  });

const checkoutCase: Factory = async () => {
  const t = await paymentTenant();
  const sub = await createSubscription(t.organizationId, { status: "active" });
  let n = 0;
  return {
    secret: t.secret,
    organizationId: t.organizationId,
    adminToken: await tokenFor(t.admin, t.organizationId),
    nextBody: () => {
      const paymentId = `pay_${crypto.randomUUID().slice(0, 12)}`;
      return JSON.stringify({
        event: "charged",
        subscription_id: sub.gatewayId,
        occurred_at: new Date(Date.UTC(2026, 10, 23, 9, n++)).toISOString(),
        payment: { id: paymentId, amount_minor: 1000, currency: "INR" },
      });
    },
    post: post(`${stack.base("checkout-webhook")}/${t.organizationId}`, "x-checkout-signature"),
    applied: async (raw) => {
      const id = JSON.parse(raw).payment.id;
      const [r] = await sql()<{ n: number }[]>`
        select count(*)::int n from public.donations where gateway_payment_id = ${id}`;
      return r!.n;
    },
    block: () =>
      holdLock((tx) => tx`select 1 from public.recurring_donations where id = ${sub.id} for update`),
  };
};

const paymentsCase: Factory = async () => {
  const t = await paymentTenant();
  return {
    secret: t.secret,
    organizationId: t.organizationId,
    adminToken: await tokenFor(t.admin, t.organizationId),
    nextBody: () =>
      JSON.stringify({
        event: "payment.captured",
        occurred_at: new Date().toISOString(),
        payment: { id: `pay_${crypto.randomUUID().slice(0, 12)}`, amount_minor: 700, currency: "INR" },
      }),
    post: post(`${stack.base("payments-webhook")}/${t.organizationId}`, "x-payments-signature"),
    applied: async (raw) => {
      const id = JSON.parse(raw).payment.id;
      const [r] = await sql()<{ n: number }[]>`
        select count(*)::int n from public.donations where gateway_payment_id = ${id}`;
      return r!.n;
    },
    // record_gateway_payment serializes on this advisory lock (private.lock_gateway_payment).
    block: (raw) =>
      holdLock((tx) =>
        tx`select pg_advisory_xact_lock(hashtextextended(${t.organizationId}::text || '/' || ${
          JSON.parse(raw).payment.id
        }, 7304))`
      ),
  };
};

const whatsappCase: Factory = async () => {
  const t = await paymentTenant();
  const account = await createAccount(t.organizationId);
  const phone = newPhone();
  const [thread] = await sql()<{ id: string }[]>`
    insert into public.whatsapp_conversations (organization_id, contact_phone)
    values (${t.organizationId}, ${phone}) returning id`;
  return {
    secret: account.appSecret,
    organizationId: t.organizationId,
    adminToken: await tokenFor(t.admin, t.organizationId),
    nextBody: () =>
      JSON.stringify(webhookBody([change(account, { messages: [textMessage(phone, crypto.randomUUID())] })])),
    post: post(stack.base("messaging-webhook"), "x-hub-signature-256", "sha256="),
    applied: async (raw) => {
      const id = JSON.parse(raw).entry[0].changes[0].value.messages[0].id;
      const [r] = await sql()<{ n: number }[]>`
        select count(*)::int n from public.whatsapp_messages where provider_message_id = ${id}`;
      return r!.n;
    },
    // The sender's thread is upserted first thing in the apply.
    block: () =>
      holdLock((tx) => tx`select 1 from public.whatsapp_conversations where id = ${thread!.id} for update`),
  };
};

const RECEIVERS: [string, Factory, RegExp][] = [
  ["checkout-webhook", checkoutCase, /process_payment_webhook/],
  ["payments-webhook", paymentsCase, /process_payment_webhook/],
  ["messaging-webhook", whatsappCase, /process_whatsapp_webhook/],
];

async function logRowsOf(organizationId: string) {
  return await sql()<{ id: string; status: string; deliveries: number; signature_valid: boolean | null }[]>`
    select id, status, deliveries, signature_valid from public.inbound_webhook_log
    where organization_id = ${organizationId} order by received_at, id`;
}

const replay = async (c: Case, logId: string) =>
  await (await fetch(`${api}/inbound-log/${logId}/replay`, {
    method: "POST",
    headers: { authorization: `Bearer ${c.adminToken}` },
  })).json();

for (const [name, factory, processFn] of RECEIVERS) {
  Deno.test(`${name}: a bad signature is 401, applies nothing and is only counted`, async () => {
    const c = await factory();
    const raw = c.nextBody();
    for (const signWith of [undefined, "not-the-secret", "not-the-secret-either"]) {
      const res = await c.post(raw, signWith);
      assertEquals(res.status, 401);
      await res.body?.cancel();
    }
    assertEquals(await c.applied(raw), 0);
    const rows = await logRowsOf(c.organizationId);
    assertEquals(rows.map((r) => [r.status, r.signature_valid, r.deliveries]), [
      ["unverified", false, 1],
      ["unverified", false, 2],
    ]);
  });

  Deno.test(`${name}: a body over 1 MiB is 413 and nothing is logged`, async () => {
    const c = await factory();
    const raw = c.nextBody().slice(0, -1) + `, "pad": "${"x".repeat(1024 * 1024)}"}`;
    const res = await c.post(raw, c.secret);
    assertEquals(res.status, 413);
    await res.body?.cancel();
    assertEquals((await logRowsOf(c.organizationId)).length, 0);
  });

  Deno.test(`${name}: a duplicate delivery is answered 200 and applied once; a replay changes nothing`, async () => {
    const c = await factory();
    const raw = c.nextBody();
    const first = await c.post(raw, c.secret);
    assertEquals(first.status, 200);
    await first.body?.cancel();
    const second = await c.post(raw, c.secret);
    assertEquals(second.status, 200);
    await second.body?.cancel();
    assertEquals(await c.applied(raw), 1);
    const [row] = await logRowsOf(c.organizationId);
    assertEquals([row!.status, row!.deliveries], ["processed", 2]);
    assertEquals((await replay(c, row!.id)).status, "duplicate");
    assertEquals(await c.applied(raw), 1);
  });

  Deno.test(`${name}: the database connection lost during apply: 503, logged, one replay applies it once`, async () => {
    const c = await factory();
    const raw = c.nextBody();
    const lock = await c.block(raw);
    let res: Response;
    try {
      const pending = c.post(raw, c.secret);
      pending.catch(() => {});
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const rows = await sql()<{ pid: number; query: string }[]>`
          select pid, query from pg_stat_activity
          where wait_event_type = 'Lock' and pid <> pg_backend_pid() and query ~ ${processFn.source}`;
        pid = rows[0]?.pid;
      }
      assert(pid !== undefined, "the apply is waiting on the held lock");
      await sql()`select pg_terminate_backend(${pid})`;
      res = await pending;
    } finally {
      await lock.release();
    }
    assertEquals(res.status, 503);
    await res.body?.cancel();
    assertEquals(await c.applied(raw), 0);
    const [row] = await logRowsOf(c.organizationId);
    assertEquals(row!.status, "received", "the payload is in the log, not applied");

    assertEquals((await replay(c, row!.id)).status, "processed");
    assertEquals(await c.applied(raw), 1);
    assertEquals((await replay(c, row!.id)).status, "duplicate");
    // The provider's own retry of the same body now changes nothing either.
    const retry = await c.post(raw, c.secret);
    assertEquals(retry.status, 200);
    await retry.body?.cancel();
    assertEquals(await c.applied(raw), 1);
  });
}

Deno.test("close", async () => {
  await stack.close();
  await closeSql();
});
