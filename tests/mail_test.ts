// E-mail to the people who must act, end to end: the outbox written with the change, the mail-sender
// function as deployed, and a real SMTP server on loopback that catches what it sends (or refuses it,
// or is not there at all). An invitation mail carries the accept link, and following it joins the
// organization; failing-endpoint mails go once per episode; an unreachable mail server loses no mail.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { asConfigApi, closeSql, createTenant, createUser, sql, type TestUser } from "./helpers/db.ts";
import { rowsMentioning } from "./helpers/catalogue_search.ts";
import { createEndpoint } from "./helpers/outbound.ts";
import { serve, serveFunction } from "./helpers/server.ts";
import { startSmtpServer } from "./helpers/smtp_server.ts";
import { testConfig, tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { createApp } from "../supabase/functions/mail-sender/app.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";

const SECRET = "mail-test-dispatch-secret";
const SITE = "http://127.0.0.1:54323";
const bearer = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });

/** The mail-sender function served on loopback, configured by environment as deployed. */
async function startSender(env: Record<string, string>) {
  const config = await testConfig({ WEBHOOK_DISPATCH_SECRET: SECRET, SITE_URL: SITE, ...env });
  const pool = createSql(config.dbUrl, { max: 2 });
  const server = await serveFunction("mail-sender", createApp({ config, sql: pool }, { log: () => {} }));
  return {
    base: server.base,
    /** One run, as pg_net would start it; answers what it did (plain Deno awaits the run). */
    async run(): Promise<{ claimed: number; sent: number; failed: number }> {
      const res = await fetch(server.base, { method: "POST", headers: bearer(SECRET), body: "{}" });
      assertEquals(res.status, 200);
      return await res.json();
    },
    async close() {
      await server.close();
      await pool.end();
    },
  };
}

async function confirmed(user: TestUser): Promise<TestUser> {
  await sql()`update auth.users set email_confirmed_at = now() where id = ${user.id}`;
  return user;
}

/** Mails of the outbox to one address, oldest first. */
async function outbox(recipient: string) {
  return await sql()<
    {
      id: string;
      kind: string;
      status: string;
      attempts: number;
      data: Record<string, unknown>;
      last_error: string;
    }[]
  >`select id, kind, status, attempts, data, last_error from private.mail_outbox
    where recipient = ${recipient.toLowerCase()} order by created_at, id`;
}

async function operatorHealth() {
  const [row] = await sql()`select public.mail_operator_health() as h`;
  return row!.h;
}

/** Mails other tests left waiting are not due in this one (the sender claims whatever is due). */
async function onlyNewMailIsDue() {
  await sql()`update private.mail_outbox set next_attempt_at = now() + interval '1 day' where status = 'pending'`;
}

/** The clock moves past the retry delay of these mails. */
async function due(ids: string[]) {
  await sql()`update private.mail_outbox set next_attempt_at = now() where id = any(${ids}::uuid[]) and status = 'pending'`;
}

Deno.test("an invitation is mailed with its accept link; following it joins; the token leaves the outbox once sent", async () => {
  await onlyNewMailIsDue();
  const smtp = await startSmtpServer();
  const sender = await startSender({
    SMTP_URL: smtp.url,
    MAIL_FROM: "Church settings <no-reply@church.example>",
    MAIL_ABUSE_ADDRESS: "abuse@platform.example",
  });
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    await confirmed(a.admin);
    const invitee = await confirmed(await createUser());
    const created = await (await fetch(`${api.base}/invitations`, {
      method: "POST",
      headers: bearer(await tokenFor(a.admin, a.organizationId)),
      body: JSON.stringify({ email: invitee.email, role: "staff" }),
    })).json();
    const [queued] = await outbox(invitee.email);
    assertEquals([queued!.kind, queued!.status, queued!.data.token], [
      "invitation",
      "pending",
      created.token,
    ]);

    assertEquals(await sender.run(), { claimed: 1, sent: 1, failed: 0 });
    const [caught] = await smtp.waitFor(1);
    assertEquals(caught!.to, [invitee.email]);
    assertEquals(caught!.from, "no-reply@church.example");
    assertMatch(caught!.subject, /You are invited to join Church /);
    const link = /(http:\/\/127\.0\.0\.1:54323\/invitations\/accept#token=(inv_[0-9a-f]{64}))/.exec(
      caught!.text,
    );
    assert(link, `the text carries the accept link:\n${caught!.text}`);
    assert(caught!.html.includes(`href="${link[1]}"`), "so does the HTML");
    // Which church sent it, in a way the invitee can quote, and where to report it.
    assertMatch(
      caught!.text,
      new RegExp(
        `sent for the organization Church [^\n]* \\(reference ${a.organizationId}\\) by ${a.admin.email}\\. ` +
          `If you do not know it[^\n]*report it: forward this e-mail to abuse@platform\\.example\\.`,
      ),
    );
    assertEquals(link[2], created.token);

    // Sent: the token is nowhere in the database any more (the invitation keeps its SHA-256 only).
    const [sent] = await outbox(invitee.email);
    assertEquals(sent!.status, "sent");
    assertEquals(sent!.data.token, undefined);
    assertEquals(await rowsMentioning(created.token), []);

    // Following the link: the invitee, signed in, accepts with the token it carries.
    const joined = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: bearer(await tokenFor(invitee)),
      body: JSON.stringify({ token: decodeURIComponent(link[2]!) }),
    });
    assertEquals([joined.status, await joined.json()], [200, {
      organization_id: a.organizationId,
      role: "staff",
    }]);
    const [member] = await sql()`select role from public.profiles
                                 where user_id = ${invitee.id} and organization_id = ${a.organizationId}`;
    assertEquals(member!.role, "staff");
    assertEquals(await sender.run(), { claimed: 0, sent: 0, failed: 0 }, "nothing is sent twice");
  } finally {
    await api.close();
    await sender.close();
    await smtp.close();
  }
});

