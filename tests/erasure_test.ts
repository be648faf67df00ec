// Erasing a person everywhere: through the configuration API as deployed, an admin erases a member whose
// data arrived the ways it does (staff, the payment and WhatsApp providers' signed webhooks, outbound
// events and receivers' answers, invitations), and a search of every text, JSON and id column of every
// table (found in the catalogue) no longer finds the member's e-mail, phone, name, provider ids or id;
// other members' rows are untouched; the history stays without the data; a row of someone else that
// mentions the member is reported, not changed; other organizations, staff, API keys and anonymous
// callers can neither erase nor learn anything. The planted values that once widened an erasure:
// tests/erasure_links_test.ts.
import { assert, assertEquals } from "./helpers/assert.ts";
import { asConfigApi, asUser, closeSql, createTenant, sql } from "./helpers/db.ts";
import { rowsAbout, rowsHolding, rowsMentioning } from "./helpers/catalogue_search.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { createSubscription, deliver, paymentTenant } from "./helpers/payments.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { type InboundStack, startInboundStack } from "./helpers/inbound_stack.ts";
import {
  change,
  contact,
  createAccount,
  signedPost,
  status,
  textMessage,
  webhookBody,
} from "./helpers/whatsapp.ts";

const EVENTS = [
  "member.created",
  "member.lost",
  "donation.recorded",
  "attendance.marked",
  "workflow.completed",
];
const j = (v: unknown) => JSON.stringify(v);
const bearer = (t: string) => ({
  authorization: `Bearer ${t}`,
  "content-type": "application/json",
});

interface Person {
  id: string;
  first: string;
  last: string;
  email: string;
  phone: string;
  digits: string;
  paymentId: string;
  /** What a search must no longer find once the person is erased. */
  terms: string[];
}

/** A unique number in the +44 7700 900xxx style, written with spaces as people type them. */
function phoneNumber(): { phone: string; digits: string } {
  const n = String(100000 + Math.floor(Math.random() * 899999));
  return {
    phone: `+44 7700 ${n.slice(0, 3)} ${n.slice(3)}`,
    digits: `447700${n}`,
  };
}

/**
 * A member with data in every place a person's data lives, each written the way it is in service:
 * outbound events (created, lost, donations, attendance) with deliveries pending and delivered (a
 * receiver echoing the body in its response), the card-payment provider's notification of a donation
 * staff recorded, the checkout provider's charge of their subscription, a WhatsApp message from their
 * number and the receipt of one sent to them, an invitation to their address (and its mail).
 */
