// Who a WhatsApp number belongs to when several organizations register the same phone-number id:
// messaging-webhook sends each id's part to the registration whose app secret signed the body, so a
// registration with the wrong secret (a squatter's) receives nothing and keeps nobody out, and nothing
// the receiver answers tells one organization that another holds the number.
// @see docs/whatsapp.md#who-a-number-belongs-to
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createOrganization, sql, testDbUrl } from "./helpers/db.ts";
import { serveFunction } from "./helpers/server.ts";
import {
  change,
  createAccount,
  newPhone,
  newPhoneNumberId,
  signedPost,
  type TestAccount,
  textMessage,
  webhookBody,
} from "./helpers/whatsapp.ts";
import { createApp } from "../supabase/functions/messaging-webhook/app.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";
import { loadConfig } from "../supabase/functions/_shared/config.ts";

const deps = {
  config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }),
  sql: createSql(testDbUrl(), { max: 10 }),
};
const server = await serveFunction("messaging-webhook", createApp(deps));
const base = server.base;

/** Registers `phoneNumberId` for a new organization with its own app secret. */
const register = async (phoneNumberId: string, appSecret?: string) =>
  await createAccount(await createOrganization(), { phoneNumberId, appSecret });

const texts = async (organizationId: string) =>
  (await sql()<{ text: string }[]>`
    select text from public.whatsapp_messages where organization_id = ${organizationId} order by created_at`)
    .map((r) => r.text);

const stateOf = async (account: TestAccount) => {
  const [row] = await sql()<{ verified: boolean; received: boolean; handshake: boolean }[]>`
    select verified_at is not null as verified, last_received_at is not null as received,
           handshake_at is not null as handshake
    from public.messaging_accounts where id = ${account.id}`;
  return row!;
};

/** The refused bodies counted in an organization's log: their number, summed over its counter rows. */
const refusedCount = async (organizationId: string) => {
  const [row] = await sql()<{ n: number }[]>`
    select coalesce(sum(deliveries), 0)::int as n from public.inbound_webhook_log
    where organization_id = ${organizationId} and provider = 'whatsapp' and status = 'unverified'`;
  return row!.n;
};

const post = async (account: TestAccount, text: string, secret: string | null) => {
  const res = await signedPost(
    base,
    webhookBody([change(account, { messages: [textMessage(newPhone(), text)] })]),
    secret,
  );
  return { status: res.status, body: await res.json() };
};

Deno.test("a squatter's registration of another church's number receives nothing and keeps the church out of nothing", async () => {
  const id = newPhoneNumberId();
  // The squatter registers first, with a secret of its own.
  const squatter = await register(id);
  const owner = await register(id);
  // Meta's body for the number, signed with the owner's app secret: the owner's, and only the owner's.
  const genuine = await post(owner, "for the church", owner.appSecret);
  assertEquals([genuine.status, genuine.body.messages.stored], [200, 1]);
  assertEquals(await texts(owner.organizationId), ["for the church"]);
  assertEquals(await texts(squatter.organizationId), []);
  assertEquals(await stateOf(owner), { verified: true, received: true, handshake: false });
  assertEquals(await stateOf(squatter), { verified: false, received: false, handshake: false });
  // What the squatter signs itself lands in its own organization only.
  const forged = await post(squatter, "planted", squatter.appSecret);
  assertEquals([forged.status, forged.body.messages.stored], [200, 1]);
  assertEquals(await texts(owner.organizationId), ["for the church"]);
  assertEquals(await texts(squatter.organizationId), ["planted"]);
});

