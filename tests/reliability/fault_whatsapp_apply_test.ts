// Fault suite: WhatsApp messages arrive at load while the database connections applying them are
// killed (pg_terminate_backend on every backend running private.process_whatsapp_webhook, every few
// milliseconds). Counted afterwards, per message sent: acknowledged (200) and stored; refused with 5xx
// but in the log (then applied by one replay); refused with 5xx and not logged (the gateway retries
// those, played here by sending them again). No message may be lost or stored twice.
//
//   FAULT_WHATSAPP_MESSAGES=<n>     messages sent (default 240)
//   FAULT_WHATSAPP_CONCURRENCY=<n>  requests in flight (default 12)
import { assert, assertEquals } from "../helpers/assert.ts";
import { closeSql, createOrganization, sql } from "../helpers/db.ts";
import { startInboundStack } from "../helpers/inbound_stack.ts";
import {
  change,
  createAccount,
  newPhone,
  signedPost,
  textMessage,
  webhookBody,
} from "../helpers/whatsapp.ts";

const MESSAGES = Number(Deno.env.get("FAULT_WHATSAPP_MESSAGES") ?? 240);
const CONCURRENCY = Number(Deno.env.get("FAULT_WHATSAPP_CONCURRENCY") ?? 12);
const CONTACTS = 16;

Deno.test("killing the connection mid-apply under load loses no WhatsApp message and stores none twice", async () => {
  const stack = await startInboundStack();
  try {
    const organizationId = await createOrganization();
    const account = await createAccount(organizationId);
    const phones = Array.from({ length: CONTACTS }, () => newPhone());
    const bodies = Array.from({ length: MESSAGES }, (_, i) => {
      const message = textMessage(phones[i % CONTACTS]!, `message ${i}`);
      return {
        id: message.id as string,
        raw: JSON.stringify(webhookBody([change(account, { messages: [message] })])),
      };
    });

    // The killer: every few milliseconds, end every backend in the middle of an apply.
    let killing = true;
    let kills = 0;
    // Every connection error makes the process open fresh pools (_shared/db.ts), so the killer leaves
    // a few milliseconds between rounds for them; a round that cannot connect just tries again.
    const killer = (async () => {
      while (killing) {
        try {
          const [row] = await sql()<{ n: number }[]>`
            select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
            where pid <> pg_backend_pid() and state = 'active' and query ~ 'process_whatsapp_webhook'`;
          kills += row!.n;
        } catch { /* the killer's own connection was reset: next round */ }
        await new Promise((r) => setTimeout(r, 15));
      }
    })();

    const statuses = new Map<string, number>();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const b = bodies[next++]!;
        try {
          const res = await signedPost(stack.base("messaging-webhook"), b.raw, account.appSecret);
          statuses.set(b.id, res.status);
          await res.body?.cancel();
        } catch {
          statuses.set(b.id, 0); // connection dropped: not acknowledged
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    killing = false;
    await killer;

    const acknowledged = bodies.filter((b) => statuses.get(b.id) === 200);
    const refused = bodies.filter((b) => statuses.get(b.id) !== 200);
    const stored = async () =>
      new Map(
        (await sql()<{ provider_message_id: string; n: number }[]>`
          select provider_message_id, count(*)::int as n from public.whatsapp_messages
          where organization_id = ${organizationId} group by provider_message_id`).map((
          r,
        ) => [r.provider_message_id, r.n]),
      );
    const before = await stored();
    // Every acknowledged message is stored.
    assertEquals(acknowledged.filter((b) => before.get(b.id) !== 1).length, 0, "acknowledged but not stored");
    const logged = await sql()<{ status: string; n: number }[]>`
      select status, count(*)::int as n from public.inbound_webhook_log
      where organization_id = ${organizationId} and signature_valid group by status order by status`;
    const inLog = logged.filter((r) => r.status !== "processed").reduce((a, r) => a + r.n, 0);

    // One replay of everything left in the log (no waiting for rows to count as interrupted).
    const replay = await fetch(`${stack.base("messaging-webhook")}/replay`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${stack.replaySecret}` },
      body: JSON.stringify({ organization_id: organizationId, stale_after_seconds: 0 }),
    });
    const replayed = (await replay.json()).data as { status: string }[];
    assert(
      replayed.every((o) => o.status === "processed" || o.status === "duplicate"),
      JSON.stringify(replayed),
    );
    const afterReplay = await stored();
    const notLogged = refused.filter((b) => !afterReplay.has(b.id));

    // The gateway retries what was refused and never logged.
    for (const b of notLogged) {
      const res = await signedPost(stack.base("messaging-webhook"), b.raw, account.appSecret);
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    const final = await stored();
    const lost = bodies.filter((b) => !final.has(b.id)).length;
    const doubled = [...final.values()].filter((n) => n > 1).length;
    console.log(`fault-whatsapp-apply: ${
      JSON.stringify({
        sent: MESSAGES,
        connections_killed: kills,
        acknowledged: acknowledged.length,
        refused_5xx: refused.length,
        refused_but_logged: inLog,
        replayed: replayed.length,
        refused_not_logged_resent: notLogged.length,
        stored: final.size,
        lost,
        doubled,
      })
    }`);
    assert(kills > 0 && refused.length > 0, `the fault happened (${kills} kills, ${refused.length} refused)`);
    assertEquals([lost, doubled, final.size], [0, 0, MESSAGES]);
  } finally {
    await stack.close();
    await closeSql();
  }
});
