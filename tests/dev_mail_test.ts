// `npm run dev` starts a mail catcher with a web inbox (MailDev) and prints its URL; the local
// mail-sender delivers to it, so an invitation can be accepted from that inbox: the real dev server,
// its local sign-in, the configuration API, MailDev's own REST API (what its inbox page shows).
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql } from "./helpers/db.ts";
import { startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { freePort } from "./helpers/server.ts";

Deno.test("npm run dev's mail catcher: the inbox's URL is printed, and an invitation from it is accepted", async () => {
  const [web, smtp] = [freePort(), freePort()];
  const stack = await startDevStack({
    allowRun: true,
    env: { WEB_DEV: "false", MAIL_WEB_PORT: String(web), MAIL_SMTP_PORT: String(smtp) },
  });
  try {
    const inbox = `http://127.0.0.1:${web}`;
    assertMatch(stack.output(), new RegExp(`Mail:\\s+${inbox.replaceAll(".", "\\.")}`));
    const run = crypto.randomUUID().slice(0, 8);
    const admin = await upsertDevUser({
      email: `admin-${run}@firstchurch.example`,
      password: "demo-password",
      organization: `Mail Church ${run}`,
      role: "admin",
    });
    const invitee = `new-${run}@example.org`;
    await upsertDevUser({ email: invitee, password: "demo-password", organization: `Elsewhere ${run}` });
    const signIn = async (email: string) => {
      const res = await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: stack.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email, password: "demo-password" }),
      });
      return (await res.json()).access_token as string;
    };
    const api = `${stack.url}/functions/v1/webhooks`;
    const adminToken = await signIn(admin.email);
    const invited = await fetch(`${api}/invitations`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ email: invitee, role: "staff" }),
    });
    assertEquals(invited.status, 201);
    await invited.body?.cancel();

    // The inbox shows it within seconds (the local sender wakes on the outbox's NOTIFY).
    type InboxMail = { text: string; subject: string; to: { address: string }[] };
    let mail: InboxMail | undefined;
    for (let i = 0; i < 100 && !mail; i++) {
      const list = await (await fetch(`${inbox}/api/email`)).json() as InboxMail[];
      mail = list.find((m) => m.to.some((t) => t.address === invitee));
      if (!mail) await new Promise((r) => setTimeout(r, 200));
    }
    assert(mail, "the invitation reached the inbox");
    assertMatch(mail.subject, new RegExp(`Mail Church ${run}`));
    const token = /\/invitations\/accept#token=(inv_[0-9a-f]{64})/.exec(mail.text)?.[1];
    assert(token, `the mail carries the accept link:\n${mail.text}`);
    const page = await fetch(inbox, { headers: { accept: "text/html" } });
    assertEquals(page.status, 200, "the inbox page is served");
    await page.body?.cancel();

    const accepted = await fetch(`${api}/invitations/accept`, {
      method: "POST",
      headers: { authorization: `Bearer ${await signIn(invitee)}`, "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    assertEquals([accepted.status, (await accepted.json()).role], [200, "staff"]);
  } finally {
    await stack.stop();
    await closeSql();
  }
});
