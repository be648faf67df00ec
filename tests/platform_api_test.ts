// The platform console through the configuration API as deployed: who may use it (platform admins and
// superadmins by their live flags; never an organization's admin or staff, an API key, a signed-out
// token, or a token that merely claims the flag), what it shows (health, never a secret or a payload
// body), suspension as the suspended organization's people and keys meet it, and the audit log its
// admins read.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, createUser, sql, type TestUser } from "./helpers/db.ts";
import { newSession, tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

async function platformUser(flags: { superadmin?: boolean } = {}): Promise<TestUser> {
  const user = await createUser(`ops-${crypto.randomUUID()}@platform.example`);
  await sql()`insert into public.platform_user_flags (user_id, is_platform_admin, is_superadmin)
              values (${user.id}, true, ${flags.superadmin ?? false})`;
  return user;
}

/** A token as the access-token hook makes it for a platform user (its claims mirror the flags). */
const platformToken = (user: TestUser, superadmin = false) =>
  tokenFor(user, undefined, { claims: { is_platform_admin: true, is_superadmin: superadmin } });

Deno.test("only platform administrators, by their live flags and a live session, use the platform console", async () => {
  const api = await startWebhooksApi();
  try {
    const t = await createTenant();
    const admin = await platformUser();
    const superadmin = await platformUser({ superadmin: true });
    const forger = await createUser();
    const key =
      (await call(api.base, "POST", "/api-keys", asBearer(await tokenFor(t.admin, t.organizationId)), {
        name: "Zapier",
      })).data.key as string;
    const signedOutSession = await newSession(admin);
    const signedOut = await tokenFor(admin, undefined, {
      session: signedOutSession,
      claims: { is_platform_admin: true },
    });
    await sql()`delete from auth.sessions where id = ${signedOutSession}`;

    const callers: [string, Record<string, string>, number, string | null][] = [
      ["a platform admin", asBearer(await platformToken(admin)), 200, null],
      ["a superadmin", asBearer(await platformToken(superadmin, true)), 200, null],
      [
        "an organization's admin",
        asBearer(await tokenFor(t.admin, t.organizationId)),
        403,
        "platform_admin_required",
      ],
      ["staff", asBearer(await tokenFor(t.staff, t.organizationId)), 403, "platform_admin_required"],
      [
        "a token claiming the flags without them",
        asBearer(
          await tokenFor(forger, undefined, { claims: { is_platform_admin: true, is_superadmin: true } }),
        ),
        403,
        "platform_admin_required",
      ],
      ["an API key", { "x-api-key": key }, 403, "user_required"],
      ["a signed-out platform admin", asBearer(signedOut), 401, "session_not_found"],
      ["nobody", {}, 401, null],
    ];
    for (const [who, headers, status, code] of callers) {
      for (const path of ["/platform/organizations", "/platform/admins", "/platform/audit-log"]) {
        const res = await call(api.base, "GET", path, headers);
        assertEquals(res.status, status, `${who}: GET ${path}: ${res.text}`);
        if (code) assertEquals(res.data.error.code, code, `${who}: GET ${path}`);
      }
      const suspend = await call(api.base, "POST", `/platform/organizations/${t.organizationId}/suspend`, {
        ...headers,
        "content-type": "application/json",
      }, { reason: "probe" });
      if (status === 200) {
        assertEquals(suspend.status, 200, `${who} suspends`);
        const resumed = await call(
          api.base,
          "POST",
          `/platform/organizations/${t.organizationId}/resume`,
          { ...headers, "content-type": "application/json" },
          {},
        );
        assertEquals(resumed.status, 200, `${who} resumes`);
      } else {
        assertEquals(suspend.status, status, `${who} cannot suspend: ${suspend.text}`);
      }
    }

    // The platform's own answer about the caller: from the flags, not the claims.
    const me = await call(
      api.base,
      "GET",
      "/platform/me",
      asBearer(
        await tokenFor(forger, undefined, {
          claims: { is_platform_admin: true, is_superadmin: true },
        }),
      ),
    );
    assertEquals(me.data, { is_platform_admin: false, is_superadmin: false, warnings: [] });
    const superMe = await call(
      api.base,
      "GET",
      "/platform/me",
      asBearer(await platformToken(superadmin, true)),
    );
    assertEquals(superMe.data, { is_platform_admin: true, is_superadmin: true, warnings: [] });
  } finally {
    await api.close();
  }
});

Deno.test("the console lists organizations with their health and never a secret, a payload body or a person", async () => {
  const api = await startWebhooksApi();
  try {
    const name = `Health ${crypto.randomUUID()}`;
    const t = await createTenant(name);
    await sql()`insert into public.organization_settings (organization_id, webhook_secret)
                values (${t.organizationId}, 'CHECKOUT-SECRET-NEVER-SHOWN')`;
    await sql()`insert into public.webhook_endpoints (organization_id, url, events, secret)
                values (${t.organizationId}, 'https://crm.example.org/h', '{member.created}',
                        'ENDPOINT-SECRET-NEVER-SHOWN-0123456789')`;
    await sql()`insert into public.members (organization_id, first_name, email)
                values (${t.organizationId}, 'Ada', 'ada-never-shown@example.org')`;
    await sql()`insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload,
                                                        signature_valid, status, error)
                values (${t.organizationId}, 'checkout', 'charged', ${crypto.randomUUID()},
                        '{"card": "PAYLOAD-NEVER-SHOWN"}', true, 'failed', 'boom')`;
    const headers = asBearer(await platformToken(await platformUser()));

    const list = await call(
      api.base,
      "GET",
      `/platform/organizations?q=${encodeURIComponent(name)}`,
      headers,
    );
    assertEquals(list.status, 200, list.text);
    assertEquals(list.data.data.length, 1);
    const org = list.data.data[0];
    assertEquals([org.id, org.name, org.people, org.status, org.suspension], [
      t.organizationId,
      name,
      2,
      "active",
      null,
    ]);
    assertEquals(org.health.status, "failing", "an inbound payload failed to apply");
    assertEquals(
      [org.health.endpoints, org.health.deliveries_open, org.health.inbound_failed_24h],
      [1, 1, 1],
      "one endpoint, the new member's delivery, the failed payload",
    );
    assert(org.health.last_activity_at, "the member's event is activity");
    assert(list.data.totals.organizations >= 1);

    for (const path of ["/platform/organizations?limit=200", `/platform/organizations/${t.organizationId}`]) {
      const res = await call(api.base, "GET", path, headers);
      assertEquals(res.status, 200);
      for (const secret of ["NEVER-SHOWN", "ada-never-shown", t.admin.email, t.staff.email]) {
        assert(!res.text.includes(secret), `${path} shows nothing like ${secret}`);
      }
    }

    // Paging by name: two pages of one cover both organizations of a unique prefix, in order.
    const prefix = `Paged ${crypto.randomUUID().slice(0, 8)}`;
    const a = await createTenant(`${prefix} A`);
    const b = await createTenant(`${prefix} B`);
    const first = await call(
      api.base,
      "GET",
      `/platform/organizations?limit=1&q=${encodeURIComponent(prefix)}`,
      headers,
    );
    const second = await call(
      api.base,
      "GET",
      `/platform/organizations?limit=1&q=${encodeURIComponent(prefix)}&cursor=${first.data.next_cursor}`,
      headers,
    );
    assertEquals([first.data.data[0].id, second.data.data[0].id, second.data.next_cursor], [
      a.organizationId,
      b.organizationId,
      null,
    ]);

    const bad = await call(api.base, "GET", "/platform/organizations?cursor=nonsense&limit=0", headers);
    assertEquals(bad.status, 400);
    assertEquals(bad.data.error.details.fields.map((f: { field: string }) => f.field), ["limit"]);
    const badCursor = await call(api.base, "GET", "/platform/organizations?cursor=nonsense", headers);
    assertEquals([badCursor.status, badCursor.data.error.details.fields[0].field], [400, "cursor"]);
    const unknown = await call(api.base, "GET", `/platform/organizations/${crypto.randomUUID()}`, headers);
    assertEquals(unknown.status, 404);
  } finally {
    await api.close();
  }
});

Deno.test("a suspended organization's people and keys can do nothing until it is resumed; its admins read why", async () => {
  const api = await startWebhooksApi();
  try {
    const t = await createTenant();
    const other = await createTenant();
    // The admin of T is also staff of the other organization: somewhere to land.
    await sql()`insert into public.profiles (user_id, organization_id, role)
                values (${t.admin.id}, ${other.organizationId}, 'staff')`;
    const adminT = asBearer(await tokenFor(t.admin, t.organizationId));
    const staffT = asBearer(await tokenFor(t.staff, t.organizationId));
    const key = (await call(api.base, "POST", "/api-keys", adminT, { name: "Make" })).data.key as string;
    const ops = await platformUser();
    const headers = asBearer(await platformToken(ops));

    const missing = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      headers,
      {},
    );
    assertEquals([missing.status, missing.data.error.details.fields[0].field], [400, "reason"]);
    const multiline = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      headers,
      {
        reason: "two\nlines",
      },
    );
    assertEquals([multiline.status, multiline.data.error.details.fields[0].field], [400, "reason"]);
    const nowhere = await call(
      api.base,
      "POST",
      `/platform/organizations/${crypto.randomUUID()}/suspend`,
      headers,
      {
        reason: "x",
      },
    );
    assertEquals(nowhere.status, 404);

    const suspended = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      headers,
      {
        reason: "Unpaid invoice",
      },
    );
    assertEquals(suspended.status, 200, suspended.text);
    assertEquals([
      suspended.data.status,
      suspended.data.suspension.reason,
      suspended.data.suspension.suspended_by,
    ], [
      "suspended",
      "Unpaid invoice",
      ops.email,
    ]);
    const again = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/suspend`,
      headers,
      {
        reason: "again",
      },
    );
    assertEquals([again.status, again.data.error.code], [409, "already_suspended"]);

    for (
      const [who, h] of [["admin", adminT], ["staff", staffT], ["API key", { "x-api-key": key }]] as const
    ) {
      const res = await call(api.base, "GET", "/endpoints", h);
      assertEquals([res.status, res.data.error.code], [403, "organization_suspended"], `${who}: ${res.text}`);
    }
    const auditWhileSuspended = await call(api.base, "GET", "/audit-log", adminT);
    assertEquals(auditWhileSuspended.status, 403, "nothing, the audit log included, while suspended");
    const me = await call(api.base, "GET", "/me", adminT);
    assertEquals(me.data.active_organization_id, null);
    assertEquals(
      me.data.memberships.find((m: { organization_id: string }) => m.organization_id === t.organizationId)
        .suspended,
      true,
    );
    assertEquals(
      me.data.memberships.find((m: { organization_id: string }) => m.organization_id === other.organizationId)
        .suspended,
      false,
    );
    // The reason was written for the organization's admins: they read it while it lasts; staff do not.
    assertEquals(
      me.data.memberships.find((m: { organization_id: string }) => m.organization_id === t.organizationId)
        .suspension_reason,
      "Unpaid invoice",
    );
    const staffMe = await call(api.base, "GET", "/me", staffT);
    assertEquals(
      staffMe.data.memberships.map((m: { suspended: boolean; suspension_reason: string | null }) => [
        m.suspended,
        m.suspension_reason,
      ]),
      [[true, null]],
    );
    const choose = await call(api.base, "POST", "/me/active-organization", adminT, {
      organization_id: t.organizationId,
    });
    assertEquals([choose.status, choose.data.error.code], [403, "organization_suspended"]);
    const onlySuspended = await call(
      api.base,
      "GET",
      "/platform/organizations?suspended=true&limit=200",
      headers,
    );
    assert(onlySuspended.data.data.some((o: { id: string }) => o.id === t.organizationId));
    assert(onlySuspended.data.data.every((o: { status: string }) => o.status === "suspended"));

    const resumed = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/resume`,
      headers,
      {
        reason: "Invoice paid",
      },
    );
    assertEquals([resumed.status, resumed.data.status], [200, "active"], resumed.text);
    const twice = await call(
      api.base,
      "POST",
      `/platform/organizations/${t.organizationId}/resume`,
      headers,
      {},
    );
    assertEquals([twice.status, twice.data.error.code], [409, "not_suspended"]);
    assertEquals(
      (await call(api.base, "GET", "/endpoints", adminT)).status,
      200,
      "the same token works again",
    );
    assertEquals(
      (await call(api.base, "GET", "/endpoints", { "x-api-key": key })).status,
      200,
      "and the key",
    );

    // What the platform's administrators did (the log also has the organization's own changes).
    const audit = await call(api.base, "GET", "/audit-log?actor_kind=platform_admin", adminT);
    assertEquals(audit.status, 200, audit.text);
    assertEquals(
      audit.data.data.map((e: { action: string; reason: string; actor: { email: string } }) => [
        e.action,
        e.reason,
        e.actor.email,
      ]),
      [["organization.resumed", "Invoice paid", ops.email], [
        "organization.suspended",
        "Unpaid invoice",
        ops.email,
      ]],
    );
    const page = await call(api.base, "GET", "/audit-log?actor_kind=platform_admin&limit=1", adminT);
    const rest = await call(
      api.base,
      "GET",
      `/audit-log?actor_kind=platform_admin&limit=1&cursor=${page.data.next_cursor}`,
      adminT,
    );
    assertEquals([page.data.data[0].action, rest.data.data[0].action, rest.data.next_cursor], [
      "organization.resumed",
      "organization.suspended",
      null,
    ]);
    const staffAudit = await call(api.base, "GET", "/audit-log", staffT);
    assertEquals([staffAudit.status, staffAudit.data.error.code], [403, "admin_required"]);
    const keyAudit = await call(api.base, "GET", "/audit-log", { "x-api-key": key });
    assertEquals([keyAudit.status, keyAudit.data.error.code], [403, "user_required"]);
    const otherAudit = await call(
      api.base,
      "GET",
      "/audit-log",
      asBearer(await tokenFor(other.admin, other.organizationId)),
    );
    assertEquals(
      otherAudit.data.data.filter((e: { organization_id: string }) =>
        e.organization_id !== other.organizationId
      ),
      [],
      "another organization's admin reads none of it",
    );
    const platformAudit = await call(
      api.base,
      "GET",
      `/platform/audit-log?organization_id=${t.organizationId}`,
      headers,
    );
    assertEquals(
      platformAudit.data.data.filter((e: { actor: { kind: string } }) => e.actor.kind === "platform_admin")
        .length,
      2,
      "the platform's audit log has both",
    );
    const names = [audit.data.data[0].organization_name, platformAudit.data.data[0].organization_name];
    assertEquals(names, [resumed.data.name, resumed.data.name], "with the organization's name");
  } finally {
    await api.close();
  }
});

