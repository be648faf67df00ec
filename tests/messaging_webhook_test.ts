// messaging-webhook against the run's real PostgreSQL, with the test playing the WhatsApp gateway:
// handshake, signatures, threads and member matching, message types, receipts, concurrency and failures.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createOrganization, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  change,
  contact,
  createAccount,
  createMember,
  newMessageId,
  newPhone,
  signedPost,
  status,
  type TestAccount,
  textMessage,
  unixNow,
  webhookBody,
} from "./helpers/whatsapp.ts";
import { createApp } from "../supabase/functions/messaging-webhook/app.ts";
import {
  FAILURES_PER_CLIENT,
  FAILURES_PER_URL,
  WINDOW_MS,
} from "../supabase/functions/messaging-webhook/handshake_limit.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";

type Server = Awaited<ReturnType<typeof serveFunction>>;

/** Serves the function against `dbUrl` for the duration of `fn`. */
async function withServer(fn: (s: Server) => Promise<void>, dbUrl = testDbUrl()): Promise<void> {
  const deps = { config: loadConfig({ SUPABASE_DB_URL: dbUrl }), sql: createSql(dbUrl, { max: 10 }) };
  const server = await serveFunction("messaging-webhook", createApp(deps));
  try {
    await fn(server);
  } finally {
    await server.close();
    await deps.sql.end({ timeout: 1 });
  }
}

async function newAccount(opts: { appSecret?: string; verifyToken?: string } = {}): Promise<TestAccount> {
  return await createAccount(await createOrganization(), opts);
}

async function threadsOf(organizationId: string) {
  return await sql()<
    {
      id: string;
      contact_phone: string | null;
      contact_user_id: string | null;
      contact_name: string | null;
      member_id: string | null;
      member_match: string;
      last_message_at: Date | null;
    }[]
  >`select id, contact_phone, contact_user_id, contact_name, member_id, member_match, last_message_at
    from public.whatsapp_conversations where organization_id = ${organizationId} order by created_at`;
}

async function messagesOf(organizationId: string) {
  return await sql()<
    {
      conversation_id: string;
      provider_message_id: string;
      direction: string;
      type: string;
      text: string | null;
      content: Record<string, unknown> | null;
      status: string;
      error: unknown;
      sender_phone: string | null;
      sender_user_id: string | null;
      sent_at: Date;
      raw: Record<string, unknown>;
    }[]
  >`select conversation_id, provider_message_id, direction, type, text, content, status, error, sender_phone,
           sender_user_id, sent_at, raw
    from public.whatsapp_messages where organization_id = ${organizationId} order by sent_at, provider_message_id`;
}

async function countAll(organizationId: string) {
  const [row] = await sql()<{ threads: number; messages: number; receipts: number }[]>`
    select (select count(*)::int from public.whatsapp_conversations where organization_id = ${organizationId}) threads,
           (select count(*)::int from public.whatsapp_messages where organization_id = ${organizationId}) messages,
           (select count(*)::int from public.whatsapp_message_receipts where organization_id = ${organizationId}) receipts`;
  return row!;
}

