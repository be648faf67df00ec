// Revealing an endpoint's signing secret, tried as an attacker would: only an administrator of the
// endpoint's organization, with a sign-in of the last 10 minutes, gets it, and each reveal is in the
// organization's audit log. Staff, another organization's admin, a stale session, a signed-out token, an
// API key and the Data API get nothing, and nothing is logged for them.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { asUser, closeSql, createTenant, sql } from "./helpers/db.ts";
import { newSession, tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const reveals = async (org: string) =>
  (await sql()<{ n: number }[]>`
    select count(*)::int as n from public.audit_log
    where organization_id = ${org} and action = 'endpoint.secret_revealed'`)[0]!.n;

Deno.test("reveal-secret: the admin's fresh session gets the secret and an audit entry; nobody else gets either", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = asBearer(await tokenFor(a.admin, a.organizationId));
    const created = await call(api.base, "POST", "/endpoints", adminA, {
      url: "http://127.0.0.1:9/hook",
      events: ["member.created"],
    });
    assertEquals(created.status, 201, created.text);
    const path = `/endpoints/${created.data.id}/reveal-secret`;

    // The admin, signed in just now: the secret the endpoint was made with, and one audit entry.
    const ok = await call(api.base, "POST", path, adminA);
    assertEquals(ok.status, 200, ok.text);
    assertEquals(ok.data.secret, created.data.secret);
    assert(Math.abs(Date.parse(ok.data.revealed_at) - Date.now()) < 60_000);
    const [entry] = await sql()<
      { actor_kind: string; actor_user_id: string; actor_email: string; details: unknown }[]
    >`
      select actor_kind, actor_user_id, actor_email, details from public.audit_log
      where organization_id = ${a.organizationId} and action = 'endpoint.secret_revealed'`;
    assertEquals(entry, {
      actor_kind: "admin",
      actor_user_id: a.admin.id,
      actor_email: a.admin.email,
      details: { endpoint_id: created.data.id, url: "http://127.0.0.1:9/hook" },
    });
    // The organization's admins read it in their audit log, with who did it.
    const log = await call(api.base, "GET", "/audit-log", adminA);
    assertEquals(log.data.data[0].action, "endpoint.secret_revealed");
    assertEquals([log.data.data[0].actor.kind, log.data.data[0].actor.email], ["admin", a.admin.email]);
    assert(!log.text.includes(created.data.secret), "the audit log never holds the secret");

    // A session signed in 11 minutes ago (its tokens refreshed since, as Auth does): sign in again first.
    const stale = await newSession(a.admin);
    await sql()`update auth.sessions set created_at = now() - interval '11 minutes' where id = ${stale}`;
    const staleToken = asBearer(await tokenFor(a.admin, a.organizationId, { session: stale }));
    const refused = await call(api.base, "POST", path, staleToken);
    assertEquals([refused.status, refused.data.error.code], [403, "reauthentication_required"], refused.text);
    assertMatch(refused.data.error.message, /within the last 10 minutes/);

    // Staff of the organization, another organization's admin, a signed-out token, an API key.
    const staff = await call(api.base, "POST", path, asBearer(await tokenFor(a.staff, a.organizationId)));
    assertEquals([staff.status, staff.data.error.code], [403, "admin_required"]);
    const other = await call(api.base, "POST", path, asBearer(await tokenFor(b.admin, b.organizationId)));
    assertEquals(other.status, 404, other.text);
    const ended = await newSession(a.admin);
    const endedToken = asBearer(await tokenFor(a.admin, a.organizationId, { session: ended }));
    await sql()`delete from auth.sessions where id = ${ended}`;
    assertEquals((await call(api.base, "POST", path, endedToken)).data.error.code, "session_not_found");
    const key = (await call(api.base, "POST", "/api-keys", adminA, { name: "Zapier" })).data.key as string;
    const byKey = await call(api.base, "POST", path, { "x-api-key": key });
    assertEquals([byKey.status, byKey.data.error.code], [403, "user_required"]);
    for (const r of [refused, staff, other, byKey]) assert(!r.text.includes(created.data.secret));
    assertEquals(await reveals(a.organizationId), 1, "only the admin's reveal is logged");
    assertEquals(await reveals(b.organizationId), 0);

    // The Data API's role cannot call the function at all, even for the admin's fresh session.
    const err = await asUser(
      a.adminClaims,
      (tx) => tx`select private.webhook_reveal_secret(${created.data.id})`,
    )
      .then(() => null, (e: { code?: string }) => e.code);
    assertEquals(err, "42501", "permission denied to authenticated");
  } finally {
    await api.close();
    await closeSql();
  }
});
