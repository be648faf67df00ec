// The inbound webhook log through the configuration API: admins read their organization's entries
// (payments and WhatsApp) and replay them through the live code path of the receiver that owns them
// (over HTTP, with the replay secret); staff, other organizations, API keys and anonymous callers cannot,
// and nobody without the replay secret can call a receiver's replay endpoint.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startInboundStack } from "./helpers/inbound_stack.ts";
import { createSubscription, deliver, paymentTenant } from "./helpers/payments.ts";
import { change, createAccount, newPhone, signedPost, textMessage, webhookBody } from "./helpers/whatsapp.ts";

async function start(env: Record<string, string> = {}) {
  const stack = await startInboundStack(env);
  return {
    api: stack.base("webhooks"),
    checkout: stack.base("checkout-webhook"),
    messaging: stack.base("messaging-webhook"),
    stack,
    close: () => stack.close(),
  };
}

const auth = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });

Deno.test("an admin lists the log, replays an unmatched charge once its subscription exists, and a second replay changes nothing", async () => {
  const s = await start();
  try {
    const a = await paymentTenant();
    const gatewayId = `sub_${crypto.randomUUID().slice(0, 10)}`;
    const event = {
      event: "charged",
      subscription_id: gatewayId,
      occurred_at: new Date().toISOString(),
      payment: { id: `pay_${crypto.randomUUID().slice(0, 10)}`, amount_minor: 2500, currency: "INR" },
    };
    const sent = await deliver(`${s.checkout}/${a.organizationId}`, event, {
      secret: a.secret,
      key: crypto.randomUUID(),
    });
    assert(sent.status >= 200 && sent.status < 300, `unmatched is acknowledged (${sent.status})`);

    const admin = await tokenFor(a.admin, a.organizationId);
    const list = await (await fetch(`${s.api}/inbound-log?status=unmatched`, { headers: auth(admin) }))
      .json();
    assertEquals(list.data.length, 1);
    const entry = list.data[0];
    assertEquals([entry.provider, entry.event, entry.status], ["checkout", "charged", "unmatched"]);

    const detail = await (await fetch(`${s.api}/inbound-log/${entry.id}`, { headers: auth(admin) })).json();
    assertEquals(detail.payload.subscription_id, gatewayId);

    await createSubscription(a.organizationId, { id: gatewayId, status: "active" });
    const replay = await fetch(`${s.api}/inbound-log/${entry.id}/replay`, {
      method: "POST",
      headers: auth(admin),
    });
    assertEquals(replay.status, 200);
    assertEquals((await replay.json()).status, "processed");
    const again =
      await (await fetch(`${s.api}/inbound-log/${entry.id}/replay`, { method: "POST", headers: auth(admin) }))
        .json();
    assertEquals(again.status, "duplicate");
    const donations =
      await sql()`select amount_minor from public.donations where organization_id = ${a.organizationId}`;
    assertEquals(donations.map((d) => Number(d.amount_minor)), [2500], "the charge is recorded exactly once");

    const failedRun =
      await (await fetch(`${s.api}/inbound-log/replay-failed`, { method: "POST", headers: auth(admin) }))
        .json();
    assertEquals(failedRun.data, [], "nothing left to replay");
  } finally {
    await s.close();
  }
});

Deno.test("staff, other organizations, API keys and anonymous callers cannot read or replay the log", async () => {
  const s = await start();
  try {
    const a = await paymentTenant();
    const b = await paymentTenant();
    const event = { event: "paused", subscription_id: "sub_nope", occurred_at: new Date().toISOString() };
    await deliver(`${s.checkout}/${a.organizationId}`, event, { secret: a.secret, key: crypto.randomUUID() });
    const [row] =
      await sql()`select id from public.inbound_webhook_log where organization_id = ${a.organizationId}`;
    const logId = row!.id as string;

    const staff = await tokenFor(a.staff, a.organizationId);
    assertEquals((await fetch(`${s.api}/inbound-log`, { headers: auth(staff) })).status, 403);
    assertEquals(
      (await fetch(`${s.api}/inbound-log/${logId}/replay`, { method: "POST", headers: auth(staff) })).status,
      403,
    );

    const adminB = await tokenFor(b.admin, b.organizationId);
    assertEquals((await (await fetch(`${s.api}/inbound-log`, { headers: auth(adminB) })).json()).data, []);
    assertEquals((await fetch(`${s.api}/inbound-log/${logId}`, { headers: auth(adminB) })).status, 404);
    assertEquals(
      (await fetch(`${s.api}/inbound-log/${logId}/replay`, { method: "POST", headers: auth(adminB) })).status,
      404,
    );

    const adminA = await tokenFor(a.admin, a.organizationId);
    const key = await (await fetch(`${s.api}/api-keys`, {
      method: "POST",
      headers: auth(adminA),
      body: JSON.stringify({ name: "Zapier" }),
    })).json();
    const asKey = await fetch(`${s.api}/inbound-log`, { headers: { "x-api-key": key.key } });
    assertEquals(asKey.status, 403);
    const refusal = (await asKey.json()).error;
    assertEquals(refusal.code, "user_required");
    assertEquals(refusal.message, "API keys cannot read or replay the inbound payment log");

    assertEquals((await fetch(`${s.api}/inbound-log`)).status, 401);
    const badCursor = await fetch(`${s.api}/inbound-log?cursor=nonsense`, { headers: auth(adminA) });
    assertEquals([badCursor.status, (await badCursor.json()).error.code], [400, "invalid_cursor"]);
  } finally {
    await s.close();
  }
});