Deno.test("a body no registration's secret signed is answered alike whether or not anyone holds its number, and each holder counts it", async () => {
  const held = newPhoneNumberId();
  const a = await register(held);
  const b = await register(held);
  const free: TestAccount = { ...a, phoneNumberId: newPhoneNumberId() };
  const warn = console.warn;
  console.warn = () => {};
  try {
    const forHeld = await post(a, "forged", "a guess at the secret");
    const forFree = await post(free, "forged", "a guess at the secret");
    assertEquals(forHeld, forFree);
    assertEquals(forHeld.status, 401);
    const unsigned = [await post(a, "forged", null), await post(free, "forged", null)];
    assertEquals(unsigned[0], unsigned[1]);
  } finally {
    console.warn = warn;
  }
  // Both holders see both refused bodies for their number; neither can tell the other exists.
  assertEquals([await refusedCount(a.organizationId), await refusedCount(b.organizationId)], [2, 2]);
  assertEquals([...await texts(a.organizationId), ...await texts(b.organizationId)], []);
});

Deno.test("two organizations holding the same app secret: the one verified first receives the number's bodies", async () => {
  const id = newPhoneNumberId();
  const secret = `shared-${crypto.randomUUID()}`;
  const first = await register(id, secret);
  assertEquals((await post(first, "one", secret)).status, 200);
  // Registered later with the same secret (a former admin who kept it): never verified, gets nothing.
  const later = await register(id, secret);
  assertEquals((await post(later, "two", secret)).status, 200);
  assertEquals(await texts(first.organizationId), ["one", "two"]);
  assertEquals(await texts(later.organizationId), []);
  assertEquals((await stateOf(later)).verified, false);
  // The church rotates its app secret: from then on its bodies are its own again, the other's nothing.
  await sql()`update public.messaging_account_secrets set app_secret = 'rotated-secret-0123456789'
              where account_id = ${first.id}`;
  assertEquals((await post(first, "three", "rotated-secret-0123456789")).status, 200);
  assertEquals(await texts(first.organizationId), ["one", "two", "three"]);
});

Deno.test("crowding: seventy registrations of a number, each verified by a body it signed itself, made before and after its owner's, cannot keep the owner's bodies out", async () => {
  const id = newPhoneNumberId();
  const crowd = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const squatter = await register(id);
      assertEquals((await post(squatter, "planted", squatter.appSecret)).status, 200);
    }
  };
  await crowd(70);
  const owner = await register(id);
  const first = await post(owner, "first", owner.appSecret);
  assertEquals([first.status, first.body.messages.stored], [200, 1]);
  await crowd(70);
  const second = await post(owner, "second", owner.appSecret);
  assertEquals([second.status, second.body.messages.stored], [200, 1]);
  assertEquals(await texts(owner.organizationId), ["first", "second"]);
});

Deno.test("the signature work a body can cause is bounded by its size: a 1 MiB body tries at most 8 secrets", async () => {
  const id = newPhoneNumberId();
  // The owner registered first and is not verified yet; nine others registered after it.
  const owner = await register(id);
  for (let i = 0; i < 9; i++) await register(id);
  const big = webhookBody([change(owner, { messages: [textMessage(newPhone(), "x".repeat(900_000))] })]);
  const refused = await signedPost(base, big, owner.appSecret);
  assertEquals(refused.status, 401, "the owner's secret was not among the 8 tried");
  await refused.body?.cancel();
  // A body of a gateway's usual size tries them all.
  const small = await post(owner, "small", owner.appSecret);
  assertEquals(small.status, 200);
  // Verified now, the owner comes first, whatever the size.
  const again = await signedPost(base, big, owner.appSecret);
  assertEquals(again.status, 200);
  await again.body?.cancel();
});

Deno.test("the handshake records which registrations' verify token Meta presented", async () => {
  const id = newPhoneNumberId();
  const a = await register(id);
  const b = await register(id);
  const res = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=${a.verifyToken}&hub.challenge=42`);
  assertEquals([res.status, await res.text()], [200, "42"]);
  assertEquals([(await stateOf(a)).handshake, (await stateOf(b)).handshake], [true, false]);
  const wrong = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=not-a-token&hub.challenge=42`);
  assertEquals(wrong.status, 403);
  await wrong.body?.cancel();
  assert(!(await stateOf(b)).handshake);
});

Deno.test("close", async () => {
  await server.close();
  await deps.sql.end({ timeout: 1 });
  await closeSql();
});
