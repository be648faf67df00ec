// Invitations and leaving through the configuration API as deployed: an admin
// invites, only the invitee's acceptance makes a membership, the invitee's landing organization never
// moves because of another organization, members leave, the last admin stays; staff, API keys, other
// organizations and strangers cannot use any of it.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, createUser, sql, type TestUser } from "./helpers/db.ts";
import { startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";

const auth = (t: string) => ({ authorization: `Bearer ${t}`, "content-type": "application/json" });

async function confirmedUser(): Promise<TestUser> {
  const user = await createUser();
  await sql()`update auth.users set email_confirmed_at = now() where id = ${user.id}`;
  return user;
}

/** The organization the user's next token names, asking the hook as Supabase Auth does. */
async function landsIn(user: TestUser): Promise<string | null> {
  const [row] = await sql().begin(async (tx) => {
    await tx`set local role supabase_auth_admin`;
    const event = JSON.stringify({ user_id: user.id, claims: { sub: user.id, role: "authenticated" } });
    return await tx<{ org: string | null }[]>`
      select public.custom_access_token_hook(${event}::text::jsonb) -> 'claims' ->> 'organization_id' as org`;
  });
  return row!.org;
}

Deno.test("an admin invites, the invitee accepts and later leaves; the invitee's landing organization never moves", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const victim = await confirmedUser();
    await sql()`insert into public.profiles (user_id, organization_id, role, created_at)
                values (${victim.id}, ${b.organizationId}, 'staff', now() - interval '1 day')`;
    const adminA = await tokenFor(a.admin, a.organizationId);

    const invited = await fetch(`${api.base}/invitations`, {
      method: "POST",
      headers: auth(adminA),
      body: JSON.stringify({ email: victim.email, role: "staff" }),
    });
    assertEquals(invited.status, 201);
    const invitation = await invited.json();
    assertMatch(invitation.token, /^inv_[0-9a-f]{64}$/);
    assertEquals([invitation.email, invitation.role, invitation.organization_id], [
      victim.email,
      "staff",
      a.organizationId,
    ]);
    assertEquals(await landsIn(victim), b.organizationId, "an invitation alone changes nothing");

    const list = await (await fetch(`${api.base}/invitations`, { headers: auth(adminA) })).json();
    assertEquals(list.data.map((i: { id: string; status: string }) => [i.id, i.status]), [[
      invitation.id,
      "pending",
    ]]);
    assert(!JSON.stringify(list).includes(invitation.token), "the token is never listed");

    const victimToken = await tokenFor(victim, b.organizationId);
    const preview = await fetch(`${api.base}/invitations/preview`, {
      method: "POST",
      headers: auth(victimToken),
      body: JSON.stringify({ token: invitation.token }),
    });
    const previewed = await preview.json();
    assertEquals(
      [preview.status, previewed.invited_by, previewed.email, previewed.role],
      [200, a.admin.email, victim.email, "staff"],
      "the invitee sees what the link is for before accepting (tests/invitation_preview_api_test.ts)",
    );
    assert(previewed.organization_name, "with the organization's name");
    assertEquals(await landsIn(victim), b.organizationId, "a preview changes nothing");

    const accepted = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(victimToken),
      body: JSON.stringify({ token: invitation.token }),
    });
    assertEquals(accepted.status, 200);
    assertEquals(await accepted.json(), { organization_id: a.organizationId, role: "staff" });
    assertEquals(await landsIn(victim), b.organizationId, "accepting does not move the landing organization");
    const again = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(victimToken),
      body: JSON.stringify({ token: invitation.token }),
    });
    assertEquals([again.status, (await again.json()).error.code], [404, "not_found"]);

    const left = await fetch(`${api.base}/memberships/${a.organizationId}/leave`, {
      method: "POST",
      headers: auth(victimToken),
    });
    assertEquals(left.status, 200);
    await left.body?.cancel();
    const [gone] = await sql()`select count(*)::int as n from public.profiles
                               where user_id = ${victim.id} and organization_id = ${a.organizationId}`;
    assertEquals(gone!.n, 0);

    // The last admin of B cannot leave it.
    const adminB = await tokenFor(b.admin, b.organizationId);
    const lastAdmin = await fetch(`${api.base}/memberships/${b.organizationId}/leave`, {
      method: "POST",
      headers: auth(adminB),
    });
    assertEquals([lastAdmin.status, (await lastAdmin.json()).error.code], [409, "last_admin"]);
  } finally {
    await api.close();
  }
});

