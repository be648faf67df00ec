// Inbound connections through the configuration API (/webhooks/connections): an admin sets a payment
// provider's secret (never read back), sends a signed test through the real receiver, registers
// WhatsApp numbers; staff, another organization's admin, API keys, a signed-out session and anonymous
// callers cannot; bad input gets a 400 naming its field; registering a number another organization
// holds answers exactly as registering a free one does.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startInboundStack } from "./helpers/inbound_stack.ts";
import { asBearer, call } from "./helpers/webhooks_api.ts";
import {
  change,
  createAccount,
  newPhone,
  newPhoneNumberId,
  signedPost,
  textMessage,
  webhookBody,
} from "./helpers/whatsapp.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";

const stack = await startInboundStack();
const api = stack.base("webhooks");
const SECRET = "checkout-secret-0123456789abcdef";

async function tenant() {
  const t = await createTenant();
  return {
    ...t,
    adminUser: t.admin,
    admin: await tokenFor(t.admin, t.organizationId),
    staff: await tokenFor(t.staff, t.organizationId),
  };
}

const get = (token: string) => call(api, "GET", "/connections", asBearer(token));

Deno.test("an admin sets the checkout secret: it is never returned, only whether it is set, its last four characters and when", async () => {
  const t = await tenant();
  const before = await get(t.admin);
  assertEquals(before.status, 200);
  assertEquals(before.data.checkout.secret, {
    set: false,
    last4: null,
    set_at: null,
    uses_checkout_secret: false,
  });
  assertEquals(before.data.checkout.url, `${stack.url}/functions/v1/checkout-webhook/${t.organizationId}`);
  assertEquals(before.data.checkout.signature_header, "x-checkout-signature");
  assertEquals(
    before.data.whatsapp.callback_url,
    `${stack.url}/functions/v1/messaging-webhook/${t.organizationId}`,
  );

  const set = await call(api, "POST", "/connections/checkout/secret", asBearer(t.admin), { secret: SECRET });
  assertEquals(set.status, 200);
  assertEquals([set.data.set, set.data.last4, set.data.generated_secret], [true, "cdef", undefined]);
  assert(!set.text.includes(SECRET), "the secret is not echoed");
  const [stored] = await sql()<{ webhook_secret: string; webhook_secret_set_at: Date }[]>`
    select webhook_secret, webhook_secret_set_at from public.organization_settings
    where organization_id = ${t.organizationId}`;
  assertEquals(stored!.webhook_secret, SECRET);

  const after = await get(t.admin);
  assertEquals(after.data.checkout.secret.last4, "cdef");
  assert(!after.text.includes(SECRET), "the overview holds no secret");
  // Card payments have none of their own: the checkout secret verifies them.
  assertEquals(after.data.payments.secret, {
    set: false,
    last4: null,
    set_at: null,
    uses_checkout_secret: true,
  });

  // Generated when omitted: returned this once, for the admin to enter at the provider.
  const generated = await call(api, "POST", "/connections/payments/secret", asBearer(t.admin), {});
  assertEquals(generated.status, 200);
  const value = generated.data.generated_secret as string;
  assert(/^whsec_[A-Za-z0-9_-]{43}$/.test(value), value);
  assertEquals(generated.data.last4, value.slice(-4));
  assertEquals((await get(t.admin)).data.payments.secret.uses_checkout_secret, false);

  const removed = await call(api, "DELETE", "/connections/payments/secret", asBearer(t.admin));
  assertEquals([removed.status, removed.data.set, removed.data.last4], [200, false, null]);
});