Deno.test("a revoked or replaced invitation's mail is never sent, and its token is cleared", async () => {
  await onlyNewMailIsDue();
  const smtp = await startSmtpServer();
  const sender = await startSender({ SMTP_URL: smtp.url });
  try {
    const a = await createTenant();
    const invitee = await createUser();
    const first = await asConfigApi(
      a.adminClaims,
      (tx) => tx`select public.create_invitation(${invitee.email}, 'staff') as i`,
    );
    // A minute later, before the mail went (one invitation mail to an address a minute).
    await sql()`update private.mail_outbox set created_at = created_at - interval '61 seconds'
                where recipient = ${invitee.email}`;
    const second = await asConfigApi(
      a.adminClaims,
      (tx) => tx`select public.create_invitation(${invitee.email}, 'admin') as i`,
    );
    assertEquals(await sender.run(), { claimed: 1, sent: 1, failed: 0 });
    const mails = await outbox(invitee.email);
    assertEquals(mails.map((m) => [m.status, m.data.token ?? null]), [["cancelled", null], ["sent", null]]);
    const [caught] = await smtp.waitFor(1);
    assert(caught!.text.includes(second[0]!.i.token), "the newer invitation's link");
    assert(!caught!.text.includes(first[0]!.i.token));
  } finally {
    await sender.close();
    await smtp.close();
  }
});

Deno.test("an unreachable mail server loses no mail: retried with backoff, visible to the operator, sent once back", async () => {
  await onlyNewMailIsDue();
  // A port nothing listens on: take one, then give it up.
  const probe = await startSmtpServer();
  const port = probe.port;
  await probe.close();
  const sender = await startSender({ SMTP_URL: `smtp://127.0.0.1:${port}` });
  let smtp: Awaited<ReturnType<typeof startSmtpServer>> | undefined;
  try {
    const a = await createTenant();
    const invitee = await createUser();
    await asConfigApi(a.adminClaims, (tx) => tx`select public.create_invitation(${invitee.email}, 'staff')`);
    assertEquals(await sender.run(), { claimed: 1, sent: 0, failed: 1 });
    let [m] = await outbox(invitee.email);
    assertEquals([m!.status, m!.attempts], ["pending", 1]);
    assertMatch(m!.last_error, /ECONNREFUSED|ESOCKET|connect/);
    assert(m!.data.token, "the token waits with its mail");
    const [delayRow] = await sql()<{ delay: number }[]>`
      select extract(epoch from next_attempt_at - last_attempt_at)::int as delay from private.mail_outbox where id = ${
      m!.id
    }`;
    assertEquals(delayRow!.delay, 30, "the first retry comes after 30 s");
    assertEquals(await sender.run(), { claimed: 0, sent: 0, failed: 0 }, "not before it is due");

    // The operator sees it waiting and why.
    const health = await operatorHealth();
    assertEquals(health.queue.retrying >= 1, true);
    assertEquals(health.last_failure.kind, "invitation");
    assertMatch(health.last_failure.error, /ECONNREFUSED|ESOCKET|connect/);
    await sql()`update private.mail_outbox set created_at = now() - interval '1 hour', next_attempt_at = now() - interval '20 minutes'
                where id = ${m!.id}`;
    const late = await operatorHealth();
    assertEquals(late.status, "critical");
    assert(late.alerts.some((x: { code: string }) => x.code === "mail_behind"), JSON.stringify(late.alerts));

    // The server comes back but answers 451 (try later): still kept, backing off further.
    smtp = await startSmtpServer(port);
    smtp.mode = "tempfail";
    assertEquals(await sender.run(), { claimed: 1, sent: 0, failed: 1 });
    [m] = await outbox(invitee.email);
    assertEquals([m!.status, m!.attempts], ["pending", 2]);
    assertMatch(m!.last_error, /451/);
    // And accepts: the mail goes, once.
    smtp.mode = "accept";
    await due([m!.id]);
    assertEquals(await sender.run(), { claimed: 1, sent: 1, failed: 0 });
    [m] = await outbox(invitee.email);
    assertEquals([m!.status, m!.attempts, m!.data.token], ["sent", 3, undefined]);
    assertEquals((await smtp.waitFor(1)).length, 1);

    // A mailbox refused for good (550) is given up at once, and says so.
    const bounced = await createUser();
    await asConfigApi(a.adminClaims, (tx) => tx`select public.create_invitation(${bounced.email}, 'staff')`);
    smtp.mode = "permfail";
    assertEquals(await sender.run(), { claimed: 1, sent: 0, failed: 1 });
    const [gone] = await outbox(bounced.email);
    assertEquals([gone!.status, gone!.data.token], ["failed", undefined]);
    const after = await operatorHealth();
    assert(
      after.alerts.some((x: { code: string }) => x.code === "mail_given_up"),
      JSON.stringify(after.alerts),
    );
  } finally {
    await sender.close();
    await smtp?.close();
  }
});