Deno.test("staff, API keys, other organizations and other users cannot invite, revoke or take an invitation", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const b = await createTenant();
    const invitee = await confirmedUser();
    const stranger = await confirmedUser();
    const adminA = await tokenFor(a.admin, a.organizationId);
    const invitation = await (await fetch(`${api.base}/invitations`, {
      method: "POST",
      headers: auth(adminA),
      body: JSON.stringify({ email: invitee.email, role: "admin" }),
    })).json();

    const staffA = await tokenFor(a.staff, a.organizationId);
    const staffInvite = await fetch(`${api.base}/invitations`, {
      method: "POST",
      headers: auth(staffA),
      body: JSON.stringify({ email: stranger.email }),
    });
    assertEquals([staffInvite.status, (await staffInvite.json()).error.code], [403, "admin_required"]);

    const key = (await (await fetch(`${api.base}/api-keys`, {
      method: "POST",
      headers: auth(adminA),
      body: JSON.stringify({ name: "Zapier" }),
    })).json()).key;
    const me = await fetch(`${api.base}/me`, { headers: { "x-api-key": key } });
    assertEquals((await me.json()).error, {
      code: "user_required",
      message: "API keys have no memberships; sign in as a person",
    });
    for (
      const [method, path] of [["GET", "/invitations"], ["POST", "/invitations"], [
        "POST",
        "/invitations/accept",
      ]]
    ) {
      const res = await fetch(`${api.base}${path}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ email: stranger.email }) : undefined,
      });
      assertEquals([res.status, (await res.json()).error.code], [403, "user_required"], `${method} ${path}`);
    }

    const adminB = await tokenFor(b.admin, b.organizationId);
    const bList = await (await fetch(`${api.base}/invitations`, { headers: auth(adminB) })).json();
    assertEquals(bList.data, [], "admin of B sees none of A's invitations");
    const bRevoke = await fetch(`${api.base}/invitations/${invitation.id}`, {
      method: "DELETE",
      headers: auth(adminB),
    });
    assertEquals(bRevoke.status, 404, "another organization's invitation is not found");
    await bRevoke.body?.cancel();

    const strangerToken = await tokenFor(stranger);
    const byId = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(strangerToken),
      body: JSON.stringify({ invitation_id: invitation.id }),
    });
    assertEquals(byId.status, 400, "an invitation is never accepted by its id");
    await byId.body?.cancel();
    for (const path of ["/invitations/accept", "/invitations/preview"]) {
      const bad = await fetch(`${api.base}${path}`, {
        method: "POST",
        headers: auth(strangerToken),
        body: JSON.stringify({ token: "inv_" + "0".repeat(64) }),
      });
      assertEquals(bad.status, 404, `a guessed token is not found (${path})`);
      await bad.body?.cancel();
    }

    const revoked = await fetch(`${api.base}/invitations/${invitation.id}`, {
      method: "DELETE",
      headers: auth(adminA),
    });
    assertEquals([revoked.status, (await revoked.json()).status], [200, "revoked"]);
    const late = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(await tokenFor(invitee)),
      body: JSON.stringify({ token: invitation.token }),
    });
    assertEquals(late.status, 404, "a revoked invitation cannot be accepted");
    await late.body?.cancel();
    const [members] =
      await sql()`select count(*)::int as n from public.profiles where user_id = ${invitee.id}`;
    assertEquals(members!.n, 0);
  } finally {
    await api.close();
  }
});

// The attack: with supabase/config.toml as shipped (enable_signup = true, enable_confirmations = false)
// Supabase Auth confirms an address at sign-up, so anyone can become "newhire@..." before newhire does.
// Admin invites newhire@ as admin -> the attacker signs up as newhire@ at the local Supabase Auth ->
// lists the invitations received -> accepts one by its id. Joining must take the invitation's token.
Deno.test("signing up as an invited address gets nothing: the invitation is neither listed nor accepted without its token", async () => {
  const stack = await startDevStack();
  try {
    const password = "correct horse battery";
    const admin = await upsertDevUser({
      email: `admin-${crypto.randomUUID().slice(0, 8)}@example.org`,
      password,
      organization: `Church ${crypto.randomUUID().slice(0, 8)}`,
      role: "admin",
    });
    const authCall = (path: string, body: unknown) =>
      fetch(`${stack.url}/auth/v1${path}`, {
        method: "POST",
        headers: { apikey: stack.anonKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const signedIn = await authCall("/token?grant_type=password", { email: admin.email, password });
    assertEquals(signedIn.status, 200);
    const api = (token: string, method: string, path: string, body?: unknown) =>
      fetch(`${stack.url}/functions/v1/webhooks${path}`, {
        method,
        headers: auth(token),
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));

    const newhire = `newhire-${crypto.randomUUID().slice(0, 8)}@example.org`;
    const invited = await api(signedIn.body.access_token, "POST", "/invitations", {
      email: newhire,
      role: "admin",
    });
    assertEquals(invited.status, 201);

    // The attacker registers the address (confirmed at once, as config.toml ships) ...
    const attacker = await authCall("/signup", { email: newhire, password: "attacker-password" });
    assertEquals(attacker.status, 200, JSON.stringify(attacker.body));
    assert(attacker.body.user.email_confirmed_at, "sign-up confirms the address under the shipped config");
    const token = attacker.body.access_token as string;
    // ... finds the invitation ...
    const received = await api(token, "GET", "/invitations/received");
    assertEquals(received.status, 404, `the address alone lists nothing: ${JSON.stringify(received.body)}`);
    // ... and accepts it by id.
    const byId = await api(token, "POST", "/invitations/accept", { invitation_id: invited.body.id });
    assertEquals(byId.status, 400, `no acceptance by id: ${JSON.stringify(byId.body)}`);
    const [joined] =
      await sql()`select count(*)::int as n from public.profiles p join auth.users u on u.id = p.user_id
                                 where u.email = ${newhire}`;
    assertEquals(joined!.n, 0, "the attacker joined nothing");

    // Control: whoever holds the link that was sent joins, with the invited role.
    const accepted = await api(token, "POST", "/invitations/accept", { token: invited.body.token });
    assertEquals([accepted.status, accepted.body.role], [200, "admin"]);
  } finally {
    await stack.stop();
  }
});

Deno.test("an admin cannot make us send mail without bound: past 2,400 mails a day, invitations are 429", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    // An established church (a new one sends at most 50 invitations a day).
    await sql()`update public.organizations set created_at = now() - interval '30 days' where id = ${a.organizationId}`;
    const adminA = await tokenFor(a.admin, a.organizationId);
    const invite = (email: string) =>
      fetch(`${api.base}/invitations`, {
        method: "POST",
        headers: auth(adminA),
        body: JSON.stringify({ email, role: "staff" }),
      });
    const first = await invite(`first-${crypto.randomUUID()}@example.org`);
    assertEquals(first.status, 201);
    await first.body?.cancel();
    // A day's worth queued already (an address book), as the server would have queued it.
    await sql()`select count(private.mail_enqueue(${a.organizationId}, 'invitation', 'book' || g || '@example.org', '{}'))
                from generate_series(1, 2399) g`;
    const [spread] = await sql()<{ due_now: number; last_hours: number }[]>`
      select count(*) filter (where next_attempt_at <= now())::int as due_now,
             round(extract(epoch from max(next_attempt_at) - now()) / 3600)::int as last_hours
      from private.mail_outbox where organization_id = ${a.organizationId}`;
    assertEquals([spread!.due_now, spread!.last_hours], [100, 23], "100 an hour, spread over the day");
    const refused = await invite(`one-more-${crypto.randomUUID()}@example.org`);
    assertEquals([refused.status, (await refused.json()).error.code], [429, "too_many_invitations"]);
    const [left] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.organization_invitations where organization_id = ${a.organizationId}`;
    assertEquals(left!.n, 1, "nothing of the refused invitation is kept");
    await sql()`delete from private.mail_outbox where organization_id = ${a.organizationId}`;
  } finally {
    await api.close();
  }
});

