// Settings > People through the configuration API as deployed: an admin lists the organization's
// members (role, joined date, last sign-in), changes roles and removes members, each taking effect at the
// affected person's next request; the last admin stays; invitations are resent, and one address is not
// mailed over and over (six re-invitations in a few seconds queue one mail). Tried as an attacker would:
// staff, another organization's admin, an API key, a removed member, a signed-out session.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { addMember, closeSql, createTenant, createUser, sql, type TestUser } from "./helpers/db.ts";
import { newSession, tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
let api: Awaited<ReturnType<typeof startWebhooksApi>>;

const unique = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}@example.org`;

async function membershipId(user: TestUser, organizationId: string): Promise<string> {
  const [row] = await sql()<{ id: string }[]>`
    select id from public.profiles where user_id = ${user.id} and organization_id = ${organizationId}`;
  return row!.id;
}

async function roleOf(user: TestUser, organizationId: string): Promise<string | null> {
  const [row] = await sql()<{ role: string }[]>`
    select role from public.profiles where user_id = ${user.id} and organization_id = ${organizationId}`;
  return row?.role ?? null;
}

Deno.test("setup", opts, async () => {
  api = await startWebhooksApi();
});

Deno.test(
  "an admin lists the people: role, joined date, last sign-in, admins first, which one is them",
  opts,
  async () => {
    const a = await createTenant();
    await sql()`update auth.users set last_sign_in_at = '2026-11-27T18:04:12Z' where id = ${a.staff.id}`;
    await sql()`update public.profiles set created_at = '2026-11-02T09:30:00Z'
              where user_id = ${a.staff.id} and organization_id = ${a.organizationId}`;
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const res = await call(api.base, "GET", "/people", admin);
    assertEquals(res.status, 200, res.text);
    assertEquals(res.data.has_more, false);
    assertEquals(
      res.data.data.map((p: Record<string, unknown>) => [p.email, p.role, p.you, p.last_sign_in_at]),
      [[a.admin.email, "admin", true, null], [a.staff.email, "staff", false, "2026-11-27T18:04:12.000Z"]],
    );
    const staff = res.data.data[1];
    assertEquals(
      [staff.id, staff.user_id, staff.joined_at],
      [await membershipId(a.staff, a.organizationId), a.staff.id, "2026-11-02T09:30:00.000Z"],
    );
  },
);

Deno.test(
  "a role change applies at the person's next request, with the token they already hold",
  opts,
  async () => {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const staffToken = asBearer(await tokenFor(a.staff, a.organizationId));
    const staffId = await membershipId(a.staff, a.organizationId);
    assertEquals((await call(api.base, "GET", "/endpoints", staffToken)).status, 403, "staff first");

    const promoted = await call(api.base, "PATCH", `/people/${staffId}`, admin, { role: "admin" });
    assertEquals(
      [promoted.status, promoted.data.role, promoted.data.you],
      [200, "admin", false],
      promoted.text,
    );
    assertEquals(
      (await call(api.base, "GET", "/endpoints", staffToken)).status,
      200,
      "admin at the next request",
    );
    assertEquals((await call(api.base, "GET", "/people", staffToken)).status, 200);

    const demoted = await call(api.base, "PATCH", `/people/${staffId}`, admin, { role: "staff" });
    assertEquals([demoted.status, demoted.data.role], [200, "staff"]);
    assertEquals((await call(api.base, "GET", "/endpoints", staffToken)).status, 403, "staff again at once");
    assertEquals((await call(api.base, "GET", "/people", staffToken)).data.error.code, "admin_required");

    // An admin who makes themselves staff is answered, and is staff from then on.
    await call(api.base, "PATCH", `/people/${staffId}`, admin, { role: "admin" });
    const self = await call(
      api.base,
      "PATCH",
      `/people/${await membershipId(a.admin, a.organizationId)}`,
      admin,
      {
        role: "staff",
      },
    );
    assertEquals([self.status, self.data.role, self.data.you], [200, "staff", true], self.text);
    assertEquals((await call(api.base, "GET", "/people", admin)).status, 403);
  },
);

Deno.test(
  "the last admin can be neither demoted nor removed: 409 at the field, nothing changes",
  opts,
  async () => {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const own = await membershipId(a.admin, a.organizationId);

    const demote = await call(api.base, "PATCH", `/people/${own}`, admin, { role: "staff" });
    assertEquals([demote.status, demote.data.error.code], [409, "last_admin"], demote.text);
    assertEquals(demote.data.error.details.fields.map((f: { field: string }) => f.field), ["role"]);
    assertMatch(demote.data.error.message, /make another member admin first/);
    const remove = await call(api.base, "DELETE", `/people/${own}`, admin);
    assertEquals([remove.status, remove.data.error.code], [409, "last_admin"]);
    assertEquals(remove.data.error.details.fields.map((f: { field: string }) => f.field), ["id"]);
    assertEquals(await roleOf(a.admin, a.organizationId), "admin");

    // Two admins demoting each other at the same moment: one of them stays admin.
    const second = await createUser();
    await addMember(second.id, a.organizationId, "admin");
    const secondToken = asBearer(await tokenFor(second, a.organizationId));
    const [x, y] = await Promise.all([
      call(api.base, "PATCH", `/people/${await membershipId(second, a.organizationId)}`, admin, {
        role: "staff",
      }),
      call(api.base, "PATCH", `/people/${own}`, secondToken, { role: "staff" }),
    ]);
    // (the second to run finds itself staff already, 403, or the other one gone, 409: never both 200)
    const statuses = [x.status, y.status].sort();
    assert(statuses[0] === 200 && [403, 409].includes(statuses[1]!), `${x.text} ${y.text}`);
    const [admins] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.profiles where organization_id = ${a.organizationId} and role = 'admin'`;
    assertEquals(admins!.n, 1);
  },
);