async function seedPerson(
  stack: InboundStack,
  t: Awaited<ReturnType<typeof paymentTenant>>,
  tag: string,
): Promise<Person> {
  const org = t.organizationId;
  const first = `Ada${tag}`;
  const last = `Lovelace${tag}`;
  const email = `ada.${tag}@example.org`;
  const { phone, digits } = phoneNumber();
  const paymentId = `pay_1${tag}`;
  const subscriptionId = `sub_1${tag}`;
  const chargeId = `pay_2${tag}`;
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (${org}, ${first}, ${last}, ${email}, ${phone}) returning id`;
  const id = m!.id;
  await sql()`update public.members set status = 'lost' where id = ${id}`;
  await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency, source, gateway_payment_id)
              values (${org}, ${id}, 2500, 'GBP', 'online', ${paymentId})`;
  await sql()`insert into public.attendance (organization_id, member_id) values (${org}, ${id})`;
  // One delivery answered: the receiver echoed the body back.
  const [d] = await sql()<{ id: string }[]>`
    select d.id from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
    where d.organization_id = ${org} and e.type = 'member.created' and e.payload #>> '{data,row,id}' = ${id}`;
  await sql()`update public.webhook_deliveries set status = 'delivered', next_attempt_at = null,
                attempt_count = 1, delivered_at = now() where id = ${d!.id}`;
  await sql()`insert into public.webhook_delivery_attempts
                (organization_id, delivery_id, attempt_number, attempted_at, response_status, response_excerpt,
                 response_headers)
              values (${org}, ${d!.id}, 1, now(), 200, ${`{"stored":"${first} ${last} <${email}>"}`},
                      ${j({ location: `/contacts/${email}` })}::jsonb)`;
  // The card-payment provider's notification names the payer; the checkout provider charges their
  // subscription.
  const paid = await deliver(`${stack.base("payments-webhook")}/${org}`, {
    event: "payment.captured",
    occurred_at: new Date().toISOString(),
    payment: {
      id: paymentId,
      amount_minor: 2500,
      currency: "GBP",
      email,
      contact: `+${digits}`,
      notes: { name: `${first} ${last}` },
    },
  }, { secret: t.secret, header: "x-payments-signature", key: `evt_${tag}_1` });
  assertEquals(paid.status, 200, j(paid.json));
  await createSubscription(org, { id: subscriptionId, memberId: id });
  const charged = await deliver(`${stack.base("checkout-webhook")}/${org}`, {
    event: "charged",
    subscription_id: subscriptionId,
    occurred_at: new Date().toISOString(),
    payment: { id: chargeId, amount_minor: 2500, currency: "GBP" },
  }, { secret: t.secret, key: `evt_${tag}_2` });
  assertEquals(charged.status, 200, j(charged.json));
  // WhatsApp: a message from their number (matched to them by it), one sent to them and its receipt.
  const account = await createAccount(org);
  const wa = (value: Parameters<typeof change>[1]) =>
    signedPost(
      stack.base("messaging-webhook"),
      webhookBody([change(account, value)]),
      account.appSecret,
    );
  const inbound = await wa({
    contacts: [contact(digits, `${first} ${last}`)],
    messages: [textMessage(digits, `Hi, this is ${first}`)],
  });
  assertEquals(inbound.status, 200, await inbound.text());
  const [thread] = await sql()<{ id: string; member_id: string }[]>`
    select id, member_id from public.whatsapp_conversations where organization_id = ${org} and contact_phone = ${digits}`;
  assertEquals(thread!.member_id, id);
  await sql()`insert into public.whatsapp_messages (organization_id, conversation_id, account_id, provider_message_id,
                direction, type, text, status)
              values (${org}, ${
    thread!.id
  }, ${account.id}, ${`wamid.out.${tag}`}, 'outbound', 'text', 'Welcome!', 'sent')`;
  const receipt = await wa({
    statuses: [status(`wamid.out.${tag}`, "delivered", digits)],
  });
  assertEquals(receipt.status, 200, await receipt.text());
  await asConfigApi(
    t.adminClaims,
    (tx) => tx`select public.create_invitation(${email}, 'staff')`,
  );
  return {
    id,
    first,
    last,
    email,
    phone,
    digits,
    paymentId,
    terms: [
      email,
      phone,
      digits,
      first,
      last,
      paymentId,
      subscriptionId,
      chargeId,
    ],
  };
}

async function eraseAsAdmin(
  claims: Record<string, unknown>,
  memberId: string,
): Promise<string> {
  const [row] = await asConfigApi(
    claims,
    (tx) => tx<{ id: string }[]>`select public.erase_member(${memberId}) as id`,
  );
  return row!.id;
}

async function allHits(terms: string[]) {
  const out: Record<string, unknown> = {};
  for (const t of terms) {
    const hits = await rowsMentioning(t);
    if (hits.length) out[t] = hits;
  }
  return out;
}