Deno.test("superadmins grant and revoke platform admin, effective at the next request whatever the token says", async () => {
  const api = await startWebhooksApi();
  try {
    const superadmin = asBearer(await platformToken(await platformUser({ superadmin: true }), true));
    const plain = asBearer(await platformToken(await platformUser()));
    const person = await createUser(`Helper-${crypto.randomUUID()}@platform.example`);
    // The person's token, issued before the grant: it claims no platform rights.
    const personToken = asBearer(await tokenFor(person));

    const refused = await call(api.base, "POST", "/platform/admins", plain, { email: person.email });
    assertEquals([refused.status, refused.data.error.code], [403, "superadmin_required"]);
    const unknown = await call(api.base, "POST", "/platform/admins", superadmin, {
      email: `nobody-${crypto.randomUUID()}@example.org`,
    });
    assertEquals([unknown.status, unknown.data.error.code, unknown.data.error.details.fields[0].field], [
      400,
      "unknown_account",
      "email",
    ]);
    const notEmail = await call(api.base, "POST", "/platform/admins", superadmin, {
      email: "not an address",
    });
    assertEquals([notEmail.status, notEmail.data.error.details.fields[0].field], [400, "email"]);

    assertEquals((await call(api.base, "GET", "/platform/organizations", personToken)).status, 403);
    const granted = await call(api.base, "POST", "/platform/admins", superadmin, {
      email: person.email.toUpperCase(),
    });
    assertEquals([granted.status, granted.data.user_id, granted.data.is_superadmin], [201, person.id, false]);
    const twice = await call(api.base, "POST", "/platform/admins", superadmin, { email: person.email });
    assertEquals([twice.status, twice.data.error.code], [409, "already_platform_admin"]);
    assertEquals(
      (await call(api.base, "GET", "/platform/organizations", personToken)).status,
      200,
      "the grant counts at once, with the token the person already had",
    );
    const list = await call(api.base, "GET", "/platform/admins", plain);
    assert(list.data.data.some((a: { user_id: string }) => a.user_id === person.id));

    const superadmins = await sql()<{ user_id: string }[]>`
      select user_id from public.platform_user_flags where is_superadmin limit 1`;
    const revokeSuper = await call(
      api.base,
      "DELETE",
      `/platform/admins/${superadmins[0]!.user_id}`,
      superadmin,
    );
    assertEquals([revokeSuper.status, revokeSuper.data.error.code], [409, "superadmin"]);
    const byPlain = await call(api.base, "DELETE", `/platform/admins/${person.id}`, plain);
    assertEquals([byPlain.status, byPlain.data.error.code], [403, "superadmin_required"]);
    const revoked = await call(api.base, "DELETE", `/platform/admins/${person.id}`, superadmin);
    assertEquals([revoked.status, revoked.data], [200, { user_id: person.id, revoked: true }]);
    const gone = await call(api.base, "DELETE", `/platform/admins/${person.id}`, superadmin);
    assertEquals(gone.status, 404);

    const withClaim = asBearer(await tokenFor(person, undefined, { claims: { is_platform_admin: true } }));
    const after = await call(api.base, "GET", "/platform/organizations", withClaim);
    assertEquals(
      [after.status, after.data.error.code],
      [403, "platform_admin_required"],
      "revoked at once, though a token still claims it",
    );
    const audit = await call(api.base, "GET", "/platform/audit-log?limit=200", plain);
    const mine = audit.data.data.filter((e: { subject_email: string | null }) =>
      e.subject_email === person.email
    );
    assertEquals(
      mine.map((e: { action: string; organization_id: string | null }) => [e.action, e.organization_id]),
      [
        ["platform_admin.revoked", null],
        ["platform_admin.granted", null],
      ],
    );
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