Deno.test(
  "removing a member: they lose access at their next request, and the API keys they made end",
  opts,
  async () => {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const second = await createUser();
    await addMember(second.id, a.organizationId, "admin");
    await sql()`insert into public.user_active_organization (user_id, organization_id)
              values (${second.id}, ${a.organizationId})`;
    const secondToken = asBearer(await tokenFor(second, a.organizationId));
    const key = (await call(api.base, "POST", "/api-keys", secondToken, { name: "Zapier" })).data
      .key as string;
    assertEquals((await call(api.base, "GET", "/endpoints", { "x-api-key": key })).status, 200);

    const removed = await call(
      api.base,
      "DELETE",
      `/people/${await membershipId(second, a.organizationId)}`,
      admin,
    );
    assertEquals(
      [removed.status, removed.data.email, removed.data.role],
      [200, second.email, "admin"],
      removed.text,
    );
    assertEquals(await roleOf(second, a.organizationId), null);
    assertEquals(
      (await call(api.base, "GET", "/endpoints", secondToken)).status,
      403,
      "their token does nothing",
    );
    assertEquals((await call(api.base, "GET", "/people", secondToken)).status, 403);
    assertEquals(
      (await call(api.base, "GET", "/endpoints", { "x-api-key": key })).data.error.code,
      "invalid_api_key",
      "the key they made ended with their authority",
    );
    const me = await call(api.base, "GET", "/me", secondToken);
    assertEquals([me.data.active_organization_id, me.data.memberships], [null, []]);
    const [remembered] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.user_active_organization where user_id = ${second.id}`;
    assertEquals(remembered!.n, 0, "nor is the organization remembered for their next token");

    const again = await call(
      api.base,
      "DELETE",
      `/people/${await membershipId(a.staff, a.organizationId)}`,
      admin,
    );
    assertEquals(again.status, 200, "control: staff are removed too");
    const list = await call(api.base, "GET", "/people", admin);
    assertEquals(list.data.data.map((p: { email: string }) => p.email), [a.admin.email]);
  },
);

Deno.test(
  "staff, another organization's admin, API keys, removed members and signed-out sessions cannot manage people",
  opts,
  async () => {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = asBearer(await tokenFor(a.admin, a.organizationId));
    const staffId = await membershipId(a.staff, a.organizationId);
    const adminId = await membershipId(a.admin, a.organizationId);
    const key = (await call(api.base, "POST", "/api-keys", adminA, { name: "Make" })).data.key as string;
    const removed = await createUser();
    await addMember(removed.id, a.organizationId, "admin");
    const removedToken = asBearer(await tokenFor(removed, a.organizationId));
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    const session = await newSession(a.admin);
    const signedOut = asBearer(await tokenFor(a.admin, a.organizationId, { session }));
    await sql()`delete from auth.sessions where id = ${session}`;

    const attempts: [string, string, unknown?][] = [
      ["GET", "/people"],
      ["PATCH", `/people/${staffId}`, { role: "admin" }],
      ["PATCH", `/people/${adminId}`, { role: "staff" }],
      ["DELETE", `/people/${adminId}`],
    ];
    const callers: [string, Record<string, string>, number, string][] = [
      ["staff", asBearer(await tokenFor(a.staff, a.organizationId)), 403, "admin_required"],
      ["removed member", removedToken, 403, "admin_required"],
      ["API key", { "x-api-key": key, "content-type": "application/json" }, 403, "user_required"],
      ["signed-out session", signedOut, 401, "session_not_found"],
      ["anonymous", { "content-type": "application/json" }, 401, "missing_token"],
    ];
    for (const [who, headers, status, code] of callers) {
      for (const [method, path, body] of attempts) {
        const res = await call(api.base, method, path, headers, body);
        assertEquals(
          [res.status, res.data?.error?.code],
          [status, code],
          `${who} ${method} ${path}: ${res.text}`,
        );
      }
    }
    // Another organization's admin: A's people are unknown to them, and their list shows B's only.
    const adminB = asBearer(await tokenFor(b.admin, b.organizationId));
    for (const [method, path, body] of attempts.slice(1)) {
      const res = await call(api.base, method, path, adminB, body);
      assertEquals([res.status, res.data.error.code], [404, "not_found"], `admin of B ${method} ${path}`);
    }
    const bList = await call(api.base, "GET", "/people", adminB);
    assertEquals(
      bList.data.data.map((p: { email: string }) => p.email).sort(),
      [b.admin.email, b.staff.email].sort(),
    );
    assert(!bList.text.includes(a.organizationId) && !bList.text.includes(staffId), "nothing of A");
    // The same admin of A, their token claiming B: nothing of B.
    const claimingB = asBearer(await tokenFor(a.admin, b.organizationId));
    assertEquals((await call(api.base, "GET", "/people", claimingB)).status, 403);

    assertEquals([await roleOf(a.staff, a.organizationId), await roleOf(a.admin, a.organizationId)], [
      "staff",
      "admin",
    ], "nothing of A changed");
  },
);

Deno.test(
  "bad input: an unknown role or field is a 400 naming it; a malformed id is a 404",
  opts,
  async () => {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const staffId = await membershipId(a.staff, a.organizationId);
    const owner = await call(api.base, "PATCH", `/people/${staffId}`, admin, { role: "owner" });
    assertEquals([owner.status, owner.data.error.details.fields[0].field], [400, "role"], owner.text);
    const extra = await call(api.base, "PATCH", `/people/${staffId}`, admin, {
      role: "admin",
      user_id: a.admin.id,
    });
    assertEquals(extra.status, 400, extra.text);
    const none = await call(api.base, "PATCH", `/people/${staffId}`, admin, {});
    assertEquals([none.status, none.data.error.details.fields[0].field], [400, "role"]);
    assertEquals((await call(api.base, "DELETE", "/people/not-a-uuid", admin)).status, 404);
    assertEquals((await call(api.base, "DELETE", `/people/${crypto.randomUUID()}`, admin)).status, 404);
    assertEquals(await roleOf(a.staff, a.organizationId), "staff");
  },
);

Deno.test(
  "six re-invitations of one address in a few seconds queue one mail; the 429 says when the next can go",
  opts,
  async () => {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const address = unique("reinvited");
    const answers = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${api.base}/invitations`, {
        method: "POST",
        headers: admin,
        body: JSON.stringify({ email: address, role: i % 2 ? "admin" : "staff" }),
      });
      answers.push({
        status: res.status,
        retryAfter: res.headers.get("retry-after"),
        body: await res.json(),
      });
    }
    assertEquals(answers.map((r) => r.status), [201, 429, 429, 429, 429, 429]);
    const [queued] = await sql()<{ n: number }[]>`
    select count(*)::int as n from private.mail_outbox where recipient = ${address}`;
    assertEquals(queued!.n, 1, "one mail to the address");
    const refused = answers[5]!;
    assertEquals(refused.body.error.code, "recipient_limited");
    assertEquals(refused.body.error.details.fields[0].field, "email");
    assertMatch(refused.body.error.message, /another can go in \d+ seconds$/);
    const retryAt = Date.parse(refused.body.error.details.retry_at);
    const [mail] = await sql()<{ at: Date }[]>`
    select created_at + interval '1 minute' as at from private.mail_outbox where recipient = ${address}`;
    assertEquals(retryAt, mail!.at.getTime(), "a minute after the mail that went");
    const seconds = Number(refused.retryAfter);
    assert(seconds >= 50 && seconds <= 60, `Retry-After ${refused.retryAfter}`);

    const list = await call(api.base, "GET", "/invitations", admin);
    const open = list.data.data.filter((i: { status: string }) => i.status === "pending");
    assertEquals(open.map((i: { email: string; role: string }) => [i.email, i.role]), [[address, "staff"]]);
    assertEquals(Date.parse(open[0].resend_available_at), retryAt, "the list says when it can be resent");
  },
);