Deno.test("bad input is a 400 naming the field; an unknown provider or number is 404", async () => {
  const t = await tenant();
  const cases: [string, string, unknown, string][] = [
    ["POST", "/connections/checkout/secret", { secret: "short" }, "secret"],
    ["POST", "/connections/checkout/secret", { secret: "has spaces in the middle of it" }, "secret"],
    ["POST", "/connections/checkout/secret", { secret: "a".repeat(257) }, "secret"],
    ["POST", "/connections/checkout/secret", { secret: SECRET, extra: 1 }, "body"],
    ["POST", "/connections/whatsapp/numbers", { app_secret: SECRET }, "phone_number_id"],
    [
      "POST",
      "/connections/whatsapp/numbers",
      { phone_number_id: "12 34", app_secret: SECRET },
      "phone_number_id",
    ],
    ["POST", "/connections/whatsapp/numbers", { phone_number_id: "1234", app_secret: "short" }, "app_secret"],
    ["POST", "/connections/whatsapp/numbers", { phone_number_id: "1234" }, "app_secret"],
    [
      "POST",
      "/connections/whatsapp/numbers",
      { phone_number_id: "1234", app_secret: SECRET, display_phone_number: "call me" },
      "display_phone_number",
    ],
    [
      "POST",
      "/connections/whatsapp/numbers",
      { phone_number_id: "1234", app_secret: SECRET, verify_token: "tiny" },
      "verify_token",
    ],
  ];
  for (const [method, path, body, field] of cases) {
    const res = await call(api, method, path, asBearer(t.admin), body);
    assertEquals(res.status, 400, `${path} ${JSON.stringify(body)}`);
    const fields = (res.data.error.details.fields as { field: string }[]).map((f) => f.field);
    assert(fields.includes(field) || (field === "body" && fields.length > 0), `${field} in ${fields}`);
  }
  assertEquals(
    (await call(api, "POST", "/connections/whatsapp/secret", asBearer(t.admin), { secret: SECRET })).status,
    404,
  );
  const unknown = crypto.randomUUID();
  for (
    const [method, path, body] of [
      ["PATCH", `/connections/whatsapp/numbers/${unknown}`, { app_secret: SECRET }],
      ["POST", `/connections/whatsapp/numbers/${unknown}/verify-token`, {}],
      ["DELETE", `/connections/whatsapp/numbers/${unknown}`, undefined],
      ["DELETE", `/connections/whatsapp/numbers/not-a-uuid`, undefined],
    ] as const
  ) {
    const res = await call(api, method, path, asBearer(t.admin), body);
    assertEquals([res.status, res.data.error.code], [404, "not_found"], path);
  }
});