Deno.test("an admin erases a member: nothing of theirs is left anywhere, other members are untouched, the history stays", async () => {
  const stack = await startInboundStack();
  const api = { base: stack.base("webhooks") };
  const endpoints: string[] = [];
  try {
    const a = await paymentTenant();
    const endpoint = await createEndpoint(
      a.organizationId,
      "http://127.0.0.1:9/hooks",
      EVENTS,
    );
    endpoints.push(endpoint.id);
    const tag = crypto.randomUUID().slice(0, 8);
    const person = await seedPerson(stack, a, `p${tag}`);
    const other = await seedPerson(stack, a, `o${tag}`);
    // A receiver answering one of the other member's deliveries echoed the person's address too: that
    // row is the other member's, so it is reported to the admin, not changed.
    const [echo] = await sql()<{ id: string }[]>`
      insert into public.webhook_delivery_attempts
        (organization_id, delivery_id, attempt_number, attempted_at, response_status, response_excerpt)
      select ${a.organizationId}, d.id, 1, now(), 500, ${`duplicate of ${person.email}`}
      from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
      where e.type = 'attendance.marked' and e.payload #>> '{data,row,member_id}' = ${other.id}
      returning delivery_id as id`;
    const before = await allHits(person.terms);
    assert(
      Object.keys(before).length === person.terms.length,
      "every term is stored somewhere before",
    );
    const otherBefore = await rowsAbout(other.terms);
    const [eventsRow] = await sql()<{ events: number }[]>`
      select count(*)::int as events from public.webhook_events where organization_id = ${a.organizationId}`;
    const events = eventsRow!.events;

    const token = await tokenFor(a.admin, a.organizationId);
    const found = await (await fetch(
      `${api.base}/members/search?q=${encodeURIComponent(person.email)}`,
      {
        headers: bearer(token),
      },
    )).json();
    assertEquals(found.data.map((m: { id: string }) => m.id), [person.id]);
    const byPhone = await (await fetch(
      `${api.base}/members/search?q=${encodeURIComponent("7700 " + person.digits.slice(6, 9))}`,
      {
        headers: bearer(token),
      },
    )).json();
    assertEquals(byPhone.data.map((m: { id: string }) => m.id), [person.id]);

    const started = Date.now();
    const res = await fetch(`${api.base}/erasures`, {
      method: "POST",
      headers: bearer(token),
      body: JSON.stringify({ member_id: person.id }),
    });
    assert(
      res.status === 201 || res.status === 202,
      `erasure accepted (${res.status})`,
    );
    const erasure = await res.json();
    // Within 60 s (here the request itself finishes it; the cron job would pick up the rest).
    let record = erasure;
    while (record.status !== "done" && Date.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 500));
      record = await (await fetch(`${api.base}/erasures/${erasure.id}`, {
        headers: bearer(token),
      })).json();
    }
    assertEquals(record.status, "done");
    assertEquals(
      await allHits(person.terms),
      {
        [person.email]: [{
          table: "public.webhook_delivery_attempts",
          column: "response_excerpt",
          rows: 1,
        }],
      },
      "no table holds the e-mail, phone, name or provider ids any more, but the other member's echo",
    );
    assertEquals(
      (await rowsHolding(person.id)).map((h) => `${h.table}.${h.column}`),
      ["public.member_erasures.member_id"],
      "the member's id is kept in the erasure's record alone",
    );
    assertEquals(
      await rowsAbout(other.terms),
      otherBefore,
      "the other member's rows are untouched",
    );
    // The echo is reported, by delivery, for the admin to look at.
    assertEquals(record.leftovers.webhook_deliveries, {
      count: 1,
      ids: [echo!.id],
    });

    // The record: who, when, how many of each kind; nothing that was erased.
    assertEquals(record.requested_by, a.admin.id);
    assertEquals(record.member_id, person.id);
    for (
      const kind of [
        "members",
        "attendance",
        "donations_unlinked",
        "whatsapp_conversations",
        "whatsapp_messages",
        "whatsapp_receipts",
        "inbound_webhook_log",
        "webhook_events",
        "webhook_deliveries_ended",
        "webhook_attempts",
        "mails",
        "invitations",
        "donations_pseudonymized",
        "recurring_donations_pseudonymized",
      ]
    ) {
      assert(
        record.counts[kind] > 0,
        `${kind} counted: ${JSON.stringify(record.counts)}`,
      );
    }
    // The payment and checkout notifications, the WhatsApp message and the receipt.
    assertEquals(record.counts.inbound_webhook_log, 4);
    // member.created, member.lost, two donations, attendance.
    assertEquals(record.counts.webhook_events, 5);
    const list = await (await fetch(`${api.base}/erasures`, { headers: bearer(token) }))
      .json();
    assertEquals(list.data.map((e: { id: string }) => e.id), [erasure.id]);

    // The history stays, without the data: ids, times, statuses and a marker.
    const redacted = await sql()<
      { type: string; payload: Record<string, unknown>; redacted_at: Date }[]
    >`
      select type, payload, redacted_at from public.webhook_events
      where organization_id = ${a.organizationId} and redacted_at is not null order by type`;
    assertEquals(redacted.map((e) => e.type), [
      "attendance.marked",
      "donation.recorded",
      "donation.recorded",
      "member.created",
      "member.lost",
    ]);
    for (const e of redacted) {
      assertEquals(Object.keys(e.payload).sort(), [
        "created_at",
        "data",
        "id",
        "organization_id",
        "redacted",
        "type",
      ]);
      assertEquals(e.payload.redacted, true);
    }
    const [nRow] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_events where organization_id = ${a.organizationId}`;
    const n = nRow!.n;
    assertEquals(n, events, "no event was deleted");
    // Deliveries still due were ended, not sent with a gutted body; the one delivered stays delivered.
    const deliveries = await sql()<
      { status: string; last_error: string | null }[]
    >`
      select d.status, d.last_error from public.webhook_deliveries d
      join public.webhook_events e on e.id = d.event_id
      where d.endpoint_id = ${endpoint.id} and e.redacted_at is not null order by d.status`;
    assertEquals(deliveries.map((d) => d.status), [
      "delivered",
      "permanently_failed",
      "permanently_failed",
      "permanently_failed",
      "permanently_failed",
    ]);
    assertEquals(
      deliveries[1]!.last_error,
      "not sent: the person this event is about was erased",
    );
    const logs = await sql()<
      {
        payload: unknown;
        status: string;
        provider: string;
        member_ids: string[];
      }[]
    >`
      select payload, status, provider, member_ids from public.inbound_webhook_log
      where organization_id = ${a.organizationId} and redacted_at is not null order by provider`;
    assertEquals(
      logs.map((l) => [l.provider, l.payload, l.status, l.member_ids]),
      [
        ["checkout", { redacted: true }, "processed", []],
        ["payments", { redacted: true }, "processed", []],
        ["whatsapp", { redacted: true }, "processed", []],
        ["whatsapp", { redacted: true }, "processed", []],
      ],
    );
    // Each of the other member's deliveries stays theirs, linked to them.
    const [kept] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.inbound_webhook_log
      where organization_id = ${a.organizationId} and redacted_at is null and member_ids = array[${other.id}]::uuid[]`;
    assertEquals(kept!.n, 4);
    // Samples for automation platforms show real bodies only, never the redacted stubs.
    const samples = await (await fetch(`${api.base}/samples/member.created?limit=10`, {
      headers: bearer(token),
    }))
      .json();
    assertEquals(
      samples.map((b: { data: { row: { id: string } } }) => b.data.row.id),
      [other.id],
    );
    // Nor can anyone send them again.
    const [ended] = await sql()<{ id: string }[]>`
      select d.id from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
      where d.endpoint_id = ${endpoint.id} and e.redacted_at is not null and d.status = 'permanently_failed' limit 1`;
    const again = await fetch(`${api.base}/deliveries/${ended!.id}/redeliver`, {
      method: "POST",
      headers: bearer(token),
    });
    assertEquals([again.status, (await again.json()).error.code], [
      409,
      "event_redacted",
    ]);
    const recovered = await (await fetch(`${api.base}/endpoints/${endpoint.id}/recover`, {
      method: "POST",
      headers: bearer(token),
      body: JSON.stringify({ since: "2000-01-01T00:00:00Z" }),
    })).json();
    const [stillEnded] = await sql()`select status from public.webhook_deliveries where id = ${ended!.id}`;
    assertEquals(
      stillEnded!.status,
      "permanently_failed",
      JSON.stringify(recovered),
    );
    // The money stays, anonymous: no member, and the provider's id as its keyed digest.
    const [donation] = await sql()<
      { member_id: string | null; gateway_payment_id: string }[]
    >`
      select member_id, gateway_payment_id from public.donations
      where gateway_payment_id = private.erased_gateway_id(${person.paymentId})`;
    assertEquals(donation!.member_id, null);
    assert(
      /^erased:[0-9a-f]{64}$/.test(donation!.gateway_payment_id),
      donation!.gateway_payment_id,
    );
  } finally {
    // Deliveries left due would be claimed by other files' dispatchers.
    await retireEndpoints(...endpoints);
    await stack.close();
  }
});