Deno.test("GET handshake echoes hub.challenge as text only for a known verify token", async () => {
  const account = await newAccount();
  await withServer(async ({ base }) => {
    const q = (mode: string, token: string, challenge = "1158201444") =>
      `${base}?hub.mode=${mode}&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=${challenge}`;

    const ok = await fetch(q("subscribe", account.verifyToken));
    assertEquals(ok.status, 200);
    assert(ok.headers.get("content-type")?.startsWith("text/plain"), "text/plain");
    assertEquals(await ok.text(), "1158201444");

    for (
      const url of [
        q("subscribe", account.verifyToken + "x"),
        q("subscribe", account.verifyToken.slice(0, -1)),
        q("unsubscribe", account.verifyToken),
        `${base}?hub.mode=subscribe&hub.challenge=1`,
        base,
      ]
    ) {
      const res = await fetch(url);
      assertEquals(res.status, 403, url);
      assertEquals((await res.json()).error.code, "verification_failed");
    }
    const noChallenge = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=${account.verifyToken}`);
    assertEquals(noChallenge.status, 400);
    await noChallenge.body?.cancel();
  });
});

const handshakeUrl = (base: string, token: string, challenge = "1158201444") =>
  `${base}?hub.mode=subscribe&hub.verify_token=${encodeURIComponent(token)}&hub.challenge=${challenge}`;
const from = (address: string) => ({ headers: { "x-forwarded-for": `${address}, 10.0.0.1` } });

Deno.test("GET handshake: a client guessing verify tokens is stopped after 10 wrong ones; Meta's right token still verifies", async () => {
  const account = await newAccount();
  await withServer(async ({ base }) => {
    for (let i = 0; i < FAILURES_PER_CLIENT; i++) {
      const guess = await fetch(handshakeUrl(base, `guess-${i}-${crypto.randomUUID()}`), from("203.0.113.7"));
      assertEquals(guess.status, 403, `guess ${i + 1}`);
      await guess.body?.cancel();
    }
    // The guesser is stopped, and while stopped even a right token tells it nothing.
    for (const token of ["one-more-guess", account.verifyToken]) {
      const stopped = await fetch(handshakeUrl(base, token), from("203.0.113.7"));
      assertEquals(stopped.status, 429, token);
      const retry = Number(stopped.headers.get("retry-after"));
      assert(retry > 0 && retry <= WINDOW_MS / 1000, `Retry-After ${retry}`);
      assertEquals((await stopped.json()).error.code, "too_many_attempts");
    }
    const meta = await fetch(handshakeUrl(base, account.verifyToken), from("198.51.100.20"));
    assertEquals(
      [meta.status, await meta.text()],
      [200, "1158201444"],
      "another client's right token verifies",
    );
  });
});

Deno.test("GET handshake: guesses from many addresses are bounded per URL; an organization's own URL answers only its tokens", async () => {
  const a = await newAccount();
  const b = await newAccount();
  await withServer(async ({ base }) => {
    for (let i = 0; i < FAILURES_PER_URL; i++) {
      const guess = await fetch(
        handshakeUrl(base, `guess-${i}`),
        from(`192.0.2.${i % 250}${i >= 250 ? "x" : ""}-${i}`),
      );
      assertEquals(guess.status, 403, `guess ${i + 1}`);
      await guess.body?.cancel();
    }
    const fresh = await fetch(handshakeUrl(base, a.verifyToken), from("198.51.100.99"));
    assertEquals(fresh.status, 429, "the shared URL is closed to guessing from any address for a while");
    await fresh.body?.cancel();

    // Each organization's own callback URL: only its own registrations' tokens, unaffected by the above.
    const own = await fetch(
      handshakeUrl(`${base}/${a.organizationId}`, a.verifyToken),
      from("198.51.100.20"),
    );
    assertEquals([own.status, await own.text()], [200, "1158201444"]);
    const other = await fetch(
      handshakeUrl(`${base}/${a.organizationId}`, b.verifyToken),
      from("198.51.100.21"),
    );
    assertEquals(other.status, 403, "another organization's token says nothing at this URL");
    await other.body?.cancel();
    const [row] = await sql()`select handshake_at from public.messaging_accounts where id = ${b.id}`;
    assertEquals(row!.handshake_at, null, "and marks nothing there");
    const malformed = await fetch(handshakeUrl(`${base}/not-a-uuid`, a.verifyToken));
    assertEquals(malformed.status, 404);
    await malformed.body?.cancel();
  });
});

Deno.test("GET handshake: a near miss is refused exactly as a far one (the token is compared by digest, then in constant time)", async () => {
  const account = await newAccount({ verifyToken: `vt_${"k".repeat(40)}` });
  await withServer(async ({ base }) => {
    const t = account.verifyToken;
    const answers = new Set<string>();
    for (
      const guess of [
        t.slice(0, -1),
        `${t}k`,
        `x${t.slice(1)}`,
        `${t.slice(0, 20)}x${t.slice(21)}`,
        "vt_short!",
      ]
    ) {
      const res = await fetch(handshakeUrl(base, guess));
      answers.add(`${res.status} ${await res.text()}`);
    }
    assertEquals(answers.size, 1, [...answers].join(" | "));
    assert([...answers][0]!.startsWith("403 "));
  });
});

Deno.test("POST to an organization's own URL applies only that organization's registrations", async () => {
  const a = await newAccount();
  const b = await newAccount();
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const body = webhookBody([change(a, { messages: [textMessage(phone, "to A's URL")] })]);
    const elsewhere = await signedPost(`${base}/${b.organizationId}`, body, a.appSecret);
    assertEquals(elsewhere.status, 401, "B's URL does not route A's number");
    await elsewhere.body?.cancel();
    const own = await signedPost(`${base}/${a.organizationId}`, body, a.appSecret);
    assertEquals(own.status, 200);
    assertEquals((await own.json()).messages.stored, 1);
    assertEquals((await messagesOf(a.organizationId)).map((m) => m.text), ["to A's URL"]);
  });
});

Deno.test("a text message creates a thread matched to the member whose stored number is formatted", async () => {
  const account = await newAccount();
  const phone = newPhone(); // e.g. 15551234567
  const formatted = `+${phone.slice(0, 1)} (${phone.slice(1, 4)}) ${phone.slice(4, 7)}-${phone.slice(7)}`;
  const memberId = await createMember(account.organizationId, formatted, "Grace");
  await createMember(account.organizationId, newPhone(), "Someone else");
  const first = textMessage(phone, "Hello pastor", { timestamp: unixNow(-60) });
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody([change(account, { contacts: [contact(phone, "Grace H")], messages: [first] })]),
      account.appSecret,
    );
    assertEquals(res.status, 200);
    assertEquals((await res.json()).messages, { stored: 1, duplicates: 0 });

    const [thread] = await threadsOf(account.organizationId);
    assertEquals(thread!.contact_phone, phone);
    assertEquals(thread!.member_id, memberId);
    assertEquals(thread!.member_match, "matched");
    assertEquals(thread!.contact_name, "Grace H");

    // The next message goes into the same thread and moves its last message time.
    const second = textMessage(phone, "Are we meeting?");
    const res2 = await signedPost(
      base,
      webhookBody([change(account, { contacts: [contact(phone, "Grace Hopper")], messages: [second] })]),
      account.appSecret,
    );
    assertEquals(res2.status, 200);
    await res2.body?.cancel();
    const threads = await threadsOf(account.organizationId);
    assertEquals(threads.length, 1);
    assertEquals(threads[0]!.contact_name, "Grace Hopper");
    assertEquals(threads[0]!.last_message_at!.getTime(), Number(second.timestamp) * 1000);

    const messages = await messagesOf(account.organizationId);
    assertEquals(messages.map((m) => m.text), ["Hello pastor", "Are we meeting?"]);
    for (const m of messages) {
      assertEquals(m.conversation_id, thread!.id);
      assertEquals(m.direction, "inbound");
      assertEquals(m.status, "received");
      assertEquals(m.sender_phone, phone);
    }
    assertEquals(messages[0]!.provider_message_id, first.id);
    assertEquals(messages[0]!.sent_at.getTime(), Number(first.timestamp) * 1000);
    assertEquals((messages[0]!.raw.message as { id: string }).id, first.id);
  });
});

Deno.test("a redelivered message (same id) is stored once", async () => {
  const account = await newAccount();
  const phone = newPhone();
  const body = webhookBody([change(account, { messages: [textMessage(phone, "once")] })]);
  await withServer(async ({ base }) => {
    const a = await signedPost(base, body, account.appSecret);
    const b = await signedPost(base, body, account.appSecret);
    assertEquals((await a.json()).messages, { stored: 1, duplicates: 0 });
    assertEquals((await b.json()).messages, { stored: 0, duplicates: 1 });
    assertEquals(await countAll(account.organizationId), { threads: 1, messages: 1, receipts: 0 });
  });
});

Deno.test("concurrent first messages from a new number end in one thread", async () => {
  const account = await newAccount();
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const bodies = Array.from(
      { length: 12 },
      (_, i) =>
        webhookBody([
          change(account, { contacts: [contact(phone, "New")], messages: [textMessage(phone, `m${i}`)] }),
        ]),
    );
    const responses = await Promise.all(bodies.map((b) => signedPost(base, b, account.appSecret)));
    for (const r of responses) {
      assertEquals(r.status, 200);
      await r.body?.cancel();
    }
    const threads = await threadsOf(account.organizationId);
    assertEquals(threads.length, 1);
    const messages = await messagesOf(account.organizationId);
    assertEquals(messages.length, 12);
    assert(messages.every((m) => m.conversation_id === threads[0]!.id), "all in the one thread");

    // The same for a sender known only by a business-scoped user id.
    const userId = `BR.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const byId = Array.from({ length: 8 }, (_, i) =>
      webhookBody([change(account, {
        contacts: [{ profile: { name: "Anon" }, user_id: userId }],
        messages: [{
          id: newMessageId(),
          from_user_id: userId,
          timestamp: unixNow(),
          type: "text",
          text: { body: `u${i}` },
        }],
      })]));
    const byIdResponses = await Promise.all(byId.map((b) => signedPost(base, b, account.appSecret)));
    for (const r of byIdResponses) {
      assertEquals(r.status, 200);
      await r.body?.cancel();
    }
    const idThreads = (await threadsOf(account.organizationId)).filter((t) => t.contact_user_id === userId);
    assertEquals(idThreads.length, 1);
    assertEquals(
      (await messagesOf(account.organizationId)).filter((m) => m.conversation_id === idThreads[0]!.id).length,
      8,
    );
  });
});