Deno.test("send a signed test: it goes through the real receiver, is logged, and says what went wrong", async () => {
  const t = await tenant();
  const noSecret = await call(api, "POST", "/connections/checkout/test", asBearer(t.admin));
  assertEquals([noSecret.status, noSecret.data.error.code], [409, "secret_not_set"]);

  await call(api, "POST", "/connections/checkout/secret", asBearer(t.admin), { secret: SECRET });
  for (const provider of ["checkout", "payments"]) {
    const res = await call(api, "POST", `/connections/${provider}/test`, asBearer(t.admin));
    assertEquals(res.status, 200, res.text);
    assertEquals([res.data.delivered, res.data.status, res.data.outcome], [true, 200, "processed"], provider);
    const [row] = await sql()<
      { provider: string; event: string; status: string; signature_valid: boolean }[]
    >`
      select provider, event, status, signature_valid from public.inbound_webhook_log where id = ${res.data.log_id}`;
    assertEquals(row, { provider, event: "connection.test", status: "processed", signature_valid: true });
  }
  const overview = await get(t.admin);
  assertEquals(overview.data.checkout.last_received.event, "connection.test");
  assertEquals(overview.data.payments.last_received.event, "connection.test");
  // The test changes nothing but the log.
  const [changed] = await sql()<{ n: number }[]>`
    select (select count(*) from public.donations where organization_id = ${t.organizationId})
         + (select count(*) from public.recurring_donations where organization_id = ${t.organizationId}) as n`;
  assertEquals(Number(changed!.n), 0);

  // A provider signing with another secret shows up among the failures.
  const body = JSON.stringify({
    event: "connection.test",
    id: "x",
    occurred_at: new Date().toISOString(),
    test: true,
  });
  const forged = await fetch(`${stack.base("checkout-webhook")}/${t.organizationId}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-checkout-signature": await hmacSha256Hex("wrong-secret", body),
    },
    body,
  });
  assertEquals(forged.status, 401);
  await forged.body?.cancel();
  const failures = (await get(t.admin)).data.checkout.failures;
  assertEquals([failures.refused_7d, failures.last.status, failures.last.error], [
    1,
    "unverified",
    "signature mismatch",
  ]);
});

Deno.test("WhatsApp: register a number, get its verify token once, pass the handshake, receive a message; replace the token and the secret; remove it", async () => {
  const t = await tenant();
  const phoneNumberId = newPhoneNumberId();
  const appSecret = `meta-app-secret-${crypto.randomUUID()}`;
  const made = await call(api, "POST", "/connections/whatsapp/numbers", asBearer(t.admin), {
    phone_number_id: phoneNumberId,
    display_phone_number: "+1 555 010 2000",
    app_secret: appSecret,
  });
  assertEquals(made.status, 201, made.text);
  const token = made.data.verify_token as string;
  assert(/^vt_[A-Za-z0-9_-]{43}$/.test(token), token);
  assertEquals([made.data.status, made.data.app_secret_last4, made.data.handshake_at], [
    "pending",
    appSecret.slice(-4),
    null,
  ]);
  assert(!made.text.includes(appSecret));
  const again = await call(api, "POST", "/connections/whatsapp/numbers", asBearer(t.admin), {
    phone_number_id: phoneNumberId,
    app_secret: appSecret,
  });
  assertEquals([again.status, again.data.error.code, again.data.error.details.fields[0].field], [
    409,
    "already_registered",
    "phone_number_id",
  ]);

  const messaging = stack.base("messaging-webhook");
  const handshake = await fetch(`${messaging}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=7`);
  assertEquals(await handshake.text(), "7");
  const account = {
    id: made.data.id,
    organizationId: t.organizationId,
    phoneNumberId,
    displayPhoneNumber: "15550102000",
    appSecret,
    verifyToken: token,
  };
  const sender = newPhone();
  const sent = await signedPost(
    messaging,
    webhookBody([change(account, { messages: [textMessage(sender, "hi")] })]),
    appSecret,
  );
  assertEquals(sent.status, 200);
  await sent.body?.cancel();
  const [number] = (await get(t.admin)).data.whatsapp.numbers;
  assertEquals(number.status, "verified");
  assert(number.handshake_at && number.verified_at && number.last_received_at);
  assertEquals([number.last_message.type, number.last_message.from], ["text", `…${sender.slice(-4)}`]);
  const listed = await get(t.admin);
  assert(
    !listed.text.includes(appSecret) && !listed.text.includes(token),
    "no secret or token in the overview",
  );

  const rotated = await call(
    api,
    "POST",
    `/connections/whatsapp/numbers/${account.id}/verify-token`,
    asBearer(t.admin),
    {},
  );
  assertEquals(rotated.status, 200);
  assert(rotated.data.verify_token !== token);
  assertEquals(rotated.data.handshake_at, null, "the new token has not been presented yet");
  const oldToken = await fetch(`${messaging}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=7`);
  assertEquals(oldToken.status, 403);
  await oldToken.body?.cancel();

  const newSecret = `rotated-app-secret-${crypto.randomUUID()}`;
  const patched = await call(api, "PATCH", `/connections/whatsapp/numbers/${account.id}`, asBearer(t.admin), {
    app_secret: newSecret,
    display_phone_number: null,
  });
  assertEquals([
    patched.status,
    patched.data.app_secret_last4,
    patched.data.display_phone_number,
    patched.data.status,
  ], [
    200,
    newSecret.slice(-4),
    null,
    "verified",
  ]);
  const withOld = await signedPost(
    messaging,
    webhookBody([change(account, { messages: [textMessage(sender, "old")] })]),
    appSecret,
  );
  assertEquals(withOld.status, 401);
  await withOld.body?.cancel();

  const removed = await call(api, "DELETE", `/connections/whatsapp/numbers/${account.id}`, asBearer(t.admin));
  assertEquals(removed.status, 204);
  assertEquals((await get(t.admin)).data.whatsapp.numbers, []);
  const [kept] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.whatsapp_messages where organization_id = ${t.organizationId}`;
  assertEquals(kept!.n, 1, "the conversation stays");
});

Deno.test("registering a number another organization holds answers exactly as registering a free one", async () => {
  const holder = await tenant();
  const held = newPhoneNumberId();
  const holderAccount = await createAccount(holder.organizationId, { phoneNumberId: held });
  // The holder's number is even verified: a body signed with its secret has arrived.
  const sent = await signedPost(
    stack.base("messaging-webhook"),
    webhookBody([change(holderAccount, { messages: [textMessage(newPhone(), "x")] })]),
    holderAccount.appSecret,
  );
  assertEquals(sent.status, 200);
  await sent.body?.cancel();

  const other = await tenant();
  const shape = (r: { status: number; data: Record<string, unknown> }) => ({
    status: r.status,
    keys: Object.keys(r.data).sort(),
    state: [
      r.data.status,
      r.data.verified_at,
      r.data.handshake_at,
      r.data.last_received_at,
      r.data.last_message,
    ],
  });
  const register = (phone_number_id: string) =>
    call(api, "POST", "/connections/whatsapp/numbers", asBearer(other.admin), {
      phone_number_id,
      app_secret: `their-secret-${crypto.randomUUID()}`,
    });
  const onHeld = await register(held);
  const onFree = await register(newPhoneNumberId());
  assertEquals(shape(onHeld), shape(onFree));
  assertEquals(shape(onHeld).state, ["pending", null, null, null, null]);
  const numbers = (await get(other.admin)).data.whatsapp.numbers;
  assertEquals(numbers.map((n: { status: string }) => n.status), ["pending", "pending"]);
  // Nothing of the holder's changed.
  const [row] = await sql()<{ organization_id: string; verified: boolean }[]>`
    select organization_id, verified_at is not null as verified from public.messaging_accounts where id = ${holderAccount.id}`;
  assertEquals(row, { organization_id: holder.organizationId, verified: true });
});

Deno.test("WhatsApp checks: a signed test in Meta's shape is verified and logged and stores nothing; the handshake check echoes the challenge without counting as Meta's", async () => {
  const t = await tenant();
  const appSecret = `meta-app-secret-${crypto.randomUUID()}`;
  const made = await call(api, "POST", "/connections/whatsapp/numbers", asBearer(t.admin), {
    phone_number_id: newPhoneNumberId(),
    display_phone_number: "+1 555 010 3000",
    app_secret: appSecret,
  });
  assertEquals(made.status, 201, made.text);
  const numberId = made.data.id as string;
  const token = made.data.verify_token as string;

  const test = await call(api, "POST", `/connections/whatsapp/numbers/${numberId}/test`, asBearer(t.admin));
  assertEquals(test.status, 200, test.text);
  assertEquals([test.data.delivered, test.data.status, test.data.error], [true, 200, null]);
  assert(!test.text.includes(appSecret) && !test.text.includes(token), "no secret in the answer");
  const [logged] = await sql()<
    {
      provider: string;
      event: string;
      status: string;
      signature_valid: boolean;
      payload: Record<string, unknown>;
    }[]
  >`select provider, event, status, signature_valid, payload from public.inbound_webhook_log where id = ${test.data.log_id}`;
  assertEquals([logged!.provider, logged!.event, logged!.status, logged!.signature_valid], [
    "whatsapp",
    "connection.test",
    "processed",
    true,
  ]);
  assertEquals(
    (logged!.payload as { object: string }).object,
    "whatsapp_business_account",
    "Meta's documented shape",
  );
  // Nothing of the church's changed: no message, no conversation, and the number is still waiting for
  // Meta (the test proves the secret signs, not that Meta reaches us).
  const [rows] = await sql()<{ n: number }[]>`
    select (select count(*) from public.whatsapp_messages where organization_id = ${t.organizationId})::int as n`;
  assertEquals(rows!.n, 0);
  const [number] = (await get(t.admin)).data.whatsapp.numbers;
  assertEquals([number.status, number.verified_at, number.last_message], ["pending", null, null]);

  // The same body signed with another secret is refused: the signature is what the test checks.
  const replaced = await call(api, "PATCH", `/connections/whatsapp/numbers/${numberId}`, asBearer(t.admin), {
    app_secret: `another-app-secret-${crypto.randomUUID()}`,
  });
  assertEquals(replaced.status, 200);
  const again = await call(api, "POST", `/connections/whatsapp/numbers/${numberId}/test`, asBearer(t.admin));
  assertEquals([again.status, again.data.delivered], [200, true], "signed with the number's current secret");

  const shake = await call(
    api,
    "POST",
    `/connections/whatsapp/numbers/${numberId}/handshake`,
    asBearer(t.admin),
  );
  assertEquals(shake.status, 200, shake.text);
  assertEquals(shake.data, { echoed: true, status: 200, error: null });
  assert(!shake.text.includes(token), "no verify token in the answer");
  assertEquals((await get(t.admin)).data.whatsapp.numbers[0].handshake_at, null, "not recorded as Meta's");
  // Meta's own handshake is recorded as before.
  const meta = await fetch(
    `${
      stack.base("messaging-webhook")
    }/${t.organizationId}?hub.mode=subscribe&hub.verify_token=${token}&hub.challenge=9`,
  );
  assertEquals(await meta.text(), "9");
  assert((await get(t.admin)).data.whatsapp.numbers[0].handshake_at, "Meta's handshake recorded");

  // A receiver that does not know the number's token (its digest replaced, as if the URL served another
  // project): the check says the challenge did not come back, and why.
  await sql()`update public.messaging_account_secrets set verify_token_sha256 = sha256('x'::bytea)
              where account_id = ${numberId}`;
  const wrong = await call(
    api,
    "POST",
    `/connections/whatsapp/numbers/${numberId}/handshake`,
    asBearer(t.admin),
  );
  assertEquals([wrong.status, wrong.data.echoed, wrong.data.status, wrong.data.error?.code], [
    200,
    false,
    403,
    "verification_failed",
  ]);
});

Deno.test("staff, another organization's admin, API keys, a signed-out session and anonymous callers get nothing", async () => {
  const a = await tenant();
  const b = await tenant();
  await call(api, "POST", "/connections/checkout/secret", asBearer(a.admin), { secret: SECRET });
  const number = await call(api, "POST", "/connections/whatsapp/numbers", asBearer(a.admin), {
    phone_number_id: newPhoneNumberId(),
    app_secret: SECRET,
  });
  const numberId = number.data.id as string;
  const key = (await call(api, "POST", "/api-keys", asBearer(a.admin), { name: "Zapier" })).data
    .key as string;
  // A's admin after signing out: the token is still within its hour, its session is gone.
  const endedAdmin = await tokenFor(a.adminUser, a.organizationId, { session: crypto.randomUUID() });

  const routes: [string, string, unknown][] = [
    ["GET", "/connections", undefined],
    ["POST", "/connections/checkout/secret", { secret: "attacker-secret-0123456789" }],
    ["DELETE", "/connections/checkout/secret", undefined],
    ["POST", "/connections/checkout/test", undefined],
    ["POST", "/connections/whatsapp/numbers", { phone_number_id: newPhoneNumberId(), app_secret: SECRET }],
    ["PATCH", `/connections/whatsapp/numbers/${numberId}`, { app_secret: "attacker-secret-0123456789" }],
    ["POST", `/connections/whatsapp/numbers/${numberId}/verify-token`, {}],
    ["POST", `/connections/whatsapp/numbers/${numberId}/test`, undefined],
    ["POST", `/connections/whatsapp/numbers/${numberId}/handshake`, undefined],
    ["DELETE", `/connections/whatsapp/numbers/${numberId}`, undefined],
  ];
  const callers: [string, Record<string, string>, number[]][] = [
    ["staff", asBearer(a.staff), [403]],
    ["API key", { "x-api-key": key, "content-type": "application/json" }, [403]],
    ["signed-out session", asBearer(endedAdmin), [401]],
    ["anonymous", { "content-type": "application/json" }, [401]],
  ];
  for (const [who, headers, expected] of callers) {
    for (const [method, path, body] of routes) {
      const res = await call(api, method, path, headers, body);
      assert(expected.includes(res.status), `${who} ${method} ${path}: ${res.status} ${res.text}`);
    }
  }
  // Another organization's admin acts on its own organization only: A's number is not found, and its own
  // secret changes leave A's alone.
  for (const [method, path, body] of routes.slice(5)) {
    const res = await call(api, method, path, asBearer(b.admin), body);
    assertEquals(res.status, 404, `B's admin ${method} ${path}`);
  }
  await call(api, "POST", "/connections/checkout/secret", asBearer(b.admin), {
    secret: "b-secret-0123456789abcdef",
  });
  const [aSettings] = await sql()<{ webhook_secret: string }[]>`
    select webhook_secret from public.organization_settings where organization_id = ${a.organizationId}`;
  assertEquals(aSettings!.webhook_secret, SECRET);
  const overviewB = await get(b.admin);
  assertEquals(overviewB.data.whatsapp.numbers, []);
  const [aNumber] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.messaging_accounts where id = ${numberId}`;
  assertEquals(aNumber!.n, 1, "A's number is still there");
});

Deno.test("close", async () => {
  await stack.close();
  await closeSql();
});
