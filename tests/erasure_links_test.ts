// Erasure follows the links each row recorded when it was written, never a search of text: every value
// staff or a provider could plant to widen an erasure (provider ids shaped like timestamps, a phone set
// to the church's own WhatsApp number id, a 7-digit phone equal to an amount, a bystander's thread
// re-linked to the member) is planted here the way it was done against a real stack, and the erasure
// changes no row of anyone else. The erased person's own rows, digit-only provider ids included, are
// all gone: a search of every column of every table finds none of their values.
import { assert, assertEquals } from "./helpers/assert.ts";
import { EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";
import { asConfigApi, asUser, closeSql, sql, type Tx } from "./helpers/db.ts";
import { changedRows, organizationRows, rowsHolding, rowsMentioning } from "./helpers/catalogue_search.ts";
import { startInboundStack } from "./helpers/inbound_stack.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { createSubscription, deliver, paymentTenant } from "./helpers/payments.ts";
import { tokenFor } from "./helpers/tokens.ts";
import {
  change,
  contact,
  createAccount,
  newPhone,
  signedPost,
  textMessage,
  webhookBody,
} from "./helpers/whatsapp.ts";

const stack = await startInboundStack();
const api = stack.base("webhooks");
// Every event about people (webhook.endpoint.disabled is about endpoints).
const EVENTS = EVENT_TYPES.filter((t) => t !== "webhook.endpoint.disabled");
const endpoints: string[] = [];

type Tenant = Awaited<ReturnType<typeof paymentTenant>>;

async function member(
  org: string,
  fields: { first?: string; email?: string; phone?: string } = {},
) {
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (${org}, ${fields.first ?? "Member"}, ${crypto.randomUUID().slice(0, 8)}, ${fields.email ?? null},
            ${fields.phone ?? null})
    returning id`;
  return m!.id;
}

async function subscribedEndpoint(org: string) {
  const endpoint = await createEndpoint(
    org,
    "http://127.0.0.1:9/hooks",
    EVENTS,
  );
  endpoints.push(endpoint.id);
  return endpoint;
}

/** Erases through the API as the organization's admin, then lets the cron procedure finish it. */
async function erase(t: Tenant, memberId: string) {
  const res = await fetch(`${api}/erasures`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${await tokenFor(t.admin, t.organizationId)}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ member_id: memberId }),
  });
  assert(
    res.status === 201 || res.status === 202,
    `erasure accepted (${res.status})`,
  );
  const { id } = await res.json();
  for (let i = 0; i < 20; i++) {
    const [row] = await sql()<{ finished_at: Date | null }[]>`
      select finished_at from public.member_erasures where id = ${id}`;
    if (row!.finished_at) break;
    await sql()`call private.erasure_run(50)`;
  }
  const [row] = await sql()<{ record: Record<string, unknown> }[]>`
    select to_jsonb(e) as record from public.member_erasures e where id = ${id}`;
  const record = row!.record as {
    finished_at: string | null;
    counts: Record<string, number>;
    leftovers?: Record<string, { count: number; ids: string[] }>;
  };
  assert(record.finished_at, "the erasure finished");
  await noteErasureEntries();
  return { id: id as string, ...record };
}

/**
 * The rows that are the member's own, found the way a reader of the data would (not through the links
 * under test): the member row, the events about them or their rows and those events' deliveries, the
 * donations and subscriptions recorded for them, the erasure's record.
 */
async function ownRows(org: string, memberId: string): Promise<Set<string>> {
  const rows = await sql()<{ key: string }[]>`
    select 'public.members:' || ${memberId} as key
    union all
    select 'public.webhook_events:' || e.id from public.webhook_events e
     where e.organization_id = ${org}
       and (e.payload #>> '{data,row,id}' = ${memberId} or e.payload #>> '{data,row,member_id}' = ${memberId})
    union all
    select 'public.webhook_deliveries:' || d.id from public.webhook_deliveries d
      join public.webhook_events e on e.id = d.event_id
     where e.organization_id = ${org}
       and (e.payload #>> '{data,row,id}' = ${memberId} or e.payload #>> '{data,row,member_id}' = ${memberId})
    union all
    select 'public.donations:' || d.id from public.donations d where d.member_id = ${memberId}
    union all
    select 'public.recurring_donations:' || r.id from public.recurring_donations r where r.member_id = ${memberId}
    union all
    select 'public.attendance:' || a.id from public.attendance a where a.member_id = ${memberId}`;
  return new Set(rows.map((r) => r.key));
}

/**
 * Changed rows that are not the member's own (the erasure's record is new, and theirs, as is its entry
 * in the audit log, which names the erasure alone).
 */
function othersChanged(changed: string[], own: Set<string>): string[] {
  return changed.filter((k) =>
    !own.has(k) && !k.startsWith("public.member_erasures:") && !erasureEntries.has(k)
  );
}

/** The audit log's entries of erasures, the rows an erasure adds besides its record. */
const erasureEntries = new Set<string>();
async function noteErasureEntries() {
  for (
    const r of await sql()<{ id: string }[]>`
      select id from public.audit_log where action = 'member.erasure_requested'`
  ) erasureEntries.add(`public.audit_log:${r.id}`);
}

async function whatsappMessage(
  account: Awaited<ReturnType<typeof createAccount>>,
  from: string,
  text: string,
) {
  const res = await signedPost(
    stack.base("messaging-webhook"),
    webhookBody([
      change(account, {
        contacts: [contact(from, `Contact ${from}`)],
        messages: [textMessage(from, text)],
      }),
    ]),
    account.appSecret,
  );
  assertEquals(res.status, 200, await res.text());
}

Deno.test("provider ids shaped like timestamps: no other person's event, delivery, log row or mail is touched", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  await subscribedEndpoint(org);
  // The hours the organization's bodies name: events and log rows now, invitation mails' expiry in 7 days.
  const [hours] = await sql()<{ hour: string; expiry: string }[]>`
    select to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24') as hour,
           to_char((now() + interval '7 days') at time zone 'utc', 'YYYY-MM-DD"T"HH24') as expiry`;
  const { hour, expiry } = hours!;
  const victim = await member(org, {
    first: "Vic",
    email: `vic.${crypto.randomUUID()}@example.org`,
  });
  // Nine other people, each with a donation: 18 events, every one of them with a delivery still due.
  const others: string[] = [];
  for (let i = 0; i < 9; i++) {
    const id = await member(org, { first: `Other${i}` });
    others.push(id);
    await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency, source)
                values (${org}, ${id}, 1000, 'GBP', 'manual')`;
  }
  // A verified checkout delivery of one of them, this hour.
  const sub = await createSubscription(org, { memberId: others[0] });
  const charged = await deliver(`${stack.base("checkout-webhook")}/${org}`, {
    event: "charged",
    subscription_id: sub.gatewayId,
    occurred_at: new Date().toISOString(),
    payment: {
      id: `pay_${crypto.randomUUID().slice(0, 10)}`,
      amount_minor: 50000,
      currency: "INR",
    },
  }, { secret: t.secret, key: `evt_${crypto.randomUUID()}` });
  assertEquals(charged.status, 200, JSON.stringify(charged.json));
  // Twelve invitations to other people: twelve mails.
  for (let i = 0; i < 12; i++) {
    await asConfigApi(
      t.adminClaims,
      (tx) => tx`select public.create_invitation(${`guest${i}.${crypto.randomUUID()}@example.org`}, 'staff')`,
    );
  }
  // Staff record the victim's donations with provider ids shaped like those hours.
  await asUser(
    t.staffClaims,
    (tx) =>
      tx`insert into public.donations (organization_id, member_id, amount_minor, currency, source, gateway_payment_id)
       values (${org}, ${victim}, 100, 'GBP', 'manual', ${hour}), (${org}, ${victim}, 100, 'GBP', 'manual', ${expiry})`,
  );

  const own = await ownRows(org, victim);
  const before = await organizationRows(org);
  const record = await erase(t, victim);
  const after = await organizationRows(org);

  assertEquals(
    othersChanged(changedRows(before, after), own),
    [],
    "no row of anyone else changed",
  );
  assertEquals(
    (await rowsHolding(victim)).map((h) => h.table),
    ["public.member_erasures"],
    "the member's id is kept in the erasure's record alone",
  );
  const [left] = await sql()<
    { events: number; due: number; log: number; mails: number }[]
  >`
    select (select count(*)::int from public.webhook_events where organization_id = ${org} and redacted_at is null) as events,
           (select count(*)::int from public.webhook_deliveries where organization_id = ${org} and status = 'pending') as due,
           (select count(*)::int from public.inbound_webhook_log where organization_id = ${org} and redacted_at is null) as log,
           (select count(*)::int from private.mail_outbox where organization_id = ${org} and recipient <> 'redacted') as mails`;
  assertEquals(
    left,
    { events: 19, due: 19, log: 1, mails: 12 },
    "9+9 events of others and the charge's, all due",
  );
  // The victim's own: their member.created and two donation.recorded events, and the two donations' ids.
  assertEquals(record.counts.webhook_events, 3);
  assertEquals(record.counts.donations_pseudonymized, 2);
});

Deno.test("a member's phone set to the church's own WhatsApp number id: other contacts' log rows, threads and messages stay", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  const account = await createAccount(org);
  // Four other contacts write in; every delivery names the church's number id in its metadata.
  for (let i = 0; i < 4; i++) {
    await whatsappMessage(account, newPhone(), `Hello ${i}`);
  }
  // Staff set a member's phone to that id.
  const victim = await member(org, { first: "Vic" });
  await asUser(
    t.staffClaims,
    (tx) => tx`update public.members set primary_phone = ${account.phoneNumberId} where id = ${victim}`,
  );

  const own = await ownRows(org, victim);
  const before = await organizationRows(org);
  const [named] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.inbound_webhook_log
    where organization_id = ${org} and payload::text like ${"%" + account.phoneNumberId + "%"}`;
  assertEquals(named!.n, 4, "every log row names the number id");
  await erase(t, victim);
  const after = await organizationRows(org);
  assertEquals(
    othersChanged(changedRows(before, after), own),
    [],
    "no row of anyone else changed",
  );
  assertEquals(
    (await rowsHolding(victim)).map((h) => h.table),
    ["public.member_erasures"],
    "the member's id is kept in the erasure's record alone",
  );
});

Deno.test("a 7-digit phone equal to an amount: another person's donation event stays", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  await subscribedEndpoint(org);
  const bystander = await member(org, { first: "Bea" });
  await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency, source)
              values (${org}, ${bystander}, 2500000, 'GBP', 'manual')`;
  const victim = await member(org, { first: "Vic", phone: "250 0000" });

  const own = await ownRows(org, victim);
  const before = await organizationRows(org);
  await erase(t, victim);
  const after = await organizationRows(org);
  assertEquals(
    othersChanged(changedRows(before, after), own),
    [],
    "no row of anyone else changed",
  );
  assertEquals(
    (await rowsHolding(victim)).map((h) => h.table),
    ["public.member_erasures"],
    "the member's id is kept in the erasure's record alone",
  );
  const [event] = await sql()<{ redacted_at: Date | null }[]>`
    select redacted_at from public.webhook_events
    where organization_id = ${org} and type = 'donation.recorded' and payload #>> '{data,row,member_id}' = ${bystander}`;
  assertEquals(event!.redacted_at, null);
});