Deno.test("a number shared by several members attaches to none; other organizations' members never match", async () => {
  const account = await newAccount();
  const other = await createOrganization();
  const shared = newPhone();
  await createMember(account.organizationId, `+${shared}`, "Husband");
  await createMember(account.organizationId, `${shared.slice(0, 4)} ${shared.slice(4)}`, "Wife");
  const onlyElsewhere = newPhone();
  await createMember(other, onlyElsewhere, "Not ours");
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody([change(account, {
        contacts: [contact(shared, "Family"), contact(onlyElsewhere, "Stranger")],
        messages: [textMessage(shared, "hi from us"), textMessage(onlyElsewhere, "hi")],
      })]),
      account.appSecret,
    );
    assertEquals(res.status, 200);
    await res.body?.cancel();
    const threads = await threadsOf(account.organizationId);
    const family = threads.find((t) => t.contact_phone === shared)!;
    assertEquals([family.member_id, family.member_match], [null, "ambiguous"]);
    const stranger = threads.find((t) => t.contact_phone === onlyElsewhere)!;
    assertEquals([stranger.member_id, stranger.member_match], [null, "none"]);
    assertEquals(stranger.contact_name, "Stranger");

    // A member added later is matched on the thread's next message.
    const later = await createMember(account.organizationId, `00-${onlyElsewhere}`.slice(3), "Joined");
    const again = await signedPost(
      base,
      webhookBody([change(account, { messages: [textMessage(onlyElsewhere, "me again")] })]),
      account.appSecret,
    );
    await again.body?.cancel();
    const updated = (await threadsOf(account.organizationId)).find((t) => t.contact_phone === onlyElsewhere)!;
    assertEquals([updated.member_id, updated.member_match], [later, "matched"]);
  });
});

