// What a person's authority made ends with it, through the configuration API as deployed: removing an
// admin, their leaving and their demotion disable the webhook endpoints they made (themselves or with an
// API key of theirs), saying why and who, unless the remover keeps them; and a removal in flight cannot
// be raced: a key, an admin invitation, an endpoint or a promotion the person being removed makes while
// the removal's transaction is open waits for it and is refused (two held transactions, as the attack
// was done), and one made just before the removal is ended by it.
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
import { retireEndpoints } from "./helpers/outbound.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
let api: Awaited<ReturnType<typeof startWebhooksApi>>;
const made: string[] = [];
const URL_OF = (who: string) => `http://127.0.0.1:9/${who}-${crypto.randomUUID().slice(0, 8)}`;

async function membershipId(user: TestUser, organizationId: string): Promise<string> {
  const [row] = await sql()<{ id: string }[]>`
    select id from public.profiles where user_id = ${user.id} and organization_id = ${organizationId}`;
  return row!.id;
}

async function admin(organizationId: string): Promise<{ user: TestUser; bearer: Record<string, string> }> {
  const user = await createUser();
  await addMember(user.id, organizationId, "admin");
  return { user, bearer: asBearer(await tokenFor(user, organizationId)) };
}

async function endpoint(headers: Record<string, string>, url: string): Promise<string> {
  const res = await call(api.base, "POST", "/endpoints", headers, { url, events: ["member.created"] });
  assertEquals(res.status, 201, res.text);
  made.push(res.data.id);
  return res.data.id;
}

async function endpointState(id: string) {
  const [row] = await sql()<{ enabled: boolean; disabled_reason: string | null }[]>`
    select enabled, disabled_reason from public.webhook_endpoints where id = ${id}`;
  return row!;
}

/** Deliveries of a new member to each endpoint: which endpoints still receive the organization's data. */
async function deliveriesOfNewMember(organizationId: string, ids: string[]): Promise<number[]> {
  const [m] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, last_name) values (${organizationId}, 'New', 'Member')
    returning id`;
  const rows = await sql()<{ endpoint_id: string }[]>`
    select d.endpoint_id from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
     where e.organization_id = ${organizationId} and e.payload #>> '{data,row,id}' = ${m!.id}`;
  return ids.map((id) => rows.filter((r) => r.endpoint_id === id).length);
}