Deno.test("a bystander's thread re-linked to the member: the thread, its messages and log rows stay theirs", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  const account = await createAccount(org);
  const phone = newPhone();
  const bystander = await member(org, { first: "Bea", phone: `+${phone}` });
  const victim = await member(org, {
    first: "Vic",
    email: `vic.${crypto.randomUUID()}@example.org`,
  });
  await whatsappMessage(account, phone, "Hello from Bea");
  const [thread] = await sql()<{ id: string; member_id: string }[]>`
    select id, member_id from public.whatsapp_conversations where organization_id = ${org} and contact_phone = ${phone}`;
  assertEquals(
    thread!.member_id,
    bystander,
    "matched to the bystander by number",
  );
  // Staff re-link the thread to the member an admin will erase; more messages arrive.
  await asUser(
    t.staffClaims,
    (tx) =>
      tx`update public.whatsapp_conversations set member_id = ${victim}, member_match = 'manual' where id = ${
        thread!.id
      }`,
  );
  await whatsappMessage(account, phone, "Still Bea");

  const own = await ownRows(org, victim);
  const before = await organizationRows(org);
  const record = await erase(t, victim);
  const after = await organizationRows(org);
  // The thread, its messages and log rows are kept: only the erased member's link leaves them (the
  // thread's member reference went with the member row, and its updated_at moved).
  const strip = (json: string | undefined) => {
    if (!json) return json;
    const {
      member_ids: _links,
      member_id: _member,
      updated_at: _touched,
      ...rest
    } = JSON.parse(json);
    return JSON.stringify(rest);
  };
  for (const key of othersChanged(changedRows(before, after), own)) {
    assertEquals(
      strip(after.get(key)),
      strip(before.get(key)),
      `${key}: only the link changed`,
    );
    assert(
      !after.get(key)!.includes(victim),
      `${key} no longer holds the member's id`,
    );
  }
  assertEquals(
    (await rowsHolding(victim)).map((h) => h.table),
    ["public.member_erasures"],
    "the member's id is kept in the erasure's record alone",
  );
  const [kept] = await sql()<{ messages: number; member_ids: string[] }[]>`
    select (select count(*)::int from public.whatsapp_messages m where m.conversation_id = c.id) as messages,
           c.member_ids from public.whatsapp_conversations c where c.id = ${thread!.id}`;
  assertEquals(kept, { messages: 2, member_ids: [bystander] });
  const logs = await sql()<
    { redacted_at: Date | null; member_ids: string[] }[]
  >`
    select redacted_at, member_ids from public.inbound_webhook_log where organization_id = ${org} order by received_at`;
  assertEquals([...logs], [{ redacted_at: null, member_ids: [bystander] }, {
    redacted_at: null,
    member_ids: [bystander],
  }]);
  assert(
    (record.counts.shared_kept ?? 0) >= 3,
    `kept for the bystander: ${JSON.stringify(record.counts)}`,
  );
  // And named for the admin: they may still hold something of the member.
  assertEquals(record.leftovers?.whatsapp_conversations?.ids, [thread!.id]);
  // The delivery that came after the re-link (the first was recorded as the bystander's alone).
  assertEquals(record.leftovers?.inbound_webhook_log?.count, 1);
  assertEquals(
    record.counts.whatsapp_conversations,
    undefined,
    "no thread deleted",
  );
});

