// Organizations through the configuration API as deployed: a signed-in person with no membership
// creates one and becomes its admin, five a day (429 with Retry-After); its admins change name, time
// zone and contact address; every bad value is a 400 naming its field, a duplicate name a 409 at the
// field; staff, API keys, a signed-out session and another organization's admin change nothing. The
// names' rule is one: the API's pattern and the table's check refuse the same characters.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import { FORBIDDEN_IN_NAME } from "../supabase/functions/webhooks/routes/organizations.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "a person with no membership creates an organization, is its admin, and switches to it",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const founder = await createUser();
      const token = await tokenFor(founder);
      const name = `New Hope ${crypto.randomUUID().slice(0, 6)}`;
      const created = await call(api.base, "POST", "/organizations", asBearer(token), {
        name: `  ${name} `,
        time_zone: "America/Sao_Paulo",
        contact_email: "Office@NewHope.example",
      });
      assertEquals(created.status, 201);
      assertMatch(created.data.id, /^[0-9a-f-]{36}$/);
      assertEquals(
        [created.data.name, created.data.time_zone, created.data.contact_email, created.data.role],
        [name, "America/Sao_Paulo", "office@newhope.example", "admin"],
      );
      const me = await call(api.base, "GET", "/me", asBearer(token));
      assertEquals(me.data.memberships, [{
        organization_id: created.data.id,
        organization_name: name,
        role: "admin",
        suspended: false,
        suspension_reason: null,
      }]);
      assertEquals(me.data.active_organization_id, null, "creating does not switch; the client switches");

      const switched = await call(api.base, "POST", "/me/active-organization", asBearer(token), {
        organization_id: created.data.id,
      });
      assertEquals(switched.status, 200);
      const inIt = await tokenFor(founder, created.data.id);
      const org = await call(api.base, "GET", "/organization", asBearer(inIt));
      assertEquals([org.status, org.data.name, org.data.role], [200, name, "admin"]);
      const endpoints = await call(api.base, "GET", "/endpoints", asBearer(inIt));
      assertEquals(endpoints.status, 200, "and administers its webhooks at once");

      const none = await call(api.base, "GET", "/organization", asBearer(token));
      assertEquals([none.status, none.data.error.code], [403, "no_active_organization"]);
    } finally {
      await api.close();
    }
  },
);

Deno.test(
  "bad input gets a 400 at the field; a duplicate name of one's own a 409 at the field",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const user = await createUser();
      const token = await tokenFor(user);
      const field = async (body: unknown) => {
        const r = await call(api.base, "POST", "/organizations", asBearer(token), body);
        return [r.status, r.data?.error?.details?.fields?.map((f: { field: string }) => f.field)];
      };
      assertEquals(await field({}), [400, ["name"]]);
      assertEquals(await field({ name: "   " }), [400, ["name"]]);
      assertEquals(await field({ name: "x".repeat(201) }), [400, ["name"]]);
      assertEquals(await field({ name: "Grace\u202eChapel" }), [400, ["name"]], "a right-to-left override");
      assertEquals(await field({ name: "Grace\u200bChapel" }), [400, ["name"]], "a zero-width space");
      assertEquals(await field({ name: "Grace\nChapel" }), [400, ["name"]], "a line break");
      assertEquals(await field({ name: "Ok", time_zone: "EST+5" }), [400, ["time_zone"]]);
      assertEquals(
        await field({ name: "Ok", time_zone: "Mars/Olympus_Mons" }),
        [400, ["time_zone"]],
        "checked by the database",
      );
      assertEquals(await field({ name: "Ok", contact_email: "nope" }), [400, ["contact_email"]]);
      assertEquals(await field({ name: "Ok", extra: 1 }), [400, ["extra"]]);

      const name = `Grace ${crypto.randomUUID().slice(0, 6)}`;
      assertEquals((await call(api.base, "POST", "/organizations", asBearer(token), { name })).status, 201);
      const dup = await call(api.base, "POST", "/organizations", asBearer(token), {
        name: name.toUpperCase(),
      });
      assertEquals([dup.status, dup.data.error.code, dup.data.error.details.fields[0].field], [
        409,
        "duplicate_name",
        "name",
      ]);
      const other = await tokenFor(await createUser());
      const same = await call(api.base, "POST", "/organizations", asBearer(other), { name });
      assertEquals(same.status, 201, "another person may use the same name: nothing tells them it exists");
    } finally {
      await api.close();
    }
  },
);

Deno.test(
  "five organizations a day per person: the sixth answers 429 too_many_organizations with Retry-After",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const token = await tokenFor(await createUser());
      const run = crypto.randomUUID().slice(0, 6);
      for (let i = 1; i <= 5; i++) {
        const r = await call(api.base, "POST", "/organizations", asBearer(token), {
          name: `Plant ${run} ${i}`,
        });
        assertEquals(r.status, 201, `organization ${i}`);
      }
      const res = await fetch(`${api.base}/organizations`, {
        method: "POST",
        headers: asBearer(token),
        body: JSON.stringify({ name: `Plant ${run} 6` }),
      });
      const body = await res.json();
      assertEquals([res.status, body.error.code], [429, "too_many_organizations"]);
      const wait = Number(res.headers.get("retry-after"));
      assert(wait > 23 * 3600 && wait <= 24 * 3600, `Retry-After ${wait}: when the oldest is a day old`);
      assertMatch(body.error.message, /try again after \d{4}-\d{2}-\d{2}T/);
    } finally {
      await api.close();
    }
  },
);

