// API writes as hosted Supabase runs them: through `authenticator`, which loads pg-safeupdate and then
// becomes service_role or authenticated. pg-safeupdate refuses any UPDATE or DELETE without a WHERE,
// including those inside the triggers and functions a write reaches. scripts/test-in-cluster.sh builds
// our stand-in (scripts/require-where) and preloads it for `authenticator` in the throwaway cluster;
// these tests write through that role, so a trigger path with such a statement fails here as on hosted.
// The settings area's writes never come through `authenticator` (it cannot become config_api); they
// run here under the same guard all the same, through a login made for the purpose, so their trigger
// paths stay safe to reach from the Data API's side as well.
import { assert, assertEquals, assertRejects } from "./helpers/assert.ts";
import { addMember, claimsFor, closeSql, createOrganization, createUser, sql } from "./helpers/db.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { createSql, type Sql, type Tx, withClaims } from "../supabase/functions/_shared/db.ts";

const apiUrl = Deno.env.get("TEST_API_DATABASE_URL");

function apiPool(): Sql {
  if (!apiUrl) {
    throw new Error("TEST_API_DATABASE_URL is not set: scripts/test-in-cluster.sh could not build the guard");
  }
  return createSql(apiUrl, { max: 1 });
}

/**
 * A pool whose login loads the guard as `authenticator` does and may become config_api (the
 * configuration API's role): the settings area's writes under pg-safeupdate. `fn` gets it; the login
 * is dropped afterwards.
 */
async function withConfigApiPool(fn: (api: Sql) => Promise<void>): Promise<void> {
  const db = sql();
  const role = `guard_config_api_${crypto.randomUUID().slice(0, 8)}`;
  const password = crypto.randomUUID();
  const [setting] = await db<{ libs: string }[]>`
    select substr(c, length('session_preload_libraries=') + 1) as libs
    from pg_db_role_setting s, unnest(s.setconfig) c
    where s.setrole = 'authenticator'::regrole and c like 'session_preload_libraries=%'`;
  assert(setting, "the guard is preloaded for authenticator");
  await db.unsafe(`create role ${role} login password '${password}' in role config_api`);
  // (the setting as stored: a list, its element quoted already)
  await db.unsafe(`alter role ${role} set session_preload_libraries = ${setting!.libs}`);
  const url = new URL(apiUrl!);
  url.username = role;
  url.password = password;
  const api = createSql(url.toString(), { max: 1 });
  try {
    await fn(api);
  } finally {
    await api.end();
    await db.unsafe(`drop role ${role}`);
  }
}

/** One request as PostgREST makes it for the service-role key: a transaction as service_role. */
function asService<T>(api: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return api.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', '{"role":"service_role"}', true),
                    set_config('role', 'service_role', true)`;
    return await fn(tx);
  }) as Promise<T>;
}

Deno.test("the API role runs under the guard: an UPDATE without WHERE is refused as pg-safeupdate refuses it", async () => {
  const api = apiPool();
  try {
    const err = await assertRejects(() =>
      api.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true)`;
        await tx`update public.members set first_name = first_name`;
      })
    );
    assertEquals((err as Error).message, "UPDATE requires a WHERE clause");
    // The guard belongs to the API role only: the migrating role is not subject to it.
    await sql()`update public.members set first_name = first_name where false`;
  } finally {
    await api.end();
  }
});

/**
 * Plays pg_net and Vault for `fn`: `net.http_post` records each queued request's URL and body in
 * `net.posted` instead of sending it. Both schemas are dropped afterwards.
 */
async function withNetStandIn(fn: () => Promise<void>): Promise<void> {
  const db = sql();
  await db`create schema net`;
  try {
    await db`create table net.posted (id bigserial primary key, url text, body jsonb)`;
    await db`create function net.http_post(url text, body jsonb default '{}', params jsonb default '{}',
                                           headers jsonb default '{}', timeout_milliseconds integer default 5000)
             returns bigint language sql as $$ insert into net.posted (url, body) values (url, body) returning id $$`;
    await db`grant usage on schema net to public`;
    await db`create schema vault`;
    await db`create table vault.decrypted_secrets (name text, decrypted_secret text)`;
    await db`insert into vault.decrypted_secrets values ('project_url', 'https://ref.example.org'),
                                                        ('webhook_dispatch_secret', 'guard-secret')`;
    await fn();
  } finally {
    await db`drop schema if exists net cascade`;
    await db`drop schema if exists vault cascade`;
  }
}

Deno.test("an API write wakes the dispatcher under the guard (pg_net and Vault played by stand-ins)", async () => {
  const db = sql();
  const org = await createOrganization();
  const endpoint = await createEndpoint(org, "https://guard.example.org/hook", ["member.created"]);
  try {
    await withNetStandIn(async () => {
      await db`update private.function_wakes set woken_at = '-infinity' where function_name = 'webhook-dispatcher'`;
      const api = apiPool();
      try {
        await asService(
          api,
          (tx) => tx`insert into public.members (organization_id, first_name) values (${org}, 'Woken')`,
        );
      } finally {
        await api.end();
      }
      const posted = await db<{ url: string; body: Record<string, unknown> }[]>`
        select url, body from net.posted where url like '%/webhook-dispatcher'`;
      assertEquals(posted.length, 1, "one wake-up request queued by the API write");
      assertEquals(posted[0]!.body.stop_when_idle, true);
    });
  } finally {
    await retireEndpoints(endpoint.id);
  }
});