Deno.test("the erased person's digit-only provider ids leave the log and the money records; a retry still is not recorded twice", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10)).join("");
  const subscriptionId = `9${digits(13)}`;
  const paymentId = `8${digits(11)}`;
  const email = `payer.${crypto.randomUUID()}@example.org`;
  const victim = await member(org, { first: "Payer", email });
  const sub = await createSubscription(org, {
    id: subscriptionId,
    memberId: victim,
  });
  const charge = (at: string) =>
    deliver(`${stack.base("checkout-webhook")}/${org}`, {
      event: "charged",
      subscription_id: subscriptionId,
      occurred_at: at,
      payment: { id: paymentId, amount_minor: 50000, currency: "INR" },
    }, { secret: t.secret, key: `evt_${crypto.randomUUID()}` });
  assertEquals(
    (await charge(new Date(Date.now() - 60_000).toISOString())).status,
    200,
  );
  // An event we ignore names the payment and the payer too (Razorpay's payment.authorized).
  const authorized = await deliver(`${stack.base("payments-webhook")}/${org}`, {
    entity: "event",
    account_id: "acc_BFQ7uQEaa7j2z7",
    event: "payment.authorized",
    contains: ["payment"],
    payload: {
      payment: {
        entity: {
          id: paymentId,
          amount: 50000,
          currency: "INR",
          email,
          contact: "+919000090000",
        },
      },
    },
    created_at: Math.floor(Date.now() / 1000),
  }, {
    secret: t.secret,
    header: "x-payments-signature",
    key: `evt_${crypto.randomUUID()}`,
  });
  assertEquals(authorized.status, 200, JSON.stringify(authorized.json));
  // And a partial refund of the charge.
  const refundId = `7${digits(11)}`;
  const refund = () =>
    deliver(`${stack.base("payments-webhook")}/${org}`, {
      event: "refund.processed",
      occurred_at: new Date().toISOString(),
      refund: {
        id: refundId,
        payment_id: paymentId,
        amount_minor: 1000,
        currency: "INR",
      },
    }, {
      secret: t.secret,
      header: "x-payments-signature",
      key: `evt_${crypto.randomUUID()}`,
    });
  assertEquals((await refund()).status, 200);
  for (const id of [subscriptionId, paymentId, refundId, email]) {
    assert((await rowsMentioning(id)).length > 0, `${id} is stored before`);
  }

  const record = await erase(t, victim);
  for (const id of [subscriptionId, paymentId, refundId, email, victim]) {
    const hits = (await rowsHolding(id)).map((h) => `${h.table}.${h.column}`);
    assertEquals(
      hits,
      id === victim ? ["public.member_erasures.member_id"] : [],
      `nothing holds ${id}`,
    );
  }
  assertEquals(record.counts.inbound_webhook_log, 3);
  assertEquals(record.counts.recurring_donations_pseudonymized, 1);
  assertEquals(record.counts.donations_pseudonymized, 1);
  assertEquals(record.counts.donation_refunds_pseudonymized, 1);

  // The provider sends the same charge and refund again as new deliveries: recognized, no second
  // donation or refund, and the subscription is still found.
  const again = await charge(new Date().toISOString());
  assertEquals(again.status, 200, JSON.stringify(again.json));
  const refundAgain = await refund();
  assertEquals(refundAgain.status, 200, JSON.stringify(refundAgain.json));
  const [money] = await sql()<
    { donations: number; refunds: number; refunded: string; status: string }[]
  >`
    select (select count(*)::int from public.donations where organization_id = ${org}) as donations,
           (select count(*)::int from public.donation_refunds where organization_id = ${org}) as refunds,
           (select refunded_minor::text from public.donations where organization_id = ${org}) as refunded,
           (select status from public.recurring_donations where id = ${sub.id}) as status`;
  assertEquals(money, {
    donations: 1,
    refunds: 1,
    refunded: "1000",
    status: "active",
  });
});