Deno.test(
  "admins change name, time zone and contact address; staff, API keys and other organizations cannot",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const a = await createTenant();
      const b = await createTenant();
      const adminA = await tokenFor(a.admin, a.organizationId);
      const renamed = `Renamed ${crypto.randomUUID().slice(0, 6)}`;
      const changed = await call(api.base, "PATCH", "/organization", asBearer(adminA), {
        name: renamed,
        time_zone: "Asia/Kolkata",
        contact_email: "Hello@A.example",
      });
      assertEquals([changed.status, changed.data.name, changed.data.time_zone, changed.data.contact_email], [
        200,
        renamed,
        "Asia/Kolkata",
        "hello@a.example",
      ]);
      const cleared = await call(api.base, "PATCH", "/organization", asBearer(adminA), {
        contact_email: null,
      });
      assertEquals([cleared.status, cleared.data.contact_email, cleared.data.name], [200, null, renamed]);
      const empty = await call(api.base, "PATCH", "/organization", asBearer(adminA), {});
      assertEquals(empty.status, 400);
      const badZone = await call(api.base, "PATCH", "/organization", asBearer(adminA), {
        time_zone: "Nowhere/Land",
      });
      assertEquals([badZone.status, badZone.data.error.details.fields[0].field], [400, "time_zone"]);

      const staff = await call(
        api.base,
        "PATCH",
        "/organization",
        asBearer(await tokenFor(a.staff, a.organizationId)),
        {
          name: "Staff was here",
        },
      );
      assertEquals([staff.status, staff.data.error.code], [403, "admin_required"]);
      const staffRead = await call(
        api.base,
        "GET",
        "/organization",
        asBearer(await tokenFor(a.staff, a.organizationId)),
      );
      assertEquals([staffRead.status, staffRead.data.name, staffRead.data.role], [200, renamed, "staff"]);

      // An admin of B whose token claims A: A is not theirs.
      const adminBClaimingA = await tokenFor(b.admin, a.organizationId);
      const cross = await call(api.base, "PATCH", "/organization", asBearer(adminBClaimingA), {
        name: "B was here",
      });
      assertEquals(cross.status, 403);

      const key = await call(api.base, "POST", "/api-keys", asBearer(adminA), { name: "zap" });
      const byKey = await call(api.base, "PATCH", "/organization", {
        "x-api-key": key.data.key,
        "content-type": "application/json",
      }, {
        name: "Key was here",
      });
      assertEquals([byKey.status, byKey.data.error.code], [403, "user_required"]);
      const keyCreates = await call(api.base, "POST", "/organizations", {
        "x-api-key": key.data.key,
        "content-type": "application/json",
      }, {
        name: "By key",
      });
      assertEquals(keyCreates.status, 403, "an API key cannot create organizations");

      // A signed-out session: the token is still unexpired, the session is gone.
      const session = crypto.randomUUID();
      await sql()`insert into auth.sessions (id, user_id, created_at, updated_at) values (${session}, ${a.admin.id}, now(), now())`;
      const ended = await tokenFor(a.admin, a.organizationId, { session });
      await sql()`delete from auth.sessions where id = ${session}`;
      const late = await call(api.base, "PATCH", "/organization", asBearer(ended), { name: "Signed out" });
      assertEquals([late.status, late.data.error.code], [401, "session_not_found"]);
      const lateCreate = await call(api.base, "POST", "/organizations", asBearer(ended), {
        name: "Signed out",
      });
      assertEquals(lateCreate.status, 401);
      const anonymous = await call(
        api.base,
        "POST",
        "/organizations",
        { "content-type": "application/json" },
        { name: "x" },
      );
      assertEquals(anonymous.status, 401);

      const [row] = await sql()`select name from public.organizations where id = ${a.organizationId}`;
      assertEquals(row?.name, renamed, "none of the refused changes landed");
    } finally {
      await api.close();
    }
  },
);

Deno.test("one rule for names: every character the API refuses, the table refuses, and the other way round", async () => {
  const probe = [
    ...Array.from({ length: 0x2100 }, (_, i) => i + 1),
    0xfeff,
    0xfff9,
    0xfffa,
    0xfffb,
    0xfffc,
    0x1f600,
  ];
  // Each probe as a row of the real table, undone: the check_violation says the table refuses it.
  const refused = await sql().begin(async (tx) => {
    await tx`create function pg_temp.refused(c int) returns boolean language plpgsql as $f$
      begin
        insert into public.organizations (name) values ('a' || chr(c) || 'b');
        raise exception 'undo' using errcode = 'P0001';
      exception
        when check_violation then return true;
        when raise_exception then return false;
      end $f$`;
    const [row] = await tx<{ refused: number[] }[]>`
      select coalesce(array_agg(c order by c), '{}') as refused from unnest(${probe}::int[]) c where pg_temp.refused(c)`;
    await tx`drop function pg_temp.refused(int)`;
    return row!.refused;
  });
  const api = probe.filter((c) => FORBIDDEN_IN_NAME.test(`a${String.fromCodePoint(c)}b`));
  assertEquals(refused, api);
  assert(api.includes(0x202e) && api.includes(0x200b) && api.includes(0x0a), "the probe covers what matters");
  assert(!api.includes(0x1f600) && !api.includes(0xe9), "and leaves letters and emoji alone");
});

Deno.test("cleanup", async () => {
  await closeSql();
});