Deno.test("non-text messages keep their type and payload; system messages need no contacts", async () => {
  const account = await newAccount();
  const phone = newPhone();
  const newNumber = newPhone();
  const image = {
    from: phone,
    id: newMessageId(),
    timestamp: unixNow(-3),
    type: "image",
    image: { caption: "Sunday flyer", mime_type: "image/jpeg", sha256: "abc=", id: "1234567890" },
  };
  const location = {
    from: phone,
    id: newMessageId(),
    timestamp: unixNow(-2),
    type: "location",
    location: { latitude: 12.97, longitude: 77.59, name: "Church hall" },
  };
  const unsupported = {
    from: phone,
    id: newMessageId(),
    timestamp: unixNow(-1),
    type: "unsupported",
    errors: [{ code: 131051, title: "Message type unknown" }],
  };
  const system = {
    from: phone,
    id: newMessageId(),
    timestamp: unixNow(),
    type: "system",
    system: {
      body: `User A changed from ${phone} to ${newNumber}`,
      wa_id: newNumber,
      type: "user_changed_number",
    },
  };
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody(
        [change(account, { contacts: [contact(phone, "A")], messages: [image, location, unsupported] })],
        [change(account, { messages: [system] })],
      ),
      account.appSecret,
    );
    assertEquals(res.status, 200);
    assertEquals((await res.json()).messages.stored, 4);
    const messages = await messagesOf(account.organizationId);
    assertEquals(messages.map((m) => [m.type, m.text]), [
      ["image", "Sunday flyer"],
      ["location", "Church hall"],
      ["unsupported", null],
      ["system", system.system.body],
    ]);
    assertEquals(messages[0]!.content, image.image);
    assertEquals(messages[1]!.content, location.location);
    assertEquals(messages[3]!.content, system.system);
    assertEquals((messages[2]!.raw.message as { errors: unknown }).errors, unsupported.errors);
    assertEquals(new Set(messages.map((m) => m.conversation_id)).size, 1, "all in the sender's thread");
  });
});

Deno.test("a member stored in national format matches through the organization's default country", async () => {
  // +44 7911 123456 typed as a UK member would be: 07911 123456.
  const international = "447911123456";
  const cases: [string | null, string][] = [["GB", "matched"], ["US", "none"], [null, "none"]];
  await withServer(async ({ base }) => {
    for (const [country, expected] of cases) {
      const account = await newAccount();
      await sql()`
        insert into public.organization_settings (organization_id, default_country)
        values (${account.organizationId}, ${country})`;
      const memberId = await createMember(account.organizationId, "07911 123456", "Nigel");
      const res = await signedPost(
        base,
        webhookBody([change(account, { messages: [textMessage(international, "Hello from the UK")] })]),
        account.appSecret,
      );
      assertEquals(res.status, 200);
      await res.body?.cancel();
      const [thread] = await threadsOf(account.organizationId);
      assertEquals([thread!.member_match, thread!.member_id], [
        expected,
        expected === "matched" ? memberId : null,
      ], `default country ${country}`);
    }
  });
});