Deno.test("staff cannot plant, strip or forge a row's links, nor read the key behind erased provider ids", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  const bystander = await member(org, { first: "Bea" });
  const victim = await member(org, { first: "Vic" });
  const gatewayId = `pay_${crypto.randomUUID().slice(0, 12)}`;
  const refused = (statement: (tx: Tx) => Promise<unknown>) =>
    asUser(t.staffClaims, statement).then(() => "accepted", (e) => e.code);
  // As PostgREST runs a staff request: a donation recorded with the victim's id planted in its links,
  // so the victim's erasure would take (or pseudonymize) it.
  assertEquals(
    await refused((tx) =>
      tx`insert into public.donations (organization_id, member_id, amount_minor, currency, member_ids)
         values (${org}, ${bystander}, 100, 'GBP', array[${victim}]::uuid[])`
    ),
    "42501",
    "only the server writes member_ids",
  );
  const [donation] = await asUser(t.staffClaims, (tx) =>
    tx<{ id: string }[]>`
      insert into public.donations (organization_id, member_id, amount_minor, currency, source, gateway_payment_id)
      values (${org}, ${bystander}, 100, 'GBP', 'manual', ${gatewayId})
      returning id`);
  const links = async () =>
    (await sql()<
      { member_ids: string[] }[]
    >`select member_ids from public.donations where id = ${donation!.id}`)[0]!
      .member_ids;
  assertEquals(await links(), [bystander]);
  // Plant the victim, strip the bystander (even pretending to be the erasure), link an id that is no
  // member's: each refused.
  const attempts: ((tx: Tx) => Promise<unknown>)[] = [
    (tx) => tx`update public.donations set member_ids = array[${victim}]::uuid[] where id = ${donation!.id}`,
    (tx) =>
      tx`update public.donations set member_ids = array[${bystander}, ${victim}]::uuid[] where id = ${
        donation!.id
      }`,
    async (tx) => {
      await tx`select set_config('private.erasing_member', ${bystander}, true)`;
      await tx`update public.donations set member_ids = '{}' where id = ${donation!.id}`;
    },
    (tx) =>
      tx`update public.donations set member_ids = array[${crypto.randomUUID()}]::uuid[], member_id = ${victim}
         where id = ${donation!.id}`,
  ];
  for (const [i, attempt] of attempts.entries()) {
    assertEquals(await refused(attempt), "42501", `attempt ${i}`);
  }
  assertEquals(
    await links(),
    [bystander],
    "the links are as the server wrote them",
  );
  // Linking a row to a member is setting its member_id (staff's to do): the old link stays.
  await asUser(
    t.staffClaims,
    (tx) => tx`update public.donations set member_id = ${victim} where id = ${donation!.id}`,
  );
  assertEquals(
    await links(),
    [bystander, victim].sort(),
    "links only grow, and only to members",
  );
  for (
    const attempt of [
      `select key from private.gateway_id_key`,
      `select private.erased_gateway_id('x')`,
    ]
  ) {
    const err = await asUser(t.staffClaims, (tx) => tx.unsafe(attempt)).catch((
      e,
    ) => e);
    assertEquals(err.code, "42501", attempt);
  }
  // The donation is both members': erasing the victim keeps it, with its provider id, for the bystander.
  const record = await erase(t, victim);
  const [kept] = await sql()<
    { gateway_payment_id: string; member_ids: string[] }[]
  >`
    select gateway_payment_id, member_ids from public.donations where id = ${donation!.id}`;
  assertEquals(kept, {
    gateway_payment_id: gatewayId,
    member_ids: [bystander],
  });
  assertEquals(record.leftovers?.donations?.ids, [donation!.id]);
});