Deno.test("ten throwaway organizations cannot stop an established church's invitation to one person", async () => {
  const api = await startWebhooksApi();
  const post = async (token: string, path: string, body: unknown) => {
    const res = await fetch(`${api.base}${path}`, {
      method: "POST",
      headers: auth(token),
      body: JSON.stringify(body),
    });
    return { status: res.status, data: await res.json() };
  };
  try {
    const church = await createTenant();
    await sql()`update public.organizations set created_at = now() - interval '90 days' where id = ${church.organizationId}`;
    const pastor = `pastor-${crypto.randomUUID().slice(0, 8)}@example.org`;
    // The attack: two sign-ups make five organizations each (the most a day), each inviting the person the
    // church is about to invite.
    const throwaway: [number, string | undefined][] = [];
    for (const _ of [1, 2]) {
      const attacker = await createUser();
      for (let i = 0; i < 5; i++) {
        const org = await post(await tokenFor(attacker), "/organizations", {
          name: `Throwaway ${crypto.randomUUID().slice(0, 8)}`,
        });
        assertEquals(org.status, 201, JSON.stringify(org.data));
        const invited = await post(await tokenFor(attacker, org.data.id), "/invitations", {
          email: pastor,
          role: "admin",
        });
        throwaway.push([invited.status, invited.data.error?.code]);
      }
    }
    assertEquals(
      throwaway,
      [...Array(3).fill([201, undefined]), ...Array(7).fill([429, "recipient_limited"])],
      "new organizations share a small allowance for one person",
    );
    const own = await post(await tokenFor(church.admin, church.organizationId), "/invitations", {
      email: pastor,
      role: "staff",
    });
    assertEquals(own.status, 201, JSON.stringify(own.data));
    const [mail] = await sql()<{ data: Record<string, unknown> }[]>`
      select data from private.mail_outbox where organization_id = ${church.organizationId} and recipient = ${pastor}`;
    assertEquals(
      mail!.data.organization_id,
      church.organizationId,
      "the mail can say which church invited them",
    );
  } finally {
    await api.close();
  }
});

