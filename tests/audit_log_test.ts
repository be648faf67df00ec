// The audit log, action by action through the configuration API: each change an organization's admins,
// staff, API keys, an invitee and the service's own rules make is one entry with the actor, the changed
// fields before and after, the client's address and user agent; no entry anywhere holds a secret used
// here. Then the attacks: another organization's admin, staff, a removed admin's valid token, an API key,
// nobody, and the Data API's role reading or writing the table.
import { assert, assertEquals } from "./helpers/assert.ts";
import { asUser, closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

type Entry = {
  action: string;
  actor_kind: string;
  actor_user_id: string | null;
  actor_email: string | null;
  actor_api_key_id: string | null;
  actor_label: string | null;
  subject_email: string | null;
  target_type: string | null;
  target_id: string | null;
  reason: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  ip: string | null;
  user_agent: string | null;
};

const newest = async (org: string, action: string): Promise<Entry | undefined> =>
  (await sql()<Entry[]>`
    select action, actor_kind, actor_user_id, actor_email, actor_api_key_id, actor_label, subject_email,
           target_type, target_id, reason, before, after, ip, user_agent
    from public.audit_log where organization_id = ${org} and action = ${action}
    order by created_at desc, id desc limit 1`)[0];

const from = (ip: string, agent: string) => ({ "x-forwarded-for": `${ip}, 10.0.0.1`, "user-agent": agent });

Deno.test("every change to an organization's settings and people is in its audit log: who, what before and after, from where; never a secret", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const secrets: string[] = [];
  try {
    const t = await createTenant();
    const org = t.organizationId;
    const admin = { ...asBearer(await tokenFor(t.admin, org)), ...from("203.0.113.9", "AuditTest/1 admin") };
    const adminWho = { actor_kind: "admin", actor_user_id: t.admin.id, actor_email: t.admin.email };
    const at = { ip: "203.0.113.9", user_agent: "AuditTest/1 admin" };

    const ok = (r: { status: number; text: string }, ...codes: number[]) =>
      assert(codes.includes(r.status), `${r.status} ${r.text}`);

    // Each step: what it does through the API, and the entry it must leave (a subset of its columns).
    let endpointId = "";
    let keyId = "";
    let invitationId = "";
    let numberId = "";
    const invitee = await createUser(`invitee-${crypto.randomUUID()}@example.org`);
    const ops = await createUser(`ops-${crypto.randomUUID()}@platform.example`);
    await sql()`insert into public.platform_user_flags (user_id, is_platform_admin) values (${ops.id}, true)`;
    const platform = {
      ...asBearer(await tokenFor(ops, undefined, { claims: { is_platform_admin: true } })),
      ...from("192.0.2.99", "AuditTest/1 platform"),
    };
    const steps: [string, () => Promise<Partial<Entry>>][] = [
      ["endpoint.created", async () => {
        const r = await call(api.base, "POST", "/endpoints", admin, {
          url: "http://127.0.0.1:9/audit",
          events: ["member.created"],
          description: "CRM",
        });
        ok(r, 201);
        endpointId = r.data.id;
        secrets.push(r.data.secret);
        return {
          ...adminWho,
          ...at,
          target_type: "endpoint",
          target_id: endpointId,
          before: null,
          after: {
            url: "http://127.0.0.1:9/audit",
            events: ["member.created"],
            enabled: true,
            description: "CRM",
            disabled_reason: null,
            rate_limit_per_second: null,
          },
        };
      }],
      ["endpoint.updated", async () => {
        ok(
          await call(api.base, "PATCH", `/endpoints/${endpointId}`, admin, { description: "Finance CRM" }),
          200,
        );
        return { ...adminWho, ...at, before: { description: "CRM" }, after: { description: "Finance CRM" } };
      }],
      ["endpoint.disabled", async () => {
        ok(await call(api.base, "PATCH", `/endpoints/${endpointId}`, admin, { enabled: false }), 200);
        return {
          ...adminWho,
          before: { enabled: true, disabled_reason: null },
          after: { enabled: false, disabled_reason: "disabled by an administrator" },
        };
      }],
      ["endpoint.enabled", async () => {
        ok(await call(api.base, "PATCH", `/endpoints/${endpointId}`, admin, { enabled: true }), 200);
        return { ...adminWho, before: { enabled: false, disabled_reason: "disabled by an administrator" } };
      }],
      ["endpoint.secret_rotated", async () => {
        const r = await call(api.base, "POST", `/endpoints/${endpointId}/rotate-secret`, admin, {});
        ok(r, 200);
        secrets.push(r.data.secret);
        return { ...adminWho, ...at, target_id: endpointId };
      }],
      ["endpoint.secret_revealed", async () => {
        const r = await call(api.base, "POST", `/endpoints/${endpointId}/reveal-secret`, admin);
        ok(r, 200);
        return { ...adminWho, ...at, target_id: endpointId };
      }],
      ["endpoint.recovered", async () => {
        const r = await call(api.base, "POST", `/endpoints/${endpointId}/recover`, admin, {
          since: new Date(Date.now() - 3600_000).toISOString(),
        });
        ok(r, 202);
        return { ...adminWho, ...at, target_id: endpointId };
      }],
      ["delivery.redelivered", async () => {
        ok(await call(api.base, "POST", `/endpoints/${endpointId}/test`, admin, {}), 202);
        const [d] = await sql()<{ id: string }[]>`
          select id from public.webhook_deliveries where endpoint_id = ${endpointId} limit 1`;
        ok(await call(api.base, "POST", `/deliveries/${d!.id}/redeliver`, admin), 202);
        return { ...adminWho, ...at, target_type: "delivery", target_id: d!.id };
      }],
      ["api_key.created", async () => {
        const r = await call(api.base, "POST", "/api-keys", admin, { name: "Zapier" });
        ok(r, 201);
        keyId = r.data.id;
        secrets.push(r.data.key);
        return { ...adminWho, ...at, target_id: keyId, before: null, after: { name: "Zapier" } };
      }],
      ["endpoint.deleted", async () => {
        // Made by the API key, deleted by it: the key is the actor, by id and name.
        const key = secrets.at(-1)!;
        const byKey = {
          "x-api-key": key,
          "content-type": "application/json",
          ...from("198.51.100.4", "Zapier"),
        };
        const r = await call(api.base, "POST", "/endpoints", byKey, {
          url: "http://127.0.0.1:9/zap",
          events: ["member.created"],
        });
        ok(r, 201);
        secrets.push(r.data.secret);
        const created = await newest(org, "endpoint.created");
        assertEquals([created?.actor_kind, created?.actor_api_key_id, created?.actor_label], [
          "api_key",
          keyId,
          "Zapier",
        ]);
        ok(await call(api.base, "DELETE", `/endpoints/${r.data.id}`, byKey), 204, 200);
        return {
          actor_kind: "api_key",
          actor_api_key_id: keyId,
          actor_label: "Zapier",
          actor_user_id: null,
          ip: "198.51.100.4",
          user_agent: "Zapier",
          before: {
            url: "http://127.0.0.1:9/zap",
            events: ["member.created"],
            enabled: true,
            description: null,
            disabled_reason: null,
            rate_limit_per_second: null,
          },
          after: null,
        };
      }],
      ["api_key.revoked", async () => {
        ok(await call(api.base, "DELETE", `/api-keys/${keyId}`, admin), 200, 204);
        return { ...adminWho, ...at, target_id: keyId, after: { name: "Zapier", revoked_at: undefined } };
      }],
      ["invitation.sent", async () => {
        const r = await call(api.base, "POST", "/invitations", admin, {
          email: invitee.email,
          role: "staff",
        });
        ok(r, 201);
        secrets.push(r.data.token);
        return { ...adminWho, ...at, target_type: "invitation", after: undefined };
      }],
      ["invitation.resent", async () => {
        const [open] = await sql()<{ id: string }[]>`
          select id from public.organization_invitations
          where organization_id = ${org} and email = ${invitee.email} and revoked_at is null`;
        // The mail limit allows one invitation to an address a minute: as if the first went a minute ago.
        await sql()`update private.mail_outbox set created_at = created_at - interval '61 seconds'
                    where recipient = ${invitee.email}`;
        const r = await call(api.base, "POST", `/invitations/${open!.id}/resend`, admin);
        ok(r, 201);
        secrets.push(r.data.token);
        invitationId = r.data.id;
        return { ...adminWho, ...at, target_id: invitationId };
      }],
      ["invitation.accepted", async () => {
        const token = secrets.at(-1)!;
        const own = { ...asBearer(await tokenFor(invitee)), ...from("192.0.2.44", "AuditTest/1 invitee") };
        ok(await call(api.base, "POST", "/invitations/accept", own, { token }), 200, 201);
        return {
          actor_user_id: invitee.id,
          actor_email: invitee.email,
          subject_email: invitee.email,
          ip: "192.0.2.44",
          user_agent: "AuditTest/1 invitee",
          target_id: invitationId,
        };
      }],
      ["member.role_changed", async () => {
        const [p] = await sql()<{ id: string }[]>`
          select id from public.profiles where organization_id = ${org} and user_id = ${invitee.id}`;
        ok(await call(api.base, "PATCH", `/people/${p!.id}`, admin, { role: "admin" }), 200);
        return {
          ...adminWho,
          ...at,
          subject_email: invitee.email,
          before: { role: "staff" },
          after: { role: "admin" },
        };
      }],
      ["member.removed", async () => {
        const [p] = await sql()<{ id: string }[]>`
          select id from public.profiles where organization_id = ${org} and user_id = ${invitee.id}`;
        ok(await call(api.base, "DELETE", `/people/${p!.id}`, admin), 200);
        return { ...adminWho, ...at, subject_email: invitee.email, before: { role: "admin" }, after: null };
      }],
      ["invitation.withdrawn", async () => {
        const r = await call(api.base, "POST", "/invitations", admin, {
          email: `later-${crypto.randomUUID()}@example.org`,
          role: "admin",
        });
        ok(r, 201);
        secrets.push(r.data.token);
        ok(await call(api.base, "DELETE", `/invitations/${r.data.id}`, admin), 200);
        return { ...adminWho, ...at, target_id: r.data.id, reason: "withdrawn by an administrator" };
      }],
      ["connection.secret_set", async () => {
        const secret = `whsec_${crypto.randomUUID().replaceAll("-", "")}`;
        secrets.push(secret);
        ok(await call(api.base, "POST", "/connections/checkout/secret", admin, { secret }), 200);
        return {
          ...adminWho,
          ...at,
          target_id: "checkout",
          before: { secret_set: false },
          after: { secret_set: true },
        };
      }],
      ["connection.secret_removed", async () => {
        ok(await call(api.base, "DELETE", "/connections/checkout/secret", admin), 200);
        return {
          ...adminWho,
          ...at,
          target_id: "checkout",
          before: { secret_set: true },
          after: { secret_set: false },
        };
      }],
      ["whatsapp_number.registered", async () => {
        const appSecret = `app${crypto.randomUUID().replaceAll("-", "")}`;
        const verifyToken = `vt${crypto.randomUUID().replaceAll("-", "")}`;
        secrets.push(appSecret, verifyToken);
        const r = await call(api.base, "POST", "/connections/whatsapp/numbers", admin, {
          phone_number_id: "1234567890",
          display_phone_number: "+1 555 0100",
          app_secret: appSecret,
          verify_token: verifyToken,
        });
        ok(r, 201);
        numberId = r.data.id;
        return {
          ...adminWho,
          ...at,
          target_id: numberId,
          after: { phone_number_id: "1234567890", display_phone_number: "+1 555 0100" },
        };
      }],
      ["whatsapp_number.updated", async () => {
        ok(
          await call(api.base, "PATCH", `/connections/whatsapp/numbers/${numberId}`, admin, {
            display_phone_number: "+1 555 0199",
          }),
          200,
        );
        return {
          ...adminWho,
          before: { display_phone_number: "+1 555 0100" },
          after: { display_phone_number: "+1 555 0199" },
        };
      }],
      ["whatsapp_number.app_secret_replaced", async () => {
        const appSecret = `new${crypto.randomUUID().replaceAll("-", "")}`;
        secrets.push(appSecret);
        ok(
          await call(api.base, "PATCH", `/connections/whatsapp/numbers/${numberId}`, admin, {
            app_secret: appSecret,
          }),
          200,
        );
        return { ...adminWho, ...at, target_id: numberId, before: null, after: null };
      }],
      ["whatsapp_number.verify_token_replaced", async () => {
        const r = await call(
          api.base,
          "POST",
          `/connections/whatsapp/numbers/${numberId}/verify-token`,
          admin,
          {},
        );
        ok(r, 200);
        secrets.push(r.data.verify_token);
        return { ...adminWho, ...at, target_id: numberId };
      }],
      ["whatsapp_number.removed", async () => {
        ok(await call(api.base, "DELETE", `/connections/whatsapp/numbers/${numberId}`, admin), 200, 204);
        return { ...adminWho, ...at, target_id: numberId, after: null };
      }],
      ["log_retention.changed", async () => {
        ok(await call(api.base, "PUT", "/log-retention", admin, { webhook_log_days: 14 }), 200);
        return { ...adminWho, ...at, before: { webhook_log_days: null }, after: { webhook_log_days: 14 } };
      }],
      ["organization.updated", async () => {
        const [o] = await sql()<{ name: string }[]>`select name from public.organizations where id = ${org}`;
        ok(await call(api.base, "PATCH", "/organization", admin, { time_zone: "America/New_York" }), 200);
        assert(o);
        return { ...adminWho, ...at, before: { time_zone: "UTC" }, after: { time_zone: "America/New_York" } };
      }],
      ["inbound.replayed", async () => {
        const [row] = await sql()<{ id: string }[]>`
          insert into public.inbound_webhook_log (organization_id, provider, event, idempotency_key, payload,
                                                  signature_valid, status, error)
          values (${org}, 'checkout', 'subscription.charged', ${`audit-${crypto.randomUUID()}`},
                  '{"event": "subscription.charged"}', true, 'failed', 'boom')
          returning id`;
        const r = await call(api.base, "POST", `/inbound-log/${row!.id}/replay`, admin);
        ok(r, 200);
        return {
          ...adminWho,
          ...at,
          target_type: "inbound_log",
          target_id: row!.id,
          after: { provider: "checkout", status: r.data.status },
        };
      }],
      ["inbound.replayed_failed", async () => {
        ok(await call(api.base, "POST", "/inbound-log/replay-failed", admin), 200);
        const r = await call(api.base, "GET", "/audit-log?action=inbound.replayed&limit=1", admin);
        assertEquals(r.data.data[0].target.type, "inbound_log");
        return { ...adminWho, ...at, target_type: "organization", after: { replayed: undefined } };
      }],
      ["member.erasure_requested", async () => {
        const [m] = await sql()<{ id: string }[]>`
          insert into public.members (organization_id, first_name, last_name, email)
          values (${org}, 'Ada', 'Lovelace', ${`ada-${crypto.randomUUID()}@example.org`}) returning id`;
        const r = await call(api.base, "POST", "/erasures", admin, { member_id: m!.id });
        ok(r, 201, 202);
        return {
          ...adminWho,
          ...at,
          target_type: "erasure",
          target_id: r.data.id,
          before: null,
          after: null,
        };
      }],
      ["member.left", async () => {
        const staff = {
          ...asBearer(await tokenFor(t.staff, org)),
          ...from("192.0.2.50", "AuditTest/1 staff"),
        };
        ok(await call(api.base, "POST", `/memberships/${org}/leave`, staff), 200);
        return {
          actor_kind: "staff",
          actor_user_id: t.staff.id,
          subject_email: t.staff.email,
          ip: "192.0.2.50",
          user_agent: "AuditTest/1 staff",
          before: { role: "staff" },
          after: null,
        };
      }],
      ["endpoint.disabled", async () => {
        // The service's own rule, with no person or key behind it: the rule is the actor.
        const reason = "every attempt failed for 5 days: 212 failed attempts in a row";
        await sql()`select private.webhook_disable_endpoints(${
          sql().json([{ endpoint_id: endpointId, reason }])
        }::jsonb)`;
        return {
          actor_kind: "rule",
          actor_user_id: null,
          actor_label: reason,
          ip: null,
          before: { enabled: true, disabled_reason: null },
          after: { enabled: false, disabled_reason: reason },
        };
      }],
      ["organization.suspended", async () => {
        const r = await call(api.base, "POST", `/platform/organizations/${org}/suspend`, platform, {
          reason: "Unpaid invoice",
        });
        ok(r, 200);
        return {
          actor_kind: "platform_admin",
          actor_user_id: ops.id,
          actor_email: ops.email,
          reason: "Unpaid invoice",
          ip: "192.0.2.99",
          user_agent: "AuditTest/1 platform",
        };
      }],
      ["organization.resumed", async () => {
        ok(
          await call(api.base, "POST", `/platform/organizations/${org}/resume`, platform, { reason: "Paid" }),
          200,
        );
        return { actor_kind: "platform_admin", actor_user_id: ops.id, reason: "Paid", ip: "192.0.2.99" };
      }],
    ];

    for (const [action, run] of steps) {
      const expected = await run();
      const entry = await newest(org, action);
      assert(entry, `an entry for ${action}`);
      for (const [field, value] of Object.entries(expected)) {
        if (value === undefined) continue;
        if (field === "after" && value && typeof value === "object" && entry.after) {
          for (const [k, v] of Object.entries(value)) {
            if (v !== undefined) assertEquals(entry.after[k], v, `${action}: after.${k}`);
          }
          continue;
        }
        assertEquals(entry[field as keyof Entry], value, `${action}: ${field}`);
      }
    }

    // The admin reads them through the API, filtered by action, actor and period.
    const byAction = await call(api.base, "GET", "/audit-log?action=endpoint.updated", admin);
    assertEquals(byAction.status, 200, byAction.text);
    assertEquals(byAction.data.data.map((e: { action: string }) => e.action), ["endpoint.updated"]);
    assertEquals(byAction.data.data[0].before, { description: "CRM" });
    const byKey = await call(api.base, "GET", `/audit-log?actor=${keyId}`, admin);
    assertEquals(
      byKey.data.data.map((e: { action: string }) => e.action).sort(),
      ["endpoint.created", "endpoint.deleted"],
    );
    const byEmail = await call(
      api.base,
      "GET",
      `/audit-log?actor=${encodeURIComponent(invitee.email.toUpperCase())}`,
      admin,
    );
    assertEquals(byEmail.data.data.map((e: { action: string }) => e.action).sort(), [
      "invitation.accepted",
      "member.joined",
    ]);
    const byRule = await call(api.base, "GET", "/audit-log?actor_kind=rule", admin);
    assertEquals(byRule.data.data.length, 1);
    const future = await call(
      api.base,
      "GET",
      `/audit-log?from=${new Date(Date.now() + 60_000).toISOString()}`,
      admin,
    );
    assertEquals(future.data.data, []);
    const backwards = await call(
      api.base,
      "GET",
      "/audit-log?from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z",
      admin,
    );
    assertEquals([backwards.status, backwards.data.error.code], [400, "invalid_period"]);
    // Pages: keyset, newest first, no entry twice.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { data: { id: string }[]; next_cursor: string | null } } = await call(
        api.base,
        "GET",
        `/audit-log?limit=7${cursor ? `&cursor=${cursor}` : ""}`,
        admin,
      );
      seen.push(...page.data.data.map((e) => e.id));
      cursor = page.data.next_cursor;
    } while (cursor);
    assertEquals(new Set(seen).size, seen.length);
    const [count] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.audit_log where organization_id = ${org}`;
    assertEquals(seen.length, count!.n);

    // No entry anywhere holds a secret, key or token used here.
    assert(secrets.length >= 10);
    for (const secret of secrets) {
      const [hit] = await sql()<{ n: number }[]>`
        select count(*)::int as n from public.audit_log a where strpos(to_jsonb(a)::text, ${secret}) > 0`;
      assertEquals(hit!.n, 0, "a secret in the audit log");
    }
  } finally {
    await api.close();
  }
});

Deno.test("the audit log is its admins' alone: other organizations, staff, removed admins, API keys, nobody and the Data API get nothing", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = asBearer(await tokenFor(a.admin, a.organizationId));
    ok201(
      await call(api.base, "POST", "/endpoints", adminA, {
        url: "http://127.0.0.1:9/a",
        events: ["member.created"],
      }),
    );
    const key = (await call(api.base, "POST", "/api-keys", adminA, { name: "k" })).data.key as string;

    const other = await call(
      api.base,
      "GET",
      "/audit-log",
      asBearer(await tokenFor(b.admin, b.organizationId)),
    );
    assertEquals(other.status, 200);
    assert(other.data.data.every((e: { organization_id: string }) => e.organization_id === b.organizationId));
    assert(!other.text.includes(a.organizationId));
    // Naming A in the query changes nothing: there is no organization parameter to name it with.
    const sneaky = await call(
      api.base,
      "GET",
      `/audit-log?organization_id=${a.organizationId}`,
      asBearer(await tokenFor(b.admin, b.organizationId)),
    );
    assert(!sneaky.text.includes(a.organizationId));

    const staff = await call(
      api.base,
      "GET",
      "/audit-log",
      asBearer(await tokenFor(a.staff, a.organizationId)),
    );
    assertEquals([staff.status, staff.data.error.code], [403, "admin_required"]);
    const byKey = await call(api.base, "GET", "/audit-log", { "x-api-key": key });
    assertEquals([byKey.status, byKey.data.error.code], [403, "user_required"]);
    const nobody = await call(api.base, "GET", "/audit-log", {});
    assertEquals(nobody.status, 401);

    // A removed admin whose token is still valid.
    const second = await createUser();
    await sql()`insert into public.profiles (user_id, organization_id, role) values (${second.id}, ${a.organizationId}, 'admin')`;
    const removedToken = asBearer(await tokenFor(second, a.organizationId));
    assertEquals((await call(api.base, "GET", "/audit-log", removedToken)).status, 200);
    await sql()`delete from public.profiles where user_id = ${second.id} and organization_id = ${a.organizationId}`;
    const removed = await call(api.base, "GET", "/audit-log", removedToken);
    assertEquals([removed.status, removed.data.error.code], [403, "admin_required"]);

    // The Data API's role: no read, no write, not even for A's admin.
    const [entry] = await sql()<{ id: string }[]>`
      select id from public.audit_log where organization_id = ${a.organizationId} limit 1`;
    for (
      const statement of [
        (tx: Parameters<Parameters<typeof asUser>[1]>[0]) => tx`select * from public.audit_log`,
        (tx: Parameters<Parameters<typeof asUser>[1]>[0]) =>
          tx`insert into public.audit_log (organization_id, action, actor_kind) values (${a.organizationId}, 'endpoint.created', 'admin')`,
        (tx: Parameters<Parameters<typeof asUser>[1]>[0]) =>
          tx`update public.audit_log set reason = 'x' where id = ${entry!.id}`,
        (tx: Parameters<Parameters<typeof asUser>[1]>[0]) =>
          tx`delete from public.audit_log where id = ${entry!.id}`,
        (tx: Parameters<Parameters<typeof asUser>[1]>[0]) =>
          tx`select private.audit(${a.organizationId}::uuid, 'endpoint.created', 'endpoint', 'x', null, null)`,
      ]
    ) {
      const code = await asUser(a.adminClaims, statement).then(() => null, (e: { code?: string }) => e.code);
      assertEquals(code, "42501");
    }
    // Not even the table's owner alters an entry; only the retention job deletes.
    const change = await sql()`update public.audit_log set reason = 'x' where id = ${entry!.id}`.then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    assertEquals(change, "42501");
    const del = await sql()`delete from public.audit_log where id = ${entry!.id}`.then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    assertEquals(del, "42501");
  } finally {
    await api.close();
  }
});

function ok201(r: { status: number; text: string }) {
  assertEquals(r.status, 201, r.text);
}

Deno.test("custom request headers appear by name only, and a bulk retry once per job", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const t = await createTenant();
    const org = t.organizationId;
    const admin = { ...asBearer(await tokenFor(t.admin, org)), ...from("203.0.113.10", "AuditTest/2") };
    const value = `gateway-key-${crypto.randomUUID()}`;
    const created = await call(api.base, "POST", "/endpoints", admin, {
      url: "http://127.0.0.1:9/audit-headers",
      events: ["member.created"],
    });
    ok201(created);
    const endpointId = created.data.id;
    const set = await call(api.base, "PATCH", `/endpoints/${endpointId}`, admin, {
      custom_headers: [{ name: "X-Api-Key", value }],
    });
    assertEquals(set.status, 200, set.text);
    const headers = await newest(org, "endpoint.updated");
    assertEquals(headers?.before, { header_names: null });
    assertEquals(headers?.after, { header_names: ["X-Api-Key"] });

    // A bulk retry: one entry with its filter and count; the same Idempotency-Key again adds none.
    const retry = () =>
      call(api.base, "POST", "/deliveries/retry", { ...admin, "idempotency-key": "audit-retry-1" }, {
        endpoint_id: endpointId,
        status: "retrying",
      });
    const first = await retry();
    assert([200, 201, 202].includes(first.status), first.text);
    const again = await retry();
    assertEquals(again.status, first.status, again.text);
    const entries = await sql()<Entry[]>`
      select action, actor_kind, actor_user_id, target_type, target_id, after, ip, user_agent
      from public.audit_log where organization_id = ${org} and action = 'deliveries.retried'`;
    assertEquals(entries.length, 1);
    assertEquals(entries[0]!.actor_user_id, t.admin.id);
    assertEquals(entries[0]!.target_type, "bulk_retry");
    assertEquals((entries[0]!.after as { filter: { endpoint_id: string } }).filter.endpoint_id, endpointId);
    assertEquals(entries[0]!.ip, "203.0.113.10");

    const text = (await sql()<{ t: string }[]>`
      select coalesce(string_agg(to_jsonb(a)::text, ''), '') as t from public.audit_log a
      where a.organization_id = ${org}`)[0]!.t;
    assert(!text.includes(value) && !text.includes(value.slice(-4)), "no header value, not even its hint");
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