Deno.test("an unlinked WhatsApp thread with a member's id planted by staff is not erased with that member", async () => {
  const t = await paymentTenant();
  const org = t.organizationId;
  const account = await createAccount(org);
  const phone = newPhone();
  const victim = await member(org, { first: "Vic" });
  await whatsappMessage(account, phone, "Hello from a stranger");
  const [thread] = await sql()<{ id: string; member_ids: string[] }[]>`
    select id, member_ids from public.whatsapp_conversations where organization_id = ${org} and contact_phone = ${phone}`;
  assertEquals(thread!.member_ids, [], "no member has this number");
  // The attack, through either door: the thread and its messages made the victim's in the links alone.
  for (const door of [asUser, asConfigApi]) {
    for (
      const plant of [
        (tx: Tx) =>
          tx`update public.whatsapp_conversations set member_ids = array[${victim}]::uuid[] where id = ${
            thread!.id
          }`,
        (tx: Tx) =>
          tx`update public.whatsapp_messages set member_ids = array[${victim}]::uuid[]
             where conversation_id = ${thread!.id}`,
        (tx: Tx) =>
          tx`insert into public.whatsapp_messages (organization_id, conversation_id, provider_message_id, direction,
                                                   type, text, status, member_ids)
             values (${org}, ${
            thread!.id
          }, ${`wamid.${crypto.randomUUID()}`}, 'outbound', 'text', 'planted', 'sent',
                     array[${victim}]::uuid[])`,
      ]
    ) {
      const code = await door(t.staffClaims, plant).then(
        () => "accepted",
        (e) => e.code,
      );
      assertEquals(code, "42501", "only the server writes member_ids");
    }
  }
  await erase(t, victim);
  const [left] = await sql()<{ threads: number; messages: number }[]>`
    select (select count(*)::int from public.whatsapp_conversations where id = ${thread!.id}) as threads,
           (select count(*)::int from public.whatsapp_messages where conversation_id = ${
    thread!.id
  }) as messages`;
  assertEquals(
    left,
    { threads: 1, messages: 1 },
    "the stranger's thread outlives the victim's erasure",
  );
});

Deno.test("teardown", async () => {
  await retireEndpoints(...endpoints);
  await stack.close();
  await closeSql();
});