Deno.test("other organizations, staff, API keys and anonymous callers can neither erase nor find a member", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const [m] = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name, last_name, email, primary_phone)
      values (${a.organizationId}, 'Grace', 'Hopper', ${`grace.${crypto.randomUUID()}@example.org`}, '+1 650 555 0199')
      returning id, email`;
    const [emailRow] = await sql()<
      { email: string }[]
    >`select email from public.members where id = ${m!.id}`;
    const email = emailRow!.email;
    const adminB = await tokenFor(b.admin, b.organizationId);

    // Another organization's admin: the member answers exactly like an id that does not exist.
    const erase = async (
      token: string | null,
      memberId: string,
      headers: Record<string, string> = {},
    ) => {
      const res = await fetch(`${api.base}/erasures`, {
        method: "POST",
        headers: {
          ...(token ? bearer(token) : { "content-type": "application/json" }),
          ...headers,
        },
        body: JSON.stringify({ member_id: memberId }),
      });
      return [res.status, await res.json()];
    };
    const theirs = await erase(adminB, m!.id);
    const nobody = await erase(adminB, crypto.randomUUID());
    assertEquals(theirs, [404, {
      error: { code: "not_found", message: "No such member" },
    }]);
    assertEquals(theirs, nobody, "no existence oracle");
    const search = await (await fetch(
      `${api.base}/members/search?q=${encodeURIComponent(email)}`,
      {
        headers: bearer(adminB),
      },
    )).json();
    assertEquals(search.data, []);

    // Staff of the organization itself, its API key, nobody.
    const staffA = await tokenFor(a.staff, a.organizationId);
    const [staffStatus, staffBody] = await erase(staffA, m!.id);
    assertEquals([staffStatus, staffBody.error.code], [403, "admin_required"]);
    const staffSearch = await fetch(`${api.base}/members/search?q=Grace`, {
      headers: bearer(staffA),
    });
    assertEquals([staffSearch.status, (await staffSearch.json()).error.code], [
      403,
      "admin_required",
    ]);
    const key = await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(await tokenFor(a.admin, a.organizationId)),
      body: JSON.stringify({ name: "zap" }),
    })).json();
    const [keyStatus, keyBody] = await erase(null, m!.id, {
      "x-api-key": key.key,
    });
    assertEquals([keyStatus, keyBody.error.code], [403, "user_required"]);
    const [anonStatus] = await erase(null, m!.id);
    assertEquals(anonStatus, 401);
    // Directly in SQL too (PostgREST would expose the function): staff and other organizations are refused.
    for (const claims of [a.staffClaims, b.adminClaims]) {
      const err = await asConfigApi(
        claims,
        (tx) => tx`select public.erase_member(${m!.id})`,
      ).catch((e) => e);
      assert(["42501", "P0002"].includes(err.code), `refused (${err.code})`);
    }
    const [still] = await sql()`select id from public.members where id = ${m!.id}`;
    assert(still, "the member is still there");

    // An erasure of A is invisible to B.
    const adminA = await tokenFor(a.admin, a.organizationId);
    const done = await (await fetch(`${api.base}/erasures`, {
      method: "POST",
      headers: bearer(adminA),
      body: JSON.stringify({ member_id: m!.id }),
    })).json();
    const peek = await fetch(`${api.base}/erasures/${done.id}`, {
      headers: bearer(adminB),
    });
    assertEquals(peek.status, 404);
    await peek.body?.cancel();
    const listB = await (await fetch(`${api.base}/erasures`, { headers: bearer(adminB) }))
      .json();
    assertEquals(listB.data, []);
    const records = await asConfigApi(
      b.adminClaims,
      (tx) => tx`select id from public.member_erasures`,
    );
    assertEquals(records.length, 0);
  } finally {
    await api.close();
  }
});

Deno.test("a large erasure goes in bounded batches, shows its progress, and the cron job finishes it", async () => {
  const a = await createTenant();
  const endpoint = await createEndpoint(
    a.organizationId,
    "http://127.0.0.1:9/hooks",
    ["attendance.marked"],
  );
  const tag = crypto.randomUUID().slice(0, 8);
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email)
    values (${a.organizationId}, 'Many', ${`Visits${tag}`}, ${`many.${tag}@example.org`}) returning id`;
  await sql()`insert into public.attendance (organization_id, member_id, service_date)
              select ${a.organizationId}, ${m!.id}, current_date - g from generate_series(1, 1200) g`;
  const id = await eraseAsAdmin(a.adminClaims, m!.id);

  // A few batches of 100 by hand: the record shows where it is and what it did so far.
  let progress:
    | { stage: string; steps: number; counts: Record<string, number> }
    | undefined;
  for (let i = 0; i < 5; i++) {
    [{ progress }] = await sql()`select private.erasure_step(${id}, 100) as progress`;
  }
  assertEquals(progress!.steps, 5);
  assertEquals(progress!.stage, "events");
  assertEquals(progress!.counts.webhook_events, 300);
  assertEquals(progress!.counts.attendance, 1200);
  const [work] =
    await sql()`select count(*)::int as n from private.member_erasure_work where erasure_id = ${id}`;
  assertEquals(work!.n, 1, "the terms are kept while it runs");

  // The cron job's procedure finishes it, committing after every batch.
  const [job] = await sql()`select schedule, command from cron.job where jobname = 'person-erasure'`;
  assertEquals([job!.schedule, job!.command], [
    "* * * * *",
    "call private.erasure_run()",
  ]);
  await sql()`call private.erasure_run(100)`;
  const [done] = await sql()<
    {
      finished_at: Date | null;
      counts: Record<string, number>;
      steps: number;
    }[]
  >`
    select finished_at, counts, steps from public.member_erasures where id = ${id}`;
  assert(done!.finished_at, "finished");
  assertEquals(done!.counts.webhook_events, 1200);
  assertEquals(done!.counts.webhook_deliveries_ended, 1200);
  assert(done!.steps > 12, `in batches of at most 100 (${done!.steps} steps)`);
  const [left] =
    await sql()`select count(*)::int as n from private.member_erasure_work where erasure_id = ${id}`;
  assertEquals(left!.n, 0, "the terms are gone with the work");
  assertEquals(await rowsMentioning(`Visits${tag}`), []);
  await retireEndpoints(endpoint.id);
});

