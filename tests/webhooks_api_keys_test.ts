// Organization API keys through the configuration API: created by admins and shown once, stored
// hashed, usable only while live and only for their own organization; staff, other organizations,
// anonymous callers and API keys themselves cannot manage them.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import {
  addMember,
  asConfigApi,
  claimsFor,
  closeSql,
  createTenant,
  createUser,
  sql,
  type TestUser,
} from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";

const start = () => startWebhooksApi();

const bearer = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });

Deno.test("an admin creates a key (shown once, stored hashed), lists and revokes it", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const adminToken = await tokenFor(a.admin, a.organizationId);
    const created = await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(adminToken),
      body: JSON.stringify({ name: "Zapier" }),
    });
    assertEquals(created.status, 201);
    const key = await created.json();
    assertMatch(key.key, /^orgkey_[A-Za-z0-9_-]{43}$/);
    assertEquals(key.name, "Zapier");
    assert(key.key.startsWith(key.key_prefix));

    const [stored] =
      await sql()`select key_hash, created_by from public.organization_api_keys where id = ${key.id}`;
    assert(
      stored!.key_hash !== key.key && !String(stored!.key_hash).includes(key.key.slice(7)),
      "only a hash is stored",
    );
    assertEquals(stored!.created_by, a.admin.id);

    const list = await (await fetch(`${api.base}/api-keys`, { headers: bearer(adminToken) })).json();
    assertEquals(list.data.map((k: { id: string }) => k.id), [key.id]);
    assert(!JSON.stringify(list).includes(key.key), "the key never appears again");

    // The key authenticates (last use recorded) until it is revoked.
    const probe = () => fetch(`${api.base}/api-keys`, { headers: { "x-api-key": key.key } });
    const asKey = await probe();
    assertEquals(asKey.status, 403, "API keys cannot manage API keys");
    assertEquals((await asKey.json()).error.code, "user_required");
    const [used] = await sql()`select last_used_at from public.organization_api_keys where id = ${key.id}`;
    assert(used!.last_used_at, "last use recorded");

    const revoked = await fetch(`${api.base}/api-keys/${key.id}`, {
      method: "DELETE",
      headers: bearer(adminToken),
    });
    assertEquals(revoked.status, 200);
    assert((await revoked.json()).revoked_at);
    const after = await probe();
    assertEquals(after.status, 401);
    assertEquals((await after.json()).error.code, "invalid_api_key");
  } finally {
    await api.close();
  }
});

Deno.test("staff, other organizations, removed members, anonymous and expired callers cannot manage keys", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const adminA = await tokenFor(a.admin, a.organizationId);
    const keyA = await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(adminA),
      body: JSON.stringify({ name: "Make" }),
    })).json();

    const staffA = await tokenFor(a.staff, a.organizationId);
    const staffList = await fetch(`${api.base}/api-keys`, { headers: bearer(staffA) });
    assertEquals(staffList.status, 403);
    assertEquals((await staffList.json()).error.code, "admin_required");
    const staffCreate = await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(staffA),
      body: JSON.stringify({ name: "mine" }),
    });
    assertEquals(staffCreate.status, 403);

    // B's admin sees none of A's keys and cannot revoke one by id: 404, not 403.
    const adminB = await tokenFor(b.admin, b.organizationId);
    assertEquals((await (await fetch(`${api.base}/api-keys`, { headers: bearer(adminB) })).json()).data, []);
    const cross = await fetch(`${api.base}/api-keys/${keyA.id}`, {
      method: "DELETE",
      headers: bearer(adminB),
    });
    assertEquals(cross.status, 404);
    // B's admin claiming A in a token (stale or forged claim) is not an admin of A.
    const claimA = await tokenFor(b.admin, a.organizationId);
    assertEquals((await fetch(`${api.base}/api-keys`, { headers: bearer(claimA) })).status, 403);

    // A removed admin with a still-valid token loses access at once.
    const removed = await createUser();
    await sql()`insert into public.profiles (user_id, organization_id, role) values (${removed.id}, ${a.organizationId}, 'admin')`;
    const removedToken = await tokenFor(removed, a.organizationId);
    assertEquals((await fetch(`${api.base}/api-keys`, { headers: bearer(removedToken) })).status, 200);
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    assertEquals((await fetch(`${api.base}/api-keys`, { headers: bearer(removedToken) })).status, 403);

    const anon = await fetch(`${api.base}/api-keys`);
    assertEquals(anon.status, 401);
    assertEquals((await anon.json()).error.code, "missing_token");
    const expired = await tokenFor(a.admin, a.organizationId, {
      expiresIn: Math.floor(Date.now() / 1000) - 120,
    });
    const exp = await fetch(`${api.base}/api-keys`, { headers: bearer(expired) });
    assertEquals(exp.status, 401);
    assertEquals((await exp.json()).error.code, "token_expired");
    const forgedKey = await fetch(`${api.base}/api-keys`, { headers: { "x-api-key": keyA.key + "x" } });
    assertEquals(forgedKey.status, 401);

    // The key's row is still untouched by all of that.
    const [row] = await sql()`select revoked_at from public.organization_api_keys where id = ${keyA.id}`;
    assertEquals(row!.revoked_at, null);
  } finally {
    await api.close();
  }
});

