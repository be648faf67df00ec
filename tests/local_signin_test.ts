// Switching organization on the real local stack: an admin of two organizations switches between them
// through GET /me and POST /me/active-organization + refreshSession; a member removed between two
// refreshes is refused at once and refreshed into a token without that organization.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import * as jose from "jose";
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createOrganization, sql } from "./helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";

const PASSWORD = "two-churches-password";
let stack: DevStack | undefined;
const devStack = async () => (stack ??= await startDevStack());

function client(s: DevStack): SupabaseClient {
  return createClient(s.url, s.anonKey, { auth: { persistSession: false, autoRefreshToken: false } });
}

/** The configuration API as the settings UI calls it: with the session's current access token. */
async function api(c: SupabaseClient, s: DevStack, path: string, init: RequestInit = {}) {
  const { data } = await c.auth.getSession();
  const res = await fetch(`${s.url}/functions/v1/webhooks${path}`, {
    ...init,
    headers: { authorization: `Bearer ${data.session!.access_token}`, "content-type": "application/json" },
  });
  return { status: res.status, body: await res.json() };
}

async function adminOfTwo() {
  const email = `two-${crypto.randomUUID().slice(0, 8)}@example.org`;
  const first = await createOrganization(`Alpha ${crypto.randomUUID().slice(0, 6)}`);
  const second = await createOrganization(`Beta ${crypto.randomUUID().slice(0, 6)}`);
  const [a] = await sql()<{ name: string }[]>`select name from public.organizations where id = ${first}`;
  const [b] = await sql()<{ name: string }[]>`select name from public.organizations where id = ${second}`;
  const user = await upsertDevUser({ email, password: PASSWORD, organization: a!.name, role: "admin" });
  await upsertDevUser({ email, password: PASSWORD, organization: b!.name, role: "admin" });
  const epA = await createEndpoint(first, "https://alpha.example.org/hook", ["member.created"]);
  const epB = await createEndpoint(second, "https://beta.example.org/hook", ["member.created"]);
  return { email, userId: user.userId, first, second, names: [a!.name, b!.name], epA, epB };
}

const orgOf = async (c: SupabaseClient) =>
  jose.decodeJwt((await c.auth.getSession()).data.session!.access_token).organization_id;

Deno.test("an admin of two organizations lists them, switches, and then sees only the second one's endpoints", async () => {
  const s = await devStack();
  const t = await adminOfTwo();
  const c = client(s);
  try {
    assertEquals((await c.auth.signInWithPassword({ email: t.email, password: PASSWORD })).error, null);
    assertEquals(await orgOf(c), t.first, "the oldest membership first");

    const me = await api(c, s, "/me");
    assertEquals(me.status, 200);
    assertEquals(me.body.user, { id: t.userId, email: t.email });
    assertEquals(me.body.active_organization_id, t.first);
    assertEquals(
      me.body.memberships,
      [
        {
          organization_id: t.first,
          organization_name: t.names[0],
          role: "admin",
          suspended: false,
          suspension_reason: null,
        },
        {
          organization_id: t.second,
          organization_name: t.names[1],
          role: "admin",
          suspended: false,
          suspension_reason: null,
        },
      ],
    );
    const before = await api(c, s, "/endpoints");
    assertEquals(before.body.data.map((e: { id: string }) => e.id), [t.epA.id]);

    const switched = await api(c, s, "/me/active-organization", {
      method: "POST",
      body: JSON.stringify({ organization_id: t.second }),
    });
    assertEquals(switched, { status: 200, body: { active_organization_id: t.second } });
    assertEquals((await c.auth.refreshSession()).error, null);
    assertEquals(await orgOf(c), t.second);
    const after = await api(c, s, "/endpoints");
    assertEquals(after.status, 200);
    assertEquals(after.body.data.map((e: { id: string }) => e.id), [t.epB.id], "none of the first's");
    assertEquals((await api(c, s, "/me")).body.active_organization_id, t.second);

    // A fresh sign-in (another device) starts where the user left off.
    const other = client(s);
    await other.auth.signInWithPassword({ email: t.email, password: PASSWORD });
    assertEquals(await orgOf(other), t.second);
  } finally {
    await retireEndpoints(t.epA.id, t.epB.id);
  }
});

Deno.test("POST /me/active-organization: 403 not_a_member for someone else's organization, 400 for bad input", async () => {
  const s = await devStack();
  const t = await adminOfTwo();
  const stranger = await createOrganization();
  const c = client(s);
  try {
    await c.auth.signInWithPassword({ email: t.email, password: PASSWORD });
    const refused = await api(c, s, "/me/active-organization", {
      method: "POST",
      body: JSON.stringify({ organization_id: stranger }),
    });
    assertEquals(refused.status, 403);
    assertEquals(refused.body.error.code, "not_a_member");
    await c.auth.refreshSession();
    assertEquals(await orgOf(c), t.first, "nothing changed");
    for (
      const body of ['{"organization_id":"nope"}', "{}", '{"organization_id":"' + t.second + '","x":1}', "[1"]
    ) {
      const bad = await api(c, s, "/me/active-organization", { method: "POST", body });
      assertEquals(bad.status, 400, body);
    }
    // Organization API keys are not people: /me is for user tokens only.
    const key = await fetch(`${s.url}/functions/v1/webhooks/api-keys`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${(await c.auth.getSession()).data.session!.access_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "zap" }),
    }).then((r) => r.json());
    const viaKey = await fetch(`${s.url}/functions/v1/webhooks/me`, { headers: { "x-api-key": key.key } });
    assertEquals(viaKey.status, 403);
    await viaKey.body?.cancel();
    const anonymous = await fetch(`${s.url}/functions/v1/webhooks/me`);
    assertEquals(anonymous.status, 401);
    await anonymous.body?.cancel();
  } finally {
    await retireEndpoints(t.epA.id, t.epB.id);
  }
});

Deno.test("a member removed between two refreshes is refused at once and refreshed into a token without that organization", async () => {
  const s = await devStack();
  const t = await adminOfTwo();
  const c = client(s);
  try {
    await c.auth.signInWithPassword({ email: t.email, password: PASSWORD });
    await api(c, s, "/me/active-organization", {
      method: "POST",
      body: JSON.stringify({ organization_id: t.second }),
    });
    await c.auth.refreshSession();
    assertEquals(await orgOf(c), t.second);
    assertEquals((await api(c, s, "/endpoints")).status, 200);

    await sql()`delete from public.profiles where user_id = ${t.userId} and organization_id = ${t.second}`;
    // The token still names the organization, but the API refuses at once, before any refresh.
    assertEquals(await orgOf(c), t.second);
    const refused = await api(c, s, "/endpoints");
    assertEquals(refused.status, 403);
    assertEquals(refused.body.error.code, "admin_required");
    const me = await api(c, s, "/me");
    assertEquals(me.body.active_organization_id, null);
    assertEquals(me.body.memberships.map((m: { organization_id: string }) => m.organization_id), [t.first]);

    assertEquals((await c.auth.refreshSession()).error, null);
    const org = await orgOf(c);
    assert(org !== t.second, "the refreshed token no longer carries the removed organization");
    assertEquals(org, t.first, "the hook falls back to the remaining membership");
    const back = await api(c, s, "/endpoints");
    assertEquals(back.body.data.map((e: { id: string }) => e.id), [t.epA.id]);
  } finally {
    await retireEndpoints(t.epA.id, t.epB.id);
  }
});

Deno.test("stop the dev server", async () => {
  await stack?.stop();
  stack = undefined;
});

Deno.test("cleanup", async () => {
  await closeSql();
});