Deno.test("values staff can type as a member's ids cannot make an erasure take other people's history", async () => {
  const a = await createTenant();
  const endpoint = await createEndpoint(
    a.organizationId,
    "http://127.0.0.1:9/hooks",
    EVENTS,
  );
  const tag = crypto.randomUUID().slice(0, 8);
  const { phone, digits } = phoneNumber();
  const [victim, bystander] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (${a.organizationId}, 'Vic', ${`Tim${tag}`}, ${`vic.${tag}@example.org`}, null),
           (${a.organizationId}, 'Bea', ${`Stander${tag}`}, ${`bea.${tag}@example.org`}, ${phone})
    returning id`;
  await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency, source)
              values (${a.organizationId}, ${bystander!.id}, 2500, 'GBP', 'online')`;
  // Staff, as PostgREST lets them: threads and payments linked to the member whose erasure an admin will
  // do, keyed by values found in every payload (a word, an event type, an amount, another member's id,
  // the organization's id).
  await asUser(a.staffClaims, async (tx) => {
    await tx`insert into public.whatsapp_conversations (organization_id, contact_user_id, member_id, member_match)
             values (${a.organizationId}, 'e', ${victim!.id}, 'manual'),
                    (${a.organizationId}, 'redacted', ${victim!.id}, 'manual')`;
    // And the bystander's own number, as a thread linked to the victim.
    await tx`insert into public.whatsapp_conversations (organization_id, contact_phone, member_id, member_match)
             values (${a.organizationId}, '2500', ${victim!.id}, 'manual'),
                    (${a.organizationId}, ${digits}, ${victim!.id}, 'manual')`;
    await tx`insert into public.donations (organization_id, member_id, amount_minor, currency, source, gateway_payment_id)
             values (${a.organizationId}, ${victim!.id}, 1, 'GBP', 'manual', 'member.created'),
                    (${a.organizationId}, ${victim!.id}, 1, 'GBP', 'manual', ${bystander!.id}),
                    (${a.organizationId}, ${victim!.id}, 1, 'GBP', 'manual', ${a.organizationId})`;
  });
  // Mail the organization sent before, already erased once: a term matching those must not loop.
  await sql()`insert into private.mail_outbox (organization_id, kind, recipient, data, status, next_attempt_at)
              select ${a.organizationId}, 'invitation', 'redacted', '{"redacted": true}', 'cancelled', null
              from generate_series(1, 120)`;
  const before = await sql()<{ id: string; payload: unknown }[]>`
    select id, payload from public.webhook_events
    where organization_id = ${a.organizationId}
      and (payload #>> '{data,row,id}' = ${bystander!.id} or payload #>> '{data,row,member_id}' = ${
    bystander!.id
  })
    order by id`;
  assertEquals(
    before.length,
    2,
    "the bystander's member.created and donation.recorded",
  );
  assert(
    before.some((e) => JSON.stringify(e.payload).includes(digits)),
    "one names the bystander's number",
  );
  const [bystanderThread] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.whatsapp_conversations where contact_phone = ${digits}`;
  assertEquals(bystanderThread!.n, 1);

  const id = await eraseAsAdmin(a.adminClaims, victim!.id);
  let progress: { stage: string; steps: number } | undefined;
  for (let i = 0; i < 40 && progress?.stage !== "done"; i++) {
    [{ progress }] = await sql()`select private.erasure_step(${id}, 50) as progress`;
  }
  assertEquals(progress!.stage, "done", "the erasure ends");
  const after = await sql()<{ id: string; payload: unknown }[]>`
    select id, payload from public.webhook_events where id = any(${
    before.map((e) => e.id)
  }::uuid[]) order by id`;
  assertEquals(after, before, "the bystander's events are untouched");
  const [ended] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
    where d.endpoint_id = ${endpoint.id} and e.redacted_at is null and d.status = 'permanently_failed'`;
  assertEquals(ended!.n, 0, "no delivery of anyone else was ended");
  const [victimEvents] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.webhook_events
    where organization_id = ${a.organizationId} and redacted_at is not null`;
  assert(victimEvents!.n >= 1, "the victim's own events are redacted");
  await retireEndpoints(endpoint.id);
});

Deno.test("an organization erasing members by the thousand cannot take every other one's turns: 20 run at once", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const members = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name, last_name)
      select ${a.organizationId}, 'Many', 'M' || g from generate_series(1, 21) g returning id`;
    // Twenty started in SQL (as PostgREST would let the admin), none of their batches run yet.
    for (const m of members.slice(0, 20)) {
      await eraseAsAdmin(a.adminClaims, m.id);
    }
    const err = await eraseAsAdmin(a.adminClaims, members[20]!.id).catch((e) => e);
    assertEquals(err.code, "54000");
    const res = await fetch(`${api.base}/erasures`, {
      method: "POST",
      headers: bearer(await tokenFor(a.admin, a.organizationId)),
      body: JSON.stringify({ member_id: members[20]!.id }),
    });
    assertEquals([res.status, (await res.json()).error.code], [
      429,
      "too_many_erasures",
    ]);
    const [kept] = await sql()`select id from public.members where id = ${members[20]!.id}`;
    assert(kept, "the 21st member is not erased");
    // Another organization erases as usual.
    const [other] = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name, last_name) values (${b.organizationId}, 'One', 'B')
      returning id`;
    const theirs = await fetch(`${api.base}/erasures`, {
      method: "POST",
      headers: bearer(await tokenFor(b.admin, b.organizationId)),
      body: JSON.stringify({ member_id: other!.id }),
    });
    assertEquals(theirs.status, 201);
    await theirs.body?.cancel();
    // Once they finish, the organization erases again.
    await sql()`call private.erasure_run()`;
    assertEquals(
      typeof (await eraseAsAdmin(a.adminClaims, members[20]!.id)),
      "string",
    );
    await sql()`call private.erasure_run()`;
  } finally {
    await api.close();
  }
});

Deno.test("a phone or e-mail shared with another member is not a search key: the family's data stays", async () => {
  const a = await createTenant();
  const tag = crypto.randomUUID().slice(0, 8);
  const { phone, digits } = phoneNumber();
  const [person] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name, email, primary_phone)
    values (${a.organizationId}, 'Sam', ${`Shared${tag}`}, ${`sam.${tag}@example.org`}, ${phone}) returning id`;
  await sql()`insert into public.members (organization_id, first_name, last_name, email, primary_phone)
              values (${a.organizationId}, 'Kim', ${`Shared${tag}`}, ${`family.${tag}@example.org`}, ${phone})`;
  // The family's thread (two members share the number: matched to neither).
  await sql()`insert into public.whatsapp_conversations (organization_id, contact_phone, member_match)
              values (${a.organizationId}, ${digits}, 'ambiguous')`;
  await sql()`insert into public.inbound_webhook_log (organization_id, provider, idempotency_key, payload, body_sha256,
                signature_valid, status)
              values (${a.organizationId}, 'whatsapp', ${`w${tag}`}, ${
    j({ messages: [{ from: digits }] })
  }::jsonb,
                sha256(${tag}::bytea), true, 'processed')`;
  const id = await eraseAsAdmin(a.adminClaims, person!.id);
  await sql()`call private.erasure_run()`;
  const [done] = await sql()`select finished_at from public.member_erasures where id = ${id}`;
  assert(done!.finished_at);
  assertEquals(await rowsMentioning(`sam.${tag}@example.org`), []);
  const shared = (await rowsMentioning(digits)).map((h) => h.table).sort();
  assertEquals(
    shared,
    [
      "public.inbound_webhook_log",
      "public.members",
      "public.members",
      "public.whatsapp_conversations",
    ].filter((t, i, all) => all.indexOf(t) === i),
    "the family's number and thread stay",
  );
});

