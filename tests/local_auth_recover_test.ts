// Account enumeration by password reset. The local sign-in answers as Supabase Auth does (recover.go):
// `{}` for every address, and 429 over_email_send_rate_limit for a second request within max_frequency,
// which only an address with an account can get (Supabase Auth leaks that alike). The mail itself is
// sent after the answer, through the outbox: as reported, an address with an account answered in
// 170-470 ms (the mail server's time) and one without in 5-15 ms. Asserted by structure, not by a
// timing threshold: with the mail server held, the answer for an account still comes, its mail not yet
// sent; a mail that then fails forgets its code.
import { assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { upsertDevUser } from "./helpers/dev_stack.ts";
import { loadAuthSettings } from "../scripts/local-auth/config.ts";
import { localSigningKey } from "../scripts/local-auth/keys.ts";
import type { AuthMailer } from "../scripts/local-auth/mailer.ts";
import { MailOutbox } from "../scripts/local-auth/outbox.ts";
import { createAuthService } from "../scripts/local-auth/service.ts";

const address = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}@example.org`;

/** A mail server that takes every mail only when released, or refuses it (`refuse`). */
function heldMailer() {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const sent: string[] = [];
  const state = { refuse: false };
  const mailer: AuthMailer = {
    async send(type, to) {
      await held;
      if (state.refuse) throw new Error("550 mailbox unavailable");
      sent.push(to);
      return { to, type, subject: "", html: "" };
    },
    close() {},
  };
  return { mailer, sent, release, state };
}

async function service(mailer: AuthMailer, outbox: MailOutbox) {
  const dir = await Deno.makeTempDir({ prefix: "recover-keys-" });
  const settings = { ...(await loadAuthSettings({})), mailMaxFrequency: 60 };
  const auth = createAuthService({
    sql: sql(),
    issuer: "http://127.0.0.1:54321/auth/v1",
    anonKey: "anon",
    signingKey: await localSigningKey(new URL(`file://${dir}/`)),
    settings,
    mailer,
    outbox,
  });
  const recover = async (email: string, client = "127.0.0.1") => {
    const res = await auth(
      new Request("http://127.0.0.1:54321/auth/v1/recover", {
        method: "POST",
        headers: { apikey: "anon", "content-type": "application/json" },
        body: JSON.stringify({ email }),
      }),
      "/recover",
      client,
    );
    return { status: res.status, body: await res.json() };
  };
  return { recover, cleanup: () => Deno.remove(dir, { recursive: true }) };
}

/** `p`, or "still waiting" when it has not settled within `ms` (the mail server is held meanwhile). */
const within = <T>(p: Promise<T>, ms = 10_000) =>
  Promise.race([p, new Promise<"still waiting">((r) => setTimeout(() => r("still waiting"), ms))]);

Deno.test("recover: an address with an account is answered before its mail goes, exactly as one without", async () => {
  const { mailer, sent, release } = heldMailer();
  const outbox = new MailOutbox();
  const { recover, cleanup } = await service(mailer, outbox);
  try {
    const user = await upsertDevUser({ email: address("known"), password: "correct horse battery" });
    const known = await within(recover(user.email));
    assertEquals(known, { status: 200, body: {} }, "answered while the mail server still holds the mail");
    assertEquals([sent.length, outbox.waiting], [0, 1], "the mail is queued, not sent inline");
    const unknown = await within(recover(address("nobody")));
    assertEquals(unknown, known, "the same answer");
    assertEquals(outbox.waiting, 1, "nothing queued for an address without an account");

    // Supabase Auth's own tell, kept as it is: a second request within max_frequency.
    const again = await within(recover(user.email));
    assertEquals(
      again !== "still waiting" && [again.status, again.body.error_code],
      [429, "over_email_send_rate_limit"],
    );

    release();
    await outbox.settled();
    assertEquals(sent, [user.email]);
    const [row] =
      await sql()`select recovery_token <> '' as has_code from auth.users where id = ${user.userId}`;
    assertEquals(row?.has_code, true);
  } finally {
    release();
    await cleanup();
  }
});

Deno.test("recover: a mail the server refuses after the answer forgets its code, so no link works that never went out", async () => {
  const { mailer, release, state } = heldMailer();
  const outbox = new MailOutbox();
  const { recover, cleanup } = await service(mailer, outbox);
  try {
    const user = await upsertDevUser({ email: address("refused"), password: "correct horse battery" });
    state.refuse = true;
    assertEquals(await within(recover(user.email)), { status: 200, body: {} });
    release();
    await outbox.settled();
    const [row] =
      await sql()`select recovery_token, recovery_sent_at from auth.users where id = ${user.userId}`;
    assertEquals([row?.recovery_token, row?.recovery_sent_at], ["", null]);
    state.refuse = false;
    assertEquals((await recover(user.email)).status, 200, "and the person may ask again at once");
  } finally {
    release();
    await cleanup();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