// The attack: admin A1 makes a key, then stops being an admin of the organization (leaves, is
// demoted to staff, is removed by another admin, or their account is deleted). A1's own token is
// refused at once; the key they made must be too, and the API keys page says why.
for (
  const [how, reason, end] of [
    ["leaves", "its creator left the organization", async (api, a1, org) => {
      const left = await fetch(`${api.base}/memberships/${org}/leave`, {
        method: "POST",
        headers: bearer(await tokenFor(a1, org)),
      });
      assertEquals(left.status, 200);
      await left.body?.cancel();
    }],
    ["is demoted to staff", "its creator is no longer an administrator", async (_api, a1, org, a2) => {
      await asConfigApi(
        claimsFor(a2, org),
        (tx) => tx`update public.profiles set role = 'staff' where user_id = ${a1.id}`,
      );
    }],
    [
      "is removed by another admin",
      "its creator was removed from the organization",
      async (_api, a1, org, a2) => {
        await asConfigApi(
          claimsFor(a2, org),
          (tx) => tx`delete from public.profiles where user_id = ${a1.id}`,
        );
      },
    ],
    ["has their account deleted", "its creator's account was deleted", async (_api, a1) => {
      await sql()`delete from auth.users where id = ${a1.id}`;
    }],
  ] as [string, string, (api: { base: string }, a1: TestUser, org: string, a2: TestUser) => Promise<void>][]
) {
  Deno.test(`an API key stops working when the admin who made it ${how}, and the keys page says why`, async () => {
    const api = await start();
    try {
      const a = await createTenant();
      const a2 = await createUser();
      await addMember(a2.id, a.organizationId, "admin");
      const key = await (await fetch(`${api.base}/api-keys`, {
        method: "POST",
        headers: bearer(await tokenFor(a.admin, a.organizationId)),
        body: JSON.stringify({ name: "Zapier" }),
      })).json();
      const asKey = { "x-api-key": key.key, "content-type": "application/json" };
      const before = await fetch(`${api.base}/endpoints`, { headers: asKey });
      assertEquals(before.status, 200, "control: the key works while its creator is an admin");
      await before.body?.cancel();

      await end(api, a.admin, a.organizationId, a2);

      const read = await fetch(`${api.base}/endpoints`, { headers: asKey });
      assertEquals(
        [read.status, (await read.json()).error?.code],
        [401, "invalid_api_key"],
        "GET /endpoints",
      );
      const subscribe = await fetch(`${api.base}/subscriptions`, {
        method: "POST",
        headers: asKey,
        body: JSON.stringify({ target_url: "http://127.0.0.1:9/z", event: "member.created" }),
      });
      assertEquals(
        [subscribe.status, (await subscribe.json()).error?.code],
        [401, "invalid_api_key"],
        "POST /subscriptions",
      );
      const [endpoints] = await sql()`select count(*)::int as n from public.webhook_endpoints
                                     where organization_id = ${a.organizationId}`;
      assertEquals(endpoints!.n, 0, "nothing was subscribed");

      const listed =
        await (await fetch(`${api.base}/api-keys`, { headers: bearer(await tokenFor(a2, a.organizationId)) }))
          .json();
      const shown = listed.data.find((k: { id: string }) => k.id === key.id);
      assertEquals([shown.status, shown.revoked_reason], ["revoked", reason]);
      assert(shown.revoked_at, "revoked, with the time");

      // Final: becoming an admin again does not bring the key back.
      if (how === "is demoted to staff") {
        await sql()`update public.profiles set role = 'admin' where user_id = ${a.admin.id}`;
        const again = await fetch(`${api.base}/endpoints`, { headers: asKey });
        assertEquals(again.status, 401, "a re-promoted creator's old key stays revoked");
        await again.body?.cancel();
      }
    } finally {
      await api.close();
    }
  });
}

Deno.test("malformed requests are 400 naming the field; malformed ids are 404", async () => {
  const api = await start();
  try {
    const a = await createTenant();
    const adminA = await tokenFor(a.admin, a.organizationId);
    for (const body of ['{"name":""}', '{"name":5}', '{"name":"x","extra":1}', "[]"]) {
      const res = await fetch(`${api.base}/api-keys`, { method: "POST", headers: bearer(adminA), body });
      assertEquals(res.status, 400, body);
      const err = (await res.json()).error;
      assertEquals(err.code, "invalid_request");
      assert(Array.isArray(err.details.fields) && err.details.fields.length > 0, JSON.stringify(err));
    }
    const named = await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(adminA),
      body: '{"name":5}',
    }))
      .json();
    assertEquals(named.error.details.fields[0].field, "name");
    const bad = await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: bearer(adminA),
      body: "{nope",
    });
    assertEquals([bad.status, (await bad.json()).error.code], [400, "invalid_json"]);
    const badId = await fetch(`${api.base}/api-keys/not-a-uuid`, {
      method: "DELETE",
      headers: bearer(adminA),
    });
    assertEquals(badId.status, 404);
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