Deno.test('a "number changed" system message moves the thread to the new number', async () => {
  const account = await newAccount();
  const oldPhone = newPhone();
  const newNumber = newPhone();
  const memberId = await createMember(account.organizationId, oldPhone, "Moving");
  const changed = (from: string, to: string) => ({
    from,
    id: newMessageId(),
    timestamp: unixNow(-5),
    type: "system",
    system: { body: `Moving changed from ${from} to ${to}`, wa_id: to, type: "user_changed_number" },
  });
  await withServer(async ({ base }) => {
    const post = async (messages: Record<string, unknown>[]) => {
      const res = await signedPost(base, webhookBody([change(account, { messages })]), account.appSecret);
      assertEquals(res.status, 200);
      await res.body?.cancel();
    };
    await post([textMessage(oldPhone, "before the change", { timestamp: unixNow(-10) })]);
    const [before] = await threadsOf(account.organizationId);
    await post([changed(oldPhone, newNumber)]);
    await post([textMessage(newNumber, "after the change")]);
    const threads = await threadsOf(account.organizationId);
    assertEquals(threads.map((t) => [t.id, t.contact_phone, t.member_id]), [[
      before!.id,
      newNumber,
      memberId,
    ]]);
    const messages = await messagesOf(account.organizationId);
    assertEquals(messages.map((m) => [m.type, m.sender_phone]), [
      ["text", oldPhone],
      ["system", oldPhone],
      ["text", newNumber],
    ]);
    assert(messages.every((m) => m.conversation_id === before!.id), "one thread");
  });
});

Deno.test("text PostgreSQL cannot hold (NUL, unpaired surrogates) is stored with U+FFFD instead", async () => {
  const account = await newAccount();
  const phone = newPhone();
  // Written by hand: JSON.stringify would not produce the escapes exactly as a gateway may send them.
  const raw = JSON.stringify(webhookBody([change(account, {
    contacts: [contact(phone, "NAME")],
    messages: [textMessage(phone, "BODY")],
  })])).replace("NAME", "Nul\\u0000Name").replace("BODY", "a\\u0000b\\ud800c");
  await withServer(async ({ base }) => {
    const res = await signedPost(base, raw, account.appSecret);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    const [message] = await messagesOf(account.organizationId);
    assertEquals(message!.text, "a\uFFFDb\uFFFDc");
    assertEquals((message!.content as { body: string }).body, "a\uFFFDb\uFFFDc");
    assertEquals((await threadsOf(account.organizationId))[0]!.contact_name, "Nul\uFFFDName");
  });
});