Deno.test("a WhatsApp message whose apply failed is in its organization's log and replays once through the API", async () => {
  const s = await start();
  try {
    const t = await createTenant();
    const other = await createTenant();
    const account = await createAccount(t.organizationId);
    const foreign = await createAccount(other.organizationId, { appSecret: account.appSecret });
    const phone = newPhone();
    // The apply fails inside the database (a trigger refusing inbound messages for a moment).
    // Only this organization's messages: other test files may be writing messages meanwhile.
    await sql().unsafe(`create function public.test_refuse_messages() returns trigger language plpgsql as $$
      begin
        if new.organization_id = '${t.organizationId}' then raise exception 'disk full (test)'; end if;
        return new;
      end $$`);
    await sql()`create trigger test_refuse_messages before insert on public.whatsapp_messages
      for each row execute function public.test_refuse_messages()`;
    let res: Response;
    try {
      res = await signedPost(
        s.messaging,
        webhookBody(
          [change(account, { messages: [textMessage(phone, "kept in the log")] })],
          [change(foreign, { messages: [textMessage(phone, "the other organization's")] })],
        ),
        account.appSecret,
      );
      assertEquals(res.status, 500);
      await res.body?.cancel();
    } finally {
      await sql()`drop trigger test_refuse_messages on public.whatsapp_messages`;
      await sql()`drop function public.test_refuse_messages()`;
    }

    const admin = await tokenFor(t.admin, t.organizationId);
    const list = await (await fetch(`${s.api}/inbound-log?provider=whatsapp`, { headers: auth(admin) }))
      .json();
    assertEquals(
      list.data.map((e: Record<string, unknown>) => [e.provider, e.account_id, e.status, e.event]),
      [
        ["whatsapp", account.id, "failed", "messages"],
      ],
    );
    const detail = await (await fetch(`${s.api}/inbound-log/${list.data[0].id}`, { headers: auth(admin) }))
      .json();
    // Only this organization's account's part of the body.
    assert(JSON.stringify(detail.payload).includes("kept in the log"));
    assert(!JSON.stringify(detail.payload).includes("the other organization's"));

    const replayed =
      await (await fetch(`${s.api}/inbound-log/replay-failed`, { method: "POST", headers: auth(admin) }))
        .json();
    assertEquals(replayed.data.map((o: Record<string, unknown>) => o.status), ["processed"]);
    const again = await (await fetch(`${s.api}/inbound-log/${list.data[0].id}/replay`, {
      method: "POST",
      headers: auth(admin),
    })).json();
    assertEquals(again.status, "duplicate");
    const stored = await sql()<{ text: string }[]>`
      select text from public.whatsapp_messages where organization_id = ${t.organizationId}`;
    assertEquals(stored.map((m) => m.text), ["kept in the log"]);
  } finally {
    await s.close();
  }
});

Deno.test("a receiver's replay endpoint refuses callers without the replay secret", async () => {
  const s = await start();
  try {
    const t = await createTenant();
    for (const fn of ["checkout-webhook", "payments-webhook", "messaging-webhook"] as const) {
      const url = `${s.stack.base(fn)}/replay`;
      const body = JSON.stringify({ organization_id: t.organizationId });
      for (
        const authorization of [
          undefined,
          "Bearer wrong",
          `Bearer ${s.stack.replaySecret}x`,
          s.stack.replaySecret,
        ]
      ) {
        const res = await fetch(url, {
          method: "POST",
          body,
          headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        });
        assertEquals(res.status, 401, `${fn} with ${authorization}`);
        await res.body?.cancel();
      }
      const ok = await fetch(url, {
        method: "POST",
        body,
        headers: { "content-type": "application/json", authorization: `Bearer ${s.stack.replaySecret}` },
      });
      assertEquals([ok.status, (await ok.json()).data], [200, []]);
    }
  } finally {
    await s.close();
  }
  // Without a replay secret configured, replay is refused as unavailable rather than open.
  const bare = await start({ INBOUND_REPLAY_SECRET: "" });
  try {
    const t = await createTenant();
    const res = await fetch(`${bare.checkout}/replay`, {
      method: "POST",
      body: JSON.stringify({ organization_id: t.organizationId }),
      headers: { "content-type": "application/json", authorization: "Bearer " },
    });
    assertEquals(res.status, 503);
    await res.body?.cancel();
  } finally {
    await bare.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