Deno.test("failing-endpoint mails go to the organization's admins, once per episode", async () => {
  await onlyNewMailIsDue();
  const smtp = await startSmtpServer();
  const sender = await startSender({ SMTP_URL: smtp.url });
  try {
    const a = await createTenant();
    await confirmed(a.admin);
    await confirmed(a.staff);
    const endpoint = await createEndpoint(a.organizationId, "https://hooks.example.org/church", [
      "member.created",
    ]);
    // Failing for 4 days and an hour: an hour is long past, and the disable is less than a day away.
    await sql().begin(async (tx) => {
      await tx`set local session_replication_role = replica`; // past the trigger that stamps updated_at
      await tx`update public.webhook_endpoints set updated_at = now() - interval '6 days' where id = ${endpoint.id}`;
    });
    await sql()`insert into public.webhook_endpoint_health (endpoint_id, organization_id, last_attempt_at,
                  last_response_status, last_outcome, consecutive_failures, failing_since)
                values (${endpoint.id}, ${a.organizationId}, now(), 500, 'failed', 40, now() - interval '4 days 1 hour')`;
    const housekeeping = async () => (await sql()`select private.mail_housekeeping() as r`)[0]!.r;
    assertEquals((await housekeeping()).alerts_queued, 2);
    assertEquals((await housekeeping()).alerts_queued, 0, "the next minute: nothing new");
    assertEquals((await outbox(a.staff.email)).length, 0, "staff are not told");

    // The system disables it (as for 5 days of failures or 410 Gone): one more mail, same transaction.
    await sql()`select private.webhook_disable_endpoints(${
      JSON.stringify([{ endpoint_id: endpoint.id, reason: "every attempt failed for 5 days" }])
    }::text::jsonb)`;
    assertEquals((await housekeeping()).alerts_queued, 0);
    assertEquals((await outbox(a.admin.email)).map((m) => m.kind).sort(), [
      "endpoint_disable_soon",
      "endpoint_disabled",
      "endpoint_failing",
    ]);
    assertEquals(await sender.run(), { claimed: 3, sent: 3, failed: 0 });
    const mails = await smtp.waitFor(3);
    assertEquals(mails.map((m) => m.to[0]), [a.admin.email, a.admin.email, a.admin.email]);
    const subjects = mails.map((m) => m.subject).sort();
    assertMatch(subjects[0]!, /has been failing for over an hour/);
    assertMatch(subjects[1]!, /was disabled/);
    assertMatch(subjects[2]!, /will be disabled in a day/);
    assert(
      mails.every((m) => m.text.includes("https://hooks.example.org/church")),
      "each names the endpoint",
    );
    assert(mails.every((m) => m.text.includes(`${SITE}/settings/integrations/webhooks`)), "and links to it");

    // An admin enables it again; it fails again: a new episode, a new mail after an hour, once.
    await asConfigApi(
      a.adminClaims,
      (tx) => tx`update public.webhook_endpoints set enabled = true where id = ${endpoint.id}`,
    );
    await sql()`update public.webhook_endpoint_health set failing_since = now() - interval '61 minutes', last_outcome = 'failed'
                where endpoint_id = ${endpoint.id}`;
    assertEquals((await housekeeping()).alerts_queued, 1);
    assertEquals((await housekeeping()).alerts_queued, 0);
    // An admin's own disable sends nothing: whoever did it knows.
    await asConfigApi(
      a.adminClaims,
      (tx) => tx`update public.webhook_endpoints set enabled = false where id = ${endpoint.id}`,
    );
    assertEquals((await outbox(a.admin.email)).length, 4);
  } finally {
    await sender.close();
    await smtp.close();
  }
});

