// POST /invitations/preview as deployed, asked without signing in, as the invitation page asks it: what
// the token's invitation is for and nothing else, one 404 for every token that does not work, and a
// client that guesses is stopped. The attacks: a stranger guessing, a token of another organization, a
// used, withdrawn or expired link, a body fishing for ids and hashes.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { PREVIEW_FAILURES_PER_CLIENT } from "../supabase/functions/webhooks/routes/invitation_preview.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** A client of its own per test (the limit counts per client address). */
const from = (ip: string) => ({ "content-type": "application/json", "x-forwarded-for": ip });
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

async function invite(base: string, adminToken: string, email: string, role = "staff") {
  const res = await call(base, "POST", "/invitations", asBearer(adminToken), { email, role });
  assertEquals(res.status, 201, res.text);
  return res.data as { id: string; token: string; organization_id: string };
}

Deno.test(
  "signed out, the token shows its church, inviter, role, address and expiry: nothing else",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const a = await createTenant();
      const b = await createTenant();
      await sql()`update public.profiles set display_name = 'Pastor Ruth' where user_id = ${a.admin.id}`;
      const adminA = await tokenFor(a.admin, a.organizationId);
      const adminB = await tokenFor(b.admin, b.organizationId);
      const [names] = await sql()<{ a: string; b: string }[]>`
      select (select name from public.organizations where id = ${a.organizationId}) as a,
             (select name from public.organizations where id = ${b.organizationId}) as b`;
      const forA = await invite(
        api.base,
        adminA,
        `grace-${crypto.randomUUID().slice(0, 8)}@example.org`,
        "admin",
      );
      const forB = await invite(api.base, adminB, `samuel-${crypto.randomUUID().slice(0, 8)}@example.org`);

      const seen = await call(api.base, "POST", "/invitations/preview", from("198.51.100.1"), {
        token: forA.token,
      });
      assertEquals(seen.status, 200, seen.text);
      const [row] = await sql()<{ expires_at: Date; email: string }[]>`
      select expires_at, email from public.organization_invitations where id = ${forA.id}`;
      assertEquals(seen.data, {
        organization_name: names!.a,
        invited_by: "Pastor Ruth",
        role: "admin",
        email: row!.email,
        expires_at: row!.expires_at.toISOString(),
      }, "exactly what the page shows");
      assert(!UUID.test(seen.text), `no ids: ${seen.text}`);
      assert(!/[0-9a-f]{64}/.test(seen.text), `no token or hash: ${seen.text}`);

      // B's token, from the same client: B's invitation alone, its inviter named by address (no name set).
      const other = await call(api.base, "POST", "/invitations/preview", from("198.51.100.1"), {
        token: forB.token,
      });
      assertEquals(
        [other.status, other.data.organization_name, other.data.invited_by, other.data.role],
        [200, names!.b, b.admin.email, "staff"],
      );
      assert(!other.text.includes(names!.a) && !other.text.includes("Pastor Ruth"), other.text);

      // A signed-in caller of another organization gets the same answer, and nothing more.
      const signedIn = await call(api.base, "POST", "/invitations/preview", {
        ...asBearer(adminB),
        "x-forwarded-for": "198.51.100.1",
      }, { token: forA.token });
      assertEquals(signedIn.data, seen.data);

      // Fishing: extra fields are refused, the token is required.
      const fishing = await call(api.base, "POST", "/invitations/preview", from("198.51.100.1"), {
        token: forA.token,
        organization_id: b.organizationId,
      });
      assertEquals(fishing.status, 400);
      const previewsChangeNothing = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.organization_invitations
      where id in (${forA.id}, ${forB.id}) and accepted_at is null and revoked_at is null`;
      assertEquals(previewsChangeNothing[0]!.n, 2, "a preview accepts nothing");
    } finally {
      await api.close();
      await closeSql();
    }
  },
);

Deno.test("unknown, used, withdrawn and expired tokens answer one 404, word for word", opts, async () => {
  const api = await startWebhooksApi();
  try {
    const a = await createTenant();
    const adminA = await tokenFor(a.admin, a.organizationId);
    const newcomer = await createTenant();
    const used = await invite(api.base, adminA, newcomer.admin.email);
    const accepted = await call(
      api.base,
      "POST",
      "/invitations/accept",
      asBearer(await tokenFor(newcomer.admin)),
      {
        token: used.token,
      },
    );
    assertEquals(accepted.status, 200, accepted.text);
    const withdrawn = await invite(api.base, adminA, `w-${crypto.randomUUID().slice(0, 8)}@example.org`);
    assertEquals(
      (await call(api.base, "DELETE", `/invitations/${withdrawn.id}`, asBearer(adminA))).status,
      200,
    );
    const expired = await invite(api.base, adminA, `e-${crypto.randomUUID().slice(0, 8)}@example.org`);
    await sql()`update public.organization_invitations set created_at = now() - interval '8 days',
                expires_at = now() - interval '1 day' where id = ${expired.id}`;

    const answers = [];
    for (const token of ["inv_" + "0".repeat(64), used.token, withdrawn.token, expired.token, "x"]) {
      const res = await call(api.base, "POST", "/invitations/preview", from("198.51.100.2"), { token });
      answers.push(`${res.status} ${res.text}`);
    }
    assertEquals(new Set(answers).size, 1, answers.join("\n"));
    assertMatch(answers[0]!, /^404 .*"not_found"/);
  } finally {
    await api.close();
    await closeSql();
  }
});

Deno.test(
  "a client that guesses tokens is stopped, a right token too, while others are not",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const a = await createTenant();
      const invitation = await invite(
        api.base,
        await tokenFor(a.admin, a.organizationId),
        `g-${crypto.randomUUID().slice(0, 8)}@example.org`,
      );
      const guesser = from("203.0.113.9");
      for (let i = 0; i < PREVIEW_FAILURES_PER_CLIENT; i++) {
        const guess = "inv_" + crypto.randomUUID().replaceAll("-", "").repeat(2);
        assertEquals(
          (await call(api.base, "POST", "/invitations/preview", guesser, { token: guess })).status,
          404,
        );
      }
      const stopped = await fetch(`${api.base}/invitations/preview`, {
        method: "POST",
        headers: guesser,
        body: JSON.stringify({ token: invitation.token }),
      });
      const body = await stopped.json();
      assertEquals([stopped.status, body.error.code], [429, "too_many_attempts"], "the right token too");
      assert(Number(stopped.headers.get("retry-after")) > 0, "says when to try again");
      assert(!JSON.stringify(body).includes(a.organizationId), "says nothing of the invitation");

      const invitee = await call(api.base, "POST", "/invitations/preview", from("203.0.113.10"), {
        token: invitation.token,
      });
      assertEquals(invitee.status, 200, "another client is not stopped by the guesser");
      // Right tokens do not count: the invitee may reload the page as often as they like.
      for (let i = 0; i < PREVIEW_FAILURES_PER_CLIENT + 2; i++) {
        const again = await call(api.base, "POST", "/invitations/preview", from("203.0.113.10"), {
          token: invitation.token,
        });
        assertEquals(again.status, 200);
      }
    } finally {
      await api.close();
      await closeSql();
    }
  },
);