Deno.test("an admin's invitation through the API queues its mail and wakes the mail sender under the guard", async () => {
  const db = sql();
  const org = await createOrganization();
  const admin = await createUser();
  await addMember(admin.id, org, "admin");
  const invitee = `guard-${crypto.randomUUID()}@example.org`;
  await withNetStandIn(async () => {
    await db`update private.function_wakes set woken_at = '-infinity' where function_name = 'mail-sender'`;
    await withConfigApiPool(async (api) => {
      await withClaims(api, claimsFor(admin, org), async (tx) => {
        await tx`select public.create_invitation(${invitee}, 'staff')`;
      }, "config_api");
    });
    const [mail] = await db<{ n: number }[]>`
      select count(*)::int as n from private.mail_outbox where recipient = ${invitee}`;
    assertEquals(mail!.n, 1, "the invitation's mail is queued in the same transaction");
    const posted = await db<{ url: string }[]>`select url from net.posted where url like '%/mail-sender'`;
    assertEquals(posted.length, 1, "one wake-up of the mail sender queued by the API write");
  });
});

Deno.test("every trigger path an API write reaches runs under the guard", async () => {
  const db = sql();
  const org = await createOrganization();
  const admin = await createUser();
  await addMember(admin.id, org, "admin");
  const endpoint = await createEndpoint(org, "https://paths.example.org/hook", [
    "member.created",
    "member.lost",
    "donation.recorded",
    "attendance.marked",
    "workflow.completed",
  ]);
  const [workflow] = await db<{ id: string }[]>`
    insert into public.workflows (organization_id, name) values (${org}, 'Welcome') returning id`;
  const [key] = await db<{ id: string }[]>`
    insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash)
    values (${org}, 'Guard', 'orgkey_guard', encode(sha256(gen_random_uuid()::text::bytea), 'hex')) returning id`;
  const api = apiPool();
  try {
    // As the service role (server-side code through the API): the outbox triggers of every event.
    await asService(api, async (tx) => {
      const [m] = await tx<{ id: string }[]>`
        insert into public.members (organization_id, first_name, primary_phone) values (${org}, 'Path', '+1 555 0100')
        returning id`;
      await tx`update public.members set status = 'lost' where id = ${m!.id}`;
      await tx`insert into public.donations (organization_id, member_id, amount_minor, currency)
               values (${org}, ${m!.id}, 500, 'GBP')`;
      await tx`insert into public.attendance (organization_id, member_id) values (${org}, ${m!.id})`;
      const [run] = await tx<{ id: string }[]>`
        insert into public.workflow_runs (organization_id, workflow_id, member_id) values (${org}, ${
        workflow!.id
      }, ${m!.id})
        returning id`;
      await tx`update public.workflow_runs set status = 'completed', finished_at = now() where id = ${
        run!.id
      }`;
      await tx`delete from public.attendance where organization_id = ${org}`;
    });
    // As the organization's admin: through the Data API, and the settings UI through the configuration API.
    const claims = claimsFor(admin, org);
    await withClaims(api, claims, (tx) => tx`select public.set_active_organization(${org})`);
    await withConfigApiPool((configApi) =>
      withClaims(configApi, claims, async (tx) => {
        await tx`update public.webhook_endpoints set events = array['member.created'] where id = ${endpoint.id}`;
        await tx`update public.webhook_endpoints set enabled = false where id = ${endpoint.id}`;
        await tx`update public.organization_api_keys set revoked_at = now() where id = ${key!.id}`;
        await tx`insert into public.organization_log_retention (organization_id, webhook_log_days) values (${org}, 7)`;
        await tx`update public.organization_log_retention set webhook_log_days = 14 where organization_id = ${org}`;
        await tx`update public.organization_settings set webhook_secret = 'rotated' where organization_id = ${org}`;
        const [e] = await tx<{ id: string }[]>`
        insert into public.webhook_endpoints (organization_id, url, events)
        values (${org}, 'https://paths2.example.org/hook', array['member.created']) returning id`;
        await tx`delete from public.webhook_endpoints where id = ${e!.id}`;
      }, "config_api")
    );
    const [events] = await db<{ n: number }[]>`
      select count(*)::int as n from public.webhook_events where organization_id = ${org}`;
    assert(events!.n >= 5, `the writes raised their events (${events!.n})`);
  } finally {
    await api.end();
    await retireEndpoints(endpoint.id);
  }
});

Deno.test({
  name: "close the shared pool",
  fn: closeSql,
  sanitizeResources: false,
});