Deno.test("an admin's words in a mail stay words: HTML escaped, on one line, headers untouched", async () => {
  await onlyNewMailIsDue();
  const smtp = await startSmtpServer();
  const sender = await startSender({ SMTP_URL: smtp.url });
  try {
    const a = await createTenant();
    await confirmed(a.admin);
    const lure = "Your account is locked: sign in at https://evil.example/login";
    // What an admin can store: the description through the API or PostgREST, the name as it was before
    // names had to be one line (set as the server, so this test keeps checking the template itself).
    await sql()`update public.organizations set name = ${"Grace <b>Church</b>"} where id = ${a.organizationId}`;
    const endpoint = await createEndpoint(a.organizationId, "https://hooks.example.org/inj", [
      "member.created",
    ]);
    await sql()`update public.webhook_endpoints
                set description = ${`<script>alert(1)</script><img src=x onerror=alert(2)>\r\n\r\n${lure}`}
                where id = ${endpoint.id}`;
    await sql()`select private.webhook_disable_endpoints(${
      JSON.stringify([{ endpoint_id: endpoint.id, reason: `gone\r\nBcc: victim@example.org\r\n\r\n${lure}` }])
    }::text::jsonb)`;
    assertEquals((await sender.run()).sent, 1);
    const [mail] = await smtp.waitFor(1);
    assertEquals(mail!.to, [a.admin.email], "no header was added by a line break in a value");
    assertMatch(mail!.subject, /^A webhook endpoint of Grace <b>Church<\/b> was disabled$/);
    assert(!/<script|<img|<b>/i.test(mail!.html), `no markup of the admin's: ${mail!.html}`);
    assert(mail!.html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), "shown as text");
    // The lure stays inside the sentence that quotes the description or reason, never a paragraph of its own.
    const lines = mail!.text.split("\n");
    assertEquals(lines.filter((l) => l.includes(lure)).length, 1, mail!.text);
    assert(lines.every((l) => !l.startsWith(lure) && !l.startsWith("Bcc:")), mail!.text);
  } finally {
    await sender.close();
    await smtp.close();
  }
});

Deno.test("over an HTTP e-mail API (Resend's shape): keyed for idempotency, retried on 5xx, given up on 422", async () => {
  await onlyNewMailIsDue();
  const requests: { auth: string | null; key: string | null; body: Record<string, unknown> }[] = [];
  let answer = 500;
  const provider = await serve(async (req) => {
    if (new URL(req.url).pathname !== "/emails" || req.method !== "POST") {
      return new Response("no", { status: 404 });
    }
    const body = await req.json();
    requests.push({ auth: req.headers.get("authorization"), key: req.headers.get("idempotency-key"), body });
    if (answer !== 200) return Response.json({ message: "nope" }, { status: answer });
    return Response.json({ id: `re_${requests.length}` });
  });
  const sender = await startSender({ RESEND_API_KEY: "re_test_key", RESEND_API_URL: provider.url });
  try {
    const a = await createTenant();
    const invitee = await createUser();
    await asConfigApi(a.adminClaims, (tx) => tx`select public.create_invitation(${invitee.email}, 'staff')`);
    assertEquals(await sender.run(), { claimed: 1, sent: 0, failed: 1 });
    let [m] = await outbox(invitee.email);
    assertEquals([m!.status, m!.attempts], ["pending", 1]);
    answer = 200;
    await due([m!.id]);
    assertEquals(await sender.run(), { claimed: 1, sent: 1, failed: 0 });
    [m] = await outbox(invitee.email);
    assertEquals(m!.status, "sent");
    const [sentRow] = await sql()`select provider_message_id from private.mail_outbox where id = ${m!.id}`;
    assertEquals(sentRow!.provider_message_id, "re_2");
    assertEquals(requests.map((r) => [r.auth, r.key]), [["Bearer re_test_key", m!.id], [
      "Bearer re_test_key",
      m!.id,
    ]]);
    assertEquals(requests[1]!.body.to, [invitee.email]);
    assert(String(requests[1]!.body.text).includes("/invitations/accept#token=inv_"));

    const refused = await createUser();
    await asConfigApi(a.adminClaims, (tx) => tx`select public.create_invitation(${refused.email}, 'staff')`);
    answer = 422;
    assertEquals(await sender.run(), { claimed: 1, sent: 0, failed: 1 });
    const [gone] = await outbox(refused.email);
    assertEquals(gone!.status, "failed");
  } finally {
    await sender.close();
    await provider.close();
  }
});