/** Backends of the test's database waiting for a lock, polled until `n` are (or 10 s). */
async function waitersAtLeast(n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < 100; i++) {
    const [row] = await sql()<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and state = 'active'`;
    count = row!.n;
    if (count >= n) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return count;
}

/** A transaction held open until `release()`: `ready` resolves once `work` has run inside it. */
function held<T>(
  claims: Record<string, unknown>,
  work: (tx: Parameters<Parameters<typeof asConfigApi>[1]>[0]) => Promise<T>,
) {
  let release!: () => void;
  let ready!: (value: T) => void;
  const gate = new Promise<void>((r) => (release = r));
  const started = new Promise<T>((r) => (ready = r));
  const done = asConfigApi(claims, async (tx) => {
    const out = await work(tx);
    ready(out);
    await gate;
    return out;
  });
  return { started, release, done };
}

Deno.test("setup", opts, async () => {
  api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
});

Deno.test(
  "removing an admin disables the endpoints they made, saying why and who; new members reach them no more",
  opts,
  async () => {
    const a = await createTenant();
    const remover = asBearer(await tokenFor(a.admin, a.organizationId));
    const leaving = await admin(a.organizationId);
    const own = await endpoint(leaving.bearer, URL_OF("own"));
    const key = await call(api.base, "POST", "/api-keys", leaving.bearer, { name: "Zapier" });
    assertEquals(key.status, 201, key.text);
    const viaKey = await endpoint(
      { "x-api-key": key.data.key, "content-type": "application/json" },
      URL_OF("zap"),
    );
    const church = await endpoint(remover, URL_OF("church"));
    const id = await membershipId(leaving.user, a.organizationId);

    // The remove dialog's list: what removing them would disable, with the URLs.
    const listed = await call(api.base, "GET", `/people/${id}/endpoints`, remover);
    assertEquals(listed.status, 200, listed.text);
    assertEquals(
      listed.data.data.map((e: { id: string; api_key_name: string | null }) => [e.id, e.api_key_name]),
      [[own, null], [viaKey, "Zapier"]],
    );
    assertMatch(listed.data.data[0].url, /^http:\/\/127\.0\.0\.1:9\/own-/);
    const staff = asBearer(await tokenFor(a.staff, a.organizationId));
    assertEquals(
      (await call(api.base, "GET", `/people/${id}/endpoints`, staff)).status,
      403,
      "staff: not theirs",
    );
    const other = await createTenant();
    const stranger = asBearer(await tokenFor(other.admin, other.organizationId));
    assertEquals((await call(api.base, "GET", `/people/${id}/endpoints`, stranger)).status, 404);

    const removed = await call(api.base, "DELETE", `/people/${id}`, remover);
    assertEquals([removed.status, removed.data.endpoints_disabled], [200, 2], removed.text);
    for (const e of [own, viaKey]) {
      const state = await endpointState(e);
      assertEquals(state.enabled, false, "the removed admin's endpoint sends nothing more");
      assertEquals(
        state.disabled_reason,
        `its creator, ${leaving.user.email}, was removed from the organization by ${a.admin.email}`,
      );
    }
    assertEquals(await deliveriesOfNewMember(a.organizationId, [own, viaKey, church]), [0, 0, 1]);

    // Another admin enables one again: it is the church's to decide.
    const enabled = await call(api.base, "PATCH", `/endpoints/${own}`, remover, { enabled: true });
    assertEquals([enabled.status, enabled.data.enabled], [200, true], enabled.text);
  },
);

Deno.test(
  "the remover may keep them; a demotion and leaving disable them too; nobody keeps their own",
  opts,
  async () => {
    const a = await createTenant();
    const remover = asBearer(await tokenFor(a.admin, a.organizationId));
    const kept = await admin(a.organizationId);
    const keptEndpoint = await endpoint(kept.bearer, URL_OF("kept"));
    const res = await call(
      api.base,
      "DELETE",
      `/people/${await membershipId(kept.user, a.organizationId)}`,
      remover,
      {
        keep_endpoints: true,
      },
    );
    assertEquals([res.status, res.data.endpoints_disabled], [200, 0], res.text);
    assertEquals((await endpointState(keptEndpoint)).enabled, true, "kept, as the remover chose");
    assertEquals(await deliveriesOfNewMember(a.organizationId, [keptEndpoint]), [1]);

    const demoted = await admin(a.organizationId);
    const demotedEndpoint = await endpoint(demoted.bearer, URL_OF("demoted"));
    const change = await call(
      api.base,
      "PATCH",
      `/people/${await membershipId(demoted.user, a.organizationId)}`,
      remover,
      { role: "staff" },
    );
    assertEquals(
      [change.status, change.data.role, change.data.endpoints_disabled],
      [200, "staff", 1],
      change.text,
    );
    assertEquals(await endpointState(demotedEndpoint), {
      enabled: false,
      disabled_reason:
        `its creator, ${demoted.user.email}, is no longer an administrator (changed by ${a.admin.email})`,
    });

    const leaver = await admin(a.organizationId);
    const leaverEndpoint = await endpoint(leaver.bearer, URL_OF("leaver"));
    const self = await call(
      api.base,
      "DELETE",
      `/people/${await membershipId(leaver.user, a.organizationId)}`,
      leaver.bearer,
      { keep_endpoints: true },
    );
    assertEquals([self.status, self.data.error.details.fields[0].field], [400, "keep_endpoints"], self.text);
    assertEquals((await endpointState(leaverEndpoint)).enabled, true, "the refused request changed nothing");
    const left = await call(api.base, "POST", `/memberships/${a.organizationId}/leave`, leaver.bearer, {});
    assert(left.status < 300, left.text);
    assertEquals(await endpointState(leaverEndpoint), {
      enabled: false,
      disabled_reason: `its creator, ${leaver.user.email}, left the organization`,
    });
  },
);

Deno.test(
  "a removal in flight: the removed admin's key, admin invitation, endpoint and promotion wait, then are refused",
  opts,
  async () => {
    const a = await createTenant();
    const attacker = await admin(a.organizationId);
    const accomplice = await membershipId(a.staff, a.organizationId);
    const target = await membershipId(attacker.user, a.organizationId);
    const removal = held(
      claimsFor(a.admin, a.organizationId),
      (tx) => tx`select private.remove_member(${target}, false)`,
    );
    await removal.started;
    // The attacker's writes, each passing its admin check on what is committed, while the removal is open.
    const writes = Promise.all([
      call(api.base, "POST", "/api-keys", attacker.bearer, { name: "Backdoor" }),
      call(api.base, "POST", "/invitations", attacker.bearer, {
        email: `back-${crypto.randomUUID().slice(0, 8)}@example.org`,
        role: "admin",
      }),
      call(api.base, "POST", "/endpoints", attacker.bearer, {
        url: URL_OF("exfil"),
        events: ["member.created"],
      }),
      call(api.base, "PATCH", `/people/${accomplice}`, attacker.bearer, { role: "admin" }),
    ]);
    assert(await waitersAtLeast(4) >= 1, "the attacker's writes wait for the removal");
    removal.release();
    await removal.done;
    const answers = await writes;
    for (const w of answers) made.push(w.data?.id ?? crypto.randomUUID());
    assertEquals(
      answers.map((w) => [w.status, w.data?.error?.code]),
      Array(4).fill([403, "admin_required"]),
      answers.map((w) => w.text).join("\n"),
    );
    const [left] = await sql()<{ keys: number; invitations: number; endpoints: number; admins: number }[]>`
      select (select count(*)::int from public.organization_api_keys
               where created_by = ${attacker.user.id} and revoked_at is null) as keys,
             (select count(*)::int from public.organization_invitations
               where invited_by = ${attacker.user.id} and revoked_at is null and accepted_at is null) as invitations,
             (select count(*)::int from public.webhook_endpoints
               where created_by = ${attacker.user.id} and enabled) as endpoints,
             (select count(*)::int from public.profiles
               where organization_id = ${a.organizationId} and role = 'admin') as admins`;
    assertEquals(left, { keys: 0, invitations: 0, endpoints: 0, admins: 1 });
  },
);

Deno.test(
  "a write just before the removal: the removal waits for it, then ends the key and disables the endpoint",
  opts,
  async () => {
    const a = await createTenant();
    const attacker = await admin(a.organizationId);
    const write = held(claimsFor(attacker.user, a.organizationId), async (tx) => {
      const [{ org }] = await tx<[{ org: string | null }]>`select private.hold_admin_authority() as org`;
      assertEquals(org, a.organizationId, "an admin now");
      await tx`insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
               values (${org}, 'Early', 'orgkey_early',
                       ${crypto.randomUUID().replaceAll("-", "").repeat(2)}, ${attacker.user.id})`;
      const [e] = await tx<[{ id: string }]>`
        insert into public.webhook_endpoints (organization_id, url, events)
        values (${org}, ${URL_OF("early")}, '{member.created}') returning id`;
      return e.id;
    });
    const early = await write.started;
    made.push(early);
    const remover = asBearer(await tokenFor(a.admin, a.organizationId));
    const removal = call(
      api.base,
      "DELETE",
      `/people/${await membershipId(attacker.user, a.organizationId)}`,
      remover,
    );
    assert(await waitersAtLeast(1) >= 1, "the removal waits for the write in flight");
    write.release();
    await write.done;
    const removed = await removal;
    assertEquals([removed.status, removed.data.endpoints_disabled], [200, 1], removed.text);
    const [key] = await sql()<{ revoked_reason: string | null }[]>`
      select revoked_reason from public.organization_api_keys where created_by = ${attacker.user.id}`;
    assertEquals(key!.revoked_reason, "its creator was removed from the organization");
    assertEquals((await endpointState(early)).enabled, false);
  },
);

Deno.test("cleanup", opts, async () => {
  await retireEndpoints(...made);
  await api.close();
  await closeSql();
});
