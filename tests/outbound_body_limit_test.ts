// A staff member of one organization tried to stop every organization's webhooks with huge member
// fields: 16 members with a 10 MiB first name each, in one transaction (RLS lets staff write members),
// made 20 MiB bodies (row and delta) that took the dispatcher past its memory and killed it again on
// every restart. Now the name is refused at the write, other organizations' deliveries flow, and a body
// that would still be too large (a server-side writer) goes out trimmed with a `truncated` marker;
// /samples and /deliveries/{id} stay bounded.
import { assert, assertEquals, assertMatch, assertRejects } from "./helpers/assert.ts";
import { asUser, closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { addMembers, createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { hmacSha256Hex } from "../supabase/functions/_shared/hmac.ts";
import { SAMPLES_MAX_BYTES } from "../supabase/functions/webhooks/routes/automation.ts";
import { MAX_BODY_BYTES as MAX_BODY } from "../supabase/functions/webhook-dispatcher/claims.ts";

/** A server-side writer's event for `organizationId` whose row carries a `bytes`-long field. */
async function enqueueLarge(organizationId: string, bytes: number): Promise<string> {
  const id = crypto.randomUUID();
  const big = "x".repeat(bytes);
  await sql()`select private.webhook_enqueue('member.created', ${
    sql().json([{
      organization_id: organizationId,
      row: { id, status: "active", notes: big },
      delta: { notes: big },
    }] as never)
  })`;
  return id;
}

Deno.test("staff cannot store 10 MiB member names; other organizations' deliveries flow", async () => {
  const attacker = await createTenant();
  const other = await createTenant();
  const mine = await startReceiver();
  const theirs = await startReceiver();
  const epMine = await createEndpoint(attacker.organizationId, `${mine.url}/hook`, ["member.created"]);
  const epTheirs = await createEndpoint(other.organizationId, `${theirs.url}/hook`, ["member.created"]);
  try {
    const err = await assertRejects(() =>
      asUser(attacker.staffClaims, (tx) =>
        tx`insert into public.members (organization_id, first_name)
           select ${attacker.organizationId}, repeat('n', 10 * 1024 * 1024) from generate_series(1, 16)`)
    ) as { code?: string; message?: string };
    assertEquals(err.code, "23514");
    assertMatch(err.message ?? "", /members_first_name_length/);
    const [stored] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.webhook_events where organization_id = ${attacker.organizationId}`;
    assertEquals(stored!.n, 0, "no event for the refused rows");

    await addMembers(other.organizationId, 5);
    await addMembers(attacker.organizationId, 1);
    await testEngine().run({ stopWhenIdle: true });
    assertEquals(theirs.requests.length, 5);
    assertEquals(mine.requests.length, 1, "the staff member's ordinary write still goes out");
    for (const d of [...await deliveriesOf(epTheirs.id), ...await deliveriesOf(epMine.id)]) {
      assertEquals(d.status, "delivered");
    }
  } finally {
    await retireEndpoints(epMine.id, epTheirs.id);
    await Promise.all([mine.close(), theirs.close()]);
  }
});

Deno.test("the dispatcher knows the database's largest body", async () => {
  const [row] = await sql()<{ n: number }[]>`select private.webhook_max_body_bytes() as n`;
  assertEquals(row!.n, MAX_BODY);
});

Deno.test("a body too large is sent trimmed and marked; /deliveries/{id} and /samples stay bounded", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  const receiver = await startReceiver();
  const tenant = await createTenant();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    const rowId = await enqueueLarge(tenant.organizationId, 3 * 1024 * 1024);
    await testEngine().run({ stopWhenIdle: true });
    await receiver.waitFor(1);
    const got = receiver.requests[0]!;
    assert(got.body.byteLength <= MAX_BODY, `body of ${got.body.byteLength} bytes`);
    assertEquals(got.headers.get("x-webhook-signature"), await hmacSha256Hex(ep.secret, got.body));
    const body = JSON.parse(got.text);
    assertEquals(body.type, "member.created");
    assertEquals(body.organization_id, tenant.organizationId);
    assertEquals(body.data.row, { id: rowId, status: "active" });
    assertEquals(body.truncated.omitted_fields, ["notes"]);
    assertEquals(body.truncated.max_body_bytes, MAX_BODY);

    const headers = { authorization: `Bearer ${await tokenFor(tenant.admin, tenant.organizationId)}` };
    const [delivery] = await deliveriesOf(ep.id);
    const detail = await fetch(`${api.base}/deliveries/${delivery!.id}`, { headers });
    assertEquals(detail.status, 200);
    const read = await detail.json();
    assertEquals(read.body, got.text, "the logs show exactly the body sent");

    // Eight bodies of about 200 KiB (under the maximum, sent whole): a sample page of 100 would be
    // 1.6 MB; it stops at SAMPLES_MAX_BYTES, newest first.
    for (let i = 0; i < 8; i++) await enqueueLarge(tenant.organizationId, 100 * 1024);
    const samples = await fetch(`${api.base}/samples/member.created?limit=100`, { headers });
    assertEquals(samples.status, 200);
    const text = await samples.text();
    const bodies = JSON.parse(text) as { data: { row: { notes?: string } } }[];
    assert(new TextEncoder().encode(text).byteLength <= SAMPLES_MAX_BYTES + 4096, `${text.length} bytes`);
    assertEquals(bodies.length, 5, "as many whole bodies as fit in 1 MiB");
    assert(bodies.every((b) => b.data.row.notes?.length === 100 * 1024), "the newest ones, whole");
    const one = await fetch(`${api.base}/samples/member.created?limit=1`, { headers });
    assertEquals((await one.json()).length, 1);
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