Deno.test("senders known only by a business-scoped user id get their own thread, adopted once the phone shows", async () => {
  const account = await newAccount();
  const userId = `US.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const phone = newPhone();
  const noFrom = {
    id: newMessageId(),
    from_user_id: userId,
    timestamp: unixNow(-2),
    type: "text",
    text: { body: "a" },
  };
  const fromIsId = textMessage(userId, "b", { timestamp: unixNow(-1) });
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody([change(account, {
        contacts: [{ profile: { name: "Hidden", username: "@hidden" }, user_id: userId }],
        messages: [noFrom, fromIsId],
      })]),
      account.appSecret,
    );
    assertEquals(res.status, 200);
    await res.body?.cancel();
    let threads = await threadsOf(account.organizationId);
    assertEquals(threads.length, 1);
    assertEquals([threads[0]!.contact_phone, threads[0]!.contact_user_id, threads[0]!.member_match], [
      null,
      userId,
      "none",
    ]);

    // The phone becomes visible: the same thread now carries it, and members match by it.
    const memberId = await createMember(account.organizationId, `+${phone}`);
    const withPhone = textMessage(phone, "c", { from_user_id: userId });
    const res2 = await signedPost(
      base,
      webhookBody([
        change(account, { contacts: [contact(phone, "Visible", userId)], messages: [withPhone] }),
      ]),
      account.appSecret,
    );
    assertEquals(res2.status, 200);
    await res2.body?.cancel();
    threads = await threadsOf(account.organizationId);
    assertEquals(threads.length, 1);
    assertEquals([threads[0]!.contact_phone, threads[0]!.contact_user_id], [phone, userId]);
    assertEquals(threads[0]!.member_id, memberId);
    const messages = await messagesOf(account.organizationId);
    assertEquals(messages.map((m) => [m.text, m.sender_phone, m.sender_user_id]), [
      ["a", null, userId],
      ["b", null, userId],
      ["c", phone, userId],
    ]);
  });
});

/** An outbound message as the sending side records it (server side). */
async function recordOutbound(account: TestAccount, phone: string, providerMessageId: string) {
  const [thread] = await sql()<{ id: string }[]>`
    insert into public.whatsapp_conversations (organization_id, contact_phone) values (${account.organizationId}, ${phone})
    on conflict (organization_id, contact_phone) do update set contact_phone = excluded.contact_phone
    returning id`;
  await sql()`
    insert into public.whatsapp_messages (organization_id, conversation_id, account_id, provider_message_id, direction, type, text, status)
    values (${account.organizationId}, ${
    thread!.id
  }, ${account.id}, ${providerMessageId}, 'outbound', 'text', 'Welcome!', 'pending')`;
}

async function statusOf(account: TestAccount, providerMessageId: string) {
  const [row] = await sql()<{ status: string; error: unknown }[]>`
    select status, error from public.whatsapp_messages
    where organization_id = ${account.organizationId} and provider_message_id = ${providerMessageId}`;
  return row;
}

Deno.test("receipts move a message's status forward only; exact duplicates are ignored; failed keeps its error", async () => {
  const account = await newAccount();
  const phone = newPhone();
  const id = newMessageId();
  const failing = newMessageId();
  await recordOutbound(account, phone, id);
  await recordOutbound(account, phone, failing);
  await withServer(async ({ base }) => {
    const send = async (...statuses: Record<string, unknown>[]) => {
      const res = await signedPost(base, webhookBody([change(account, { statuses })]), account.appSecret);
      assertEquals(res.status, 200);
      return (await res.json()).receipts;
    };
    assertEquals(await send(status(id, "delivered", phone)), { applied: 1, waiting: 0, duplicates: 0 });
    assertEquals((await statusOf(account, id))!.status, "delivered");
    // Late "sent" does not move it back; the exact same "delivered" again is a duplicate.
    assertEquals(await send(status(id, "sent", phone), status(id, "delivered", phone)), {
      applied: 1,
      waiting: 0,
      duplicates: 1,
    });
    assertEquals((await statusOf(account, id))!.status, "delivered");
    await send(status(id, "read", phone));
    assertEquals((await statusOf(account, id))!.status, "read");
    // A failure reported after it was read is recorded in the history but does not undo "read".
    await send(status(id, "failed", phone, { errors: [{ code: 131000, title: "Something went wrong" }] }));
    assertEquals(await statusOf(account, id), { status: "read", error: null });

    const errors = [{ code: 131026, title: "Message undeliverable", message: "Message undeliverable" }];
    await send(status(failing, "sent", phone), status(failing, "failed", phone, { errors }));
    assertEquals(await statusOf(account, failing), { status: "failed", error: errors });

    const history = await sql()<{ status: string }[]>`
      select status from public.whatsapp_message_receipts
      where organization_id = ${account.organizationId} and provider_message_id = ${id} order by status`;
    assertEquals(history.map((h) => h.status), ["delivered", "failed", "read", "sent"]);
  });
});

Deno.test("a receipt for a message not stored yet waits and is applied when the message is recorded", async () => {
  const account = await newAccount();
  const phone = newPhone();
  const id = newMessageId();
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody([change(account, { statuses: [status(id, "sent", phone), status(id, "read", phone)] })]),
      account.appSecret,
    );
    assertEquals(res.status, 200);
    assertEquals((await res.json()).receipts, { applied: 0, waiting: 2, duplicates: 0 });
  });
  await recordOutbound(account, phone, id);
  assertEquals((await statusOf(account, id))!.status, "read");
});

Deno.test("one body may carry several accounts: each change goes to its own organization", async () => {
  const secret = `shared-app-secret-${crypto.randomUUID()}`;
  const a = await newAccount({ appSecret: secret });
  const b = await newAccount({ appSecret: secret });
  const c = await newAccount(); // another app secret
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const body = webhookBody(
      [change(a, { messages: [textMessage(phone, "to A")] })],
      [change(b, { messages: [textMessage(phone, "to B"), textMessage(phone, "to B again")] })],
    );
    const res = await signedPost(base, body, secret);
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals((await messagesOf(a.organizationId)).map((m) => m.text), ["to A"]);
    assertEquals((await messagesOf(b.organizationId)).map((m) => m.text).sort(), ["to B", "to B again"]);

    // Signed with A's secret but also naming C's number (another secret): A's change is applied, C's is
    // skipped as if nobody held C's number; nothing reaches C.
    const mixed = webhookBody([
      change(a, { messages: [textMessage(phone, "x")] }),
      change(c, {
        messages: [textMessage(phone, "y")],
      }),
    ]);
    const partly = await signedPost(base, mixed, secret);
    const json = await partly.json();
    assertEquals([partly.status, json.messages.stored, json.skipped_phone_number_ids], [200, 1, 1]);
    assertEquals((await messagesOf(a.organizationId)).map((m) => m.text).sort(), ["to A", "x"]);
    assertEquals((await countAll(c.organizationId)).messages, 0);
    // Signed with nobody's secret: refused whole.
    const refused = await signedPost(base, mixed, "nobody's secret");
    assertEquals(refused.status, 401);
    await refused.body?.cancel();
    assertEquals((await countAll(a.organizationId)).messages, 2);
  });
});

Deno.test("bad or missing signatures are 401 and store nothing", async () => {
  const account = await newAccount();
  const phone = newPhone();
  const body = webhookBody([change(account, { messages: [textMessage(phone, "forged")] })]);
  await withServer(async ({ base }) => {
    const raw = JSON.stringify(body);
    const sign = async (data: string) => `sha256=${await hmacSha256Hex(account.appSecret, data)}`;
    const header = (value: string) => ({ "x-hub-signature-256": value });
    const attempts: [string, Response][] = [
      ["missing", await signedPost(base, raw, null)],
      ["wrong secret", await signedPost(base, raw, "not-the-secret")],
      ["not hex", await signedPost(base, raw, null, header("sha256=zz"))],
      ["truncated", await signedPost(base, raw, null, header((await sign(raw)).slice(0, -2)))],
      ["another body's signature", await signedPost(base, raw, null, header(await sign("{}")))],
      [
        "re-encoded body",
        await signedPost(base, JSON.stringify(body, null, 1), null, header(await sign(raw))),
      ],
    ];
    for (const [what, res] of attempts) {
      assertEquals(res.status, 401, what);
      assertEquals((await res.json()).error.code, "invalid_signature", what);
    }
    assertEquals(await countAll(account.organizationId), { threads: 0, messages: 0, receipts: 0 });
  });
});

Deno.test("a number nobody registered is answered as a forged body is (401), told to the operator, and nothing is stored", async () => {
  const account = await newAccount();
  const ghost: TestAccount = { ...account, phoneNumberId: `999${Date.now()}` };
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.join(" "));
    try {
      const res = await signedPost(
        base,
        webhookBody([change(ghost, { messages: [textMessage(phone, "lost?")] })]),
        "any",
      );
      assertEquals(res.status, 401);
      assertEquals((await res.json()).error.code, "invalid_signature");
    } finally {
      console.warn = original;
    }
    assert(warnings.some((w) => w.includes(ghost.phoneNumberId)), "logged the unknown id");
    const [row] = await sql()<{ n: number }[]>`
      select count(*)::int n from public.whatsapp_messages where sender_phone = ${phone}`;
    assertEquals(row!.n, 0);

    // Mixed with a known account's change: the known part is applied, the unknown part skipped.
    console.warn = () => {};
    try {
      const mixed = await signedPost(
        base,
        webhookBody([
          change(ghost, { messages: [textMessage(phone, "lost?")] }),
          change(account, { messages: [textMessage(phone, "kept")] }),
        ]),
        account.appSecret,
      );
      assertEquals(mixed.status, 200);
      const json = await mixed.json();
      assertEquals([json.messages.stored, json.skipped_phone_number_ids], [1, 1]);
    } finally {
      console.warn = original;
    }
    assertEquals((await messagesOf(account.organizationId)).map((m) => m.text), ["kept"]);
  });
});

Deno.test("malformed JSON and wrong shapes are 400; a body over 1 MiB is 413", async () => {
  const account = await newAccount();
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const bad: [string, string][] = [
      ["not json", "{nope"],
      ["array", "[]"],
      ["other object", JSON.stringify({ object: "page", entry: [] })],
      ["no entry", JSON.stringify({ object: "whatsapp_business_account" })],
      [
        "message without id",
        JSON.stringify(
          webhookBody([change(account, { messages: [{ from: phone, timestamp: unixNow(), type: "text" }] })]),
        ),
      ],
      [
        "bad timestamp",
        JSON.stringify(
          webhookBody([change(account, { messages: [textMessage(phone, "x", { timestamp: "yesterday" })] })]),
        ),
      ],
      [
        "message with no sender at all",
        JSON.stringify(
          webhookBody([
            change(account, { messages: [{ id: "wamid.x", timestamp: unixNow(), type: "text" }] }),
          ]),
        ),
      ],
    ];
    for (const [what, raw] of bad) {
      const res = await signedPost(base, raw, account.appSecret);
      assertEquals(res.status, 400, what);
      const err = (await res.json()).error;
      assert(["invalid_json", "invalid_payload"].includes(err.code), `${what}: ${err.code}`);
    }
    const huge = JSON.stringify(
      webhookBody([change(account, { messages: [textMessage(phone, "x".repeat(1024 * 1024))] })]),
    );
    const res = await signedPost(base, huge, account.appSecret);
    assertEquals(res.status, 413);
    assertEquals((await res.json()).error.code, "payload_too_large");
    assertEquals(await countAll(account.organizationId), { threads: 0, messages: 0, receipts: 0 });
  });
});

Deno.test("changes of other webhook fields are acknowledged without storing anything", async () => {
  const account = await newAccount();
  const phone = newPhone();
  await withServer(async ({ base }) => {
    const body = {
      object: "whatsapp_business_account",
      entry: [{
        id: "102290129340398",
        changes: [
          {
            field: "message_template_status_update",
            value: {
              event: "APPROVED",
              message_template_id: 1234,
              message_template_name: "welcome",
              messages: 7,
            },
          },
          change(account, { messages: [textMessage(phone, "alongside a template update")] }),
        ],
      }],
    };
    const res = await signedPost(base, body, account.appSecret);
    assertEquals(res.status, 200);
    assertEquals((await res.json()).messages, { stored: 1, duplicates: 0 });
    const only = await signedPost(
      base,
      { ...body, entry: [{ id: "1", changes: [body.entry[0]!.changes[0]] }] },
      null,
      {
        "x-hub-signature-256": "sha256=00",
      },
    );
    assertEquals(only.status, 200);
    assertEquals(await only.json(), { status: "ignored" });
    assertEquals(await countAll(account.organizationId), { threads: 1, messages: 1, receipts: 0 });
  });
});

Deno.test("database unreachable: 503 so the gateway retries", async () => {
  const account = await newAccount();
  await withServer(async ({ base }) => {
    const res = await signedPost(
      base,
      webhookBody([change(account, { messages: [textMessage(newPhone(), "x")] })]),
      account.appSecret,
    );
    assertEquals(res.status, 503);
    assertEquals((await res.json()).error.code, "service_unavailable");
    const handshake = await fetch(
      `${base}?hub.mode=subscribe&hub.verify_token=${account.verifyToken}&hub.challenge=1`,
    );
    assertEquals(handshake.status, 503);
    await handshake.body?.cancel();
  }, "postgresql://postgres@127.0.0.1:1/postgres");
});

Deno.test("connection killed mid-request: 503 and nothing half-written; the retry applies everything", async () => {
  const account = await newAccount();
  const fresh = newPhone();
  const busy = newPhone();
  // Sorted thread order puts `fresh` before `busy`: fresh's thread is written, then the request blocks.
  const [first, second] = [fresh, busy].sort() as [string, string];
  const [lockedThread] = await sql()<{ id: string }[]>`
    insert into public.whatsapp_conversations (organization_id, contact_phone)
    values (${account.organizationId}, ${second}) returning id`;
  const body = webhookBody([change(account, {
    messages: [textMessage(first, "written first"), textMessage(second, "blocks")],
  })]);
  await withServer(async ({ base }) => {
    const holder = await sql().reserve();
    try {
      await holder`begin`;
      await holder`select 1 from public.whatsapp_conversations where id = ${lockedThread!.id} for update`;
      const pending = signedPost(base, body, account.appSecret);
      pending.catch(() => {}); // awaited below; never left dangling if an assertion fails first
      let pid: number | undefined;
      for (let i = 0; i < 200 && pid === undefined; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const [row] = await sql()<{ pid: number }[]>`
          select pid from pg_stat_activity
          where wait_event_type = 'Lock' and query ilike '%process_whatsapp_webhook%' and pid <> pg_backend_pid()
          limit 1`;
        pid = row?.pid;
      }
      assert(pid !== undefined, "the webhook's transaction is waiting on the locked thread");
      // Its first thread is already written inside the open transaction.
      await sql()`select pg_terminate_backend(${pid})`;
      const res = await pending;
      assertEquals(res.status, 503);
      await res.body?.cancel();
      await holder`rollback`;
    } finally {
      holder.release();
    }
    assertEquals(await countAll(account.organizationId), { threads: 1, messages: 0, receipts: 0 });

    const retry = await signedPost(base, body, account.appSecret);
    assertEquals(retry.status, 200);
    assertEquals((await retry.json()).messages, { stored: 2, duplicates: 0 });
    assertEquals(await countAll(account.organizationId), { threads: 2, messages: 2, receipts: 0 });
  });
});

Deno.test("close the shared pool", async () => {
  await closeSql();
});