Deno.test("an attempt in flight when its event is redacted: the erasure waits for its result and removes its excerpt", async () => {
  const a = await createTenant();
  const endpoint = await createEndpoint(
    a.organizationId,
    "http://127.0.0.1:9/hooks",
    ["member.created"],
  );
  const email = `inflight.${crypto.randomUUID().slice(0, 8)}@example.org`;
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, email) values (${a.organizationId}, 'Flight', ${email})
    returning id`;
  const [d] = await sql()<
    { id: string }[]
  >`select id from public.webhook_deliveries where endpoint_id = ${endpoint.id}`;
  // A dispatcher holds it: its lease is live.
  await sql()`insert into private.webhook_leases (delivery_id, endpoint_id, organization_id, token, leased_until)
              values (${
    d!.id
  }, ${endpoint.id}, ${a.organizationId}, gen_random_uuid(), now() + interval '40 seconds')`;
  const id = await eraseAsAdmin(a.adminClaims, m!.id);
  await sql()`call private.erasure_run()`;
  const [waiting] = await sql()`select stage, finished_at from public.member_erasures where id = ${id}`;
  assertEquals([waiting!.stage, waiting!.finished_at], ["settle", null]);
  // The attempt's result arrives (the receiver echoed the body), and its lease ends.
  await sql()`insert into public.webhook_delivery_attempts
                (organization_id, delivery_id, attempt_number, attempted_at, response_status, response_excerpt,
                 response_headers)
              values (${a.organizationId}, ${d!.id}, 1, now(), 400, ${`bad: ${email}`},
                      ${JSON.stringify({ "x-rejected": email })}::jsonb)`;
  await sql()`delete from private.webhook_leases where delivery_id = ${d!.id}`;
  await sql()`call private.erasure_run()`;
  const [finished] = await sql()`select stage from public.member_erasures where id = ${id}`;
  assertEquals(finished!.stage, "done");
  assertEquals(await rowsMentioning(email), []);
  await retireEndpoints(endpoint.id);
});

Deno.test("the leftover report reads at most 4 MiB of bodies a batch, and changes nothing it reads", async () => {
  const a = await createTenant();
  const email = `big.${crypto.randomUUID().slice(0, 8)}@example.org`;
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, email) values (${a.organizationId}, 'Big', ${email})
    returning id`;
  // Five deliveries of 1.5 MiB each, linked to no one; the last names the member.
  await sql()`insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload,
                body_sha256, body_bytes, signature_valid, status, received_at)
              select ${a.organizationId}, 'payments', 'payment.captured', 'big-' || g || ${email},
                     jsonb_build_object('filler', repeat('x', 1572864), 'email', case when g = 5 then ${email} end),
                     sha256(('big-' || g || ${email})::bytea), 1572864, true, 'processed',
                     now() - make_interval(mins => g)
              from generate_series(1, 5) g`;
  const before = await sql()<{ id: string; payload: string }[]>`
    select id, payload::text as payload from public.inbound_webhook_log where organization_id = ${a.organizationId}
    order by id`;
  const id = await eraseAsAdmin(a.adminClaims, m!.id);
  const parts: string[] = [];
  let progress: {
    stage: string;
    leftovers: Record<string, { count: number; ids: string[] }>;
  } | undefined;
  for (let i = 0; i < 40 && progress?.stage !== "done"; i++) {
    [{ progress }] = await sql()`select private.erasure_step(${id}, 500) as progress`;
    const [work] = await sql()<{ part: string | null }[]>`
      select report_part as part from private.member_erasure_work where erasure_id = ${id}`;
    if (progress!.stage === "leftovers" && work?.part === "inbound_log") {
      parts.push(work.part);
    }
  }
  assertEquals(progress!.stage, "done");
  // 7.5 MiB of bodies: three rows start within the first batch's 4 MiB, two in the second.
  assertEquals(
    parts.length,
    1,
    "one batch stayed in the log part, the next finished it",
  );
  assertEquals(progress!.leftovers.inbound_webhook_log?.count, 1);
  const after = await sql()<{ id: string; payload: string }[]>`
    select id, payload::text as payload from public.inbound_webhook_log where organization_id = ${a.organizationId}
    order by id`;
  assertEquals(after, before, "reported, not changed");
});

Deno.test("teardown", async () => {
  await closeSql();
});