// The attack as reported: an admin invited someone, the platform suspended the organization, and the
// invitee joined it anyway (a new admin during the suspension). Nothing joins a suspended organization;
// once it is resumed the same link works.
Deno.test("an invitation into a suspended organization is refused with the suspension's words, and works once resumed", async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const invitee = await confirmedUser();
    const invited = await fetch(`${api.base}/invitations`, {
      method: "POST",
      headers: auth(await tokenFor(a.admin, a.organizationId)),
      body: JSON.stringify({ email: invitee.email, role: "admin" }),
    });
    assertEquals(invited.status, 201);
    const { token } = await invited.json();
    await sql()`insert into private.organization_suspensions (organization_id, reason)
                values (${a.organizationId}, 'unpaid invoices')`;

    const inviteeToken = await tokenFor(invitee);
    const refused = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(inviteeToken),
      body: JSON.stringify({ token }),
    });
    const body = await refused.json();
    assertEquals([refused.status, body.error.code], [403, "organization_suspended"], JSON.stringify(body));
    assertMatch(body.error.message, /suspended by the platform's administrators/);
    assert(!JSON.stringify(body).includes("unpaid"), "the administrators' reason is for the church's admins");
    const [joined] = await sql()`select count(*)::int as n from public.profiles
                                 where user_id = ${invitee.id} and organization_id = ${a.organizationId}`;
    assertEquals(joined!.n, 0, "no membership was made");

    await sql()`delete from private.organization_suspensions where organization_id = ${a.organizationId}`;
    const accepted = await fetch(`${api.base}/invitations/accept`, {
      method: "POST",
      headers: auth(inviteeToken),
      body: JSON.stringify({ token }),
    });
    assertEquals(accepted.status, 200, "the refusal did not use the invitation up");
    await accepted.body?.cancel();
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