Deno.test("the sender refuses callers without the secret, and says when mail is not configured", async () => {
  const noMail = await testConfig({ WEBHOOK_DISPATCH_SECRET: SECRET });
  const pool = createSql(noMail.dbUrl, { max: 1 });
  const server = await serveFunction("mail-sender", createApp({ config: noMail, sql: pool }));
  try {
    const anon = await fetch(server.base, { method: "POST", body: "{}" });
    assertEquals(anon.status, 401);
    await anon.body?.cancel();
    const wrong = await fetch(server.base, { method: "POST", headers: bearer("not-the-secret"), body: "{}" });
    assertEquals(wrong.status, 401);
    await wrong.body?.cancel();
    const unconfigured = await fetch(server.base, { method: "POST", headers: bearer(SECRET), body: "{}" });
    assertEquals([unconfigured.status, (await unconfigured.json()).error.code], [503, "service_unavailable"]);
  } finally {
    await server.close();
    await pool.end();
  }
});

Deno.test("a run's body must be {max_mails?, wait?}: anything else is a 400 and sends nothing", async () => {
  const sender = await startSender({ SMTP_URL: "smtp://127.0.0.1:9" });
  try {
    for (const body of ['{"max_mails": 0}', '{"max_mails": "all"}', '{"to": "someone@example.org"}']) {
      const res = await fetch(sender.base, { method: "POST", headers: bearer(SECRET), body });
      assertEquals([res.status, await res.json()], [400, {
        error: { code: "invalid_body", message: "Expected {max_mails?, wait?}" },
      }], body);
    }
  } finally {
    await sender.close();
  }
});

Deno.test("with the mail server down, a run stops after one batch that failed entirely", async () => {
  await onlyNewMailIsDue();
  const probe = await startSmtpServer();
  await probe.close();
  const sender = await startSender({ SMTP_URL: probe.url });
  try {
    const a = await createTenant();
    for (let i = 0; i < 25; i++) {
      const invitee = await createUser();
      await asConfigApi(
        a.adminClaims,
        (tx) => tx`select public.create_invitation(${invitee.email}, 'staff')`,
      );
    }
    // One batch (20) is tried; the other 5 wait for the next run instead of more failed connections.
    assertEquals(await sender.run(), { claimed: 20, sent: 0, failed: 20 });
    const [left] = await sql()`select count(*)::int as n from private.mail_outbox
                               where organization_id = ${a.organizationId} and attempts = 0 and status = 'pending'`;
    assertEquals(left!.n, 5);
  } finally {
    await sender.close();
  }
});

Deno.test("a run the runtime is shutting down claims nothing; the mail waits for the next", async () => {
  await onlyNewMailIsDue();
  const smtp = await startSmtpServer();
  const config = await testConfig({ WEBHOOK_DISPATCH_SECRET: SECRET, SITE_URL: SITE, SMTP_URL: smtp.url });
  const pool = createSql(config.dbUrl, { max: 1 });
  const shutdown = new AbortController();
  shutdown.abort();
  const server = await serveFunction(
    "mail-sender",
    createApp({ config, sql: pool }, { shutdown: shutdown.signal, log: () => {} }),
  );
  try {
    const a = await createTenant();
    const invitee = await createUser();
    await asConfigApi(a.adminClaims, (tx) => tx`select public.create_invitation(${invitee.email}, 'staff')`);
    const res = await fetch(server.base, { method: "POST", headers: bearer(SECRET), body: "{}" });
    assertEquals(await res.json(), { claimed: 0, sent: 0, failed: 0 });
    const [m] = await outbox(invitee.email);
    assertEquals([m!.status, m!.attempts], ["pending", 0]);
  } finally {
    await server.close();
    await pool.end();
    await smtp.close();
  }
});

Deno.test("teardown", async () => {
  await closeSql();
});