Deno.test(
  "resending an invitation: a new link replaces the old one, once the address may be mailed again",
  opts,
  async () => {
    const a = await createTenant();
    const b = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const address = unique("resent");
    const first =
      (await call(api.base, "POST", "/invitations", admin, { email: address, role: "admin" })).data;

    const early = await call(api.base, "POST", `/invitations/${first.id}/resend`, admin);
    assertEquals([early.status, early.data.error.code], [429, "recipient_limited"], early.text);
    const adminB = asBearer(await tokenFor(b.admin, b.organizationId));
    const other = await call(api.base, "POST", `/invitations/${first.id}/resend`, adminB);
    assertEquals(other.status, 404, "another organization's admin cannot resend it");
    const key = (await call(api.base, "POST", "/api-keys", admin, { name: "n8n" })).data.key as string;
    const byKey = await call(api.base, "POST", `/invitations/${first.id}/resend`, { "x-api-key": key });
    assertEquals([byKey.status, byKey.data.error.code], [403, "user_required"]);
    const staff = asBearer(await tokenFor(a.staff, a.organizationId));
    assertEquals((await call(api.base, "POST", `/invitations/${first.id}/resend`, staff)).status, 403);

    // A minute later (the mail moved back rather than the test waiting).
    await sql()`update private.mail_outbox set created_at = created_at - interval '61 seconds' where recipient = ${address}`;
    const resent = await call(api.base, "POST", `/invitations/${first.id}/resend`, admin);
    assertEquals([resent.status, resent.data.email, resent.data.role], [201, address, "admin"], resent.text);
    assert(resent.data.id !== first.id && resent.data.token !== first.token, "a new invitation and link");
    const statuses = (await call(api.base, "GET", "/invitations", admin)).data.data
      .filter((i: { email: string }) => i.email === address)
      .map((i: { id: string; status: string; resend_available_at: string | null }) => [
        i.id,
        i.status,
        i.resend_available_at === null,
      ]);
    assertEquals(statuses, [[resent.data.id, "pending", false], [first.id, "revoked", true]]);
    const invitee = await createUser(address);
    const oldLink = await call(api.base, "POST", "/invitations/accept", asBearer(await tokenFor(invitee)), {
      token: first.token,
    });
    assertEquals(oldLink.status, 404, "the old link no longer works");
    const again = await call(api.base, "POST", `/invitations/${first.id}/resend`, admin);
    assertEquals(again.status, 404, "a replaced invitation is not resent");

    // Joined meanwhile (through the new link): nothing to resend.
    const joined = await call(api.base, "POST", "/invitations/accept", asBearer(await tokenFor(invitee)), {
      token: resent.data.token,
    });
    assertEquals(joined.status, 200);
    assertEquals((await call(api.base, "POST", `/invitations/${resent.data.id}/resend`, admin)).status, 404);

    // An expired invitation can be sent again.
    const late = unique("expired");
    const expired = (await call(api.base, "POST", "/invitations", admin, { email: late })).data;
    await sql()`update public.organization_invitations set expires_at = now() - interval '1 second' where id = ${expired.id}`;
    await sql()`update private.mail_outbox set created_at = created_at - interval '61 seconds' where recipient = ${late}`;
    const renewed = await call(api.base, "POST", `/invitations/${expired.id}/resend`, admin);
    assertEquals(renewed.status, 201, renewed.text);
  },
);

Deno.test("cleanup", opts, async () => {
  await api?.close();
  await closeSql();
});
