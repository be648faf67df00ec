// Organizations through the configuration API as deployed: a signed-in person with no membership
// creates one and becomes its admin, five a day (429 with Retry-After); its admins change name, time
// zone and contact address; every bad value is a 400 naming its field, a duplicate name a 409 at the
// field; staff, API keys, a signed-out session and another organization's admin change nothing. The
// names' rule is one: the API's pattern and the table's check refuse the same characters.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";
import {
  normalizeOrganizationName,
  organizationNameProblem,
} from "../supabase/functions/webhooks/organization_name.ts";

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

// Names that look blank or hide characters, as an attacker would type them: each alone (a name that
// looks empty) and between two words (one church's name passing for another's).
const HIDDEN = [
  ["U+3164 Hangul filler", "\u3164"],
  ["U+2800 braille blank", "\u2800"],
  ["U+115F Hangul choseong filler", "\u115f"],
  ["U+FFA0 halfwidth Hangul filler", "\uffa0"],
  ["U+034F combining grapheme joiner", "\u034f"],
  ["U+E0020 tag space", "\u{e0020}"],
  ["U+E0041 tag letter", "\u{e0041}"],
  ["U+FE0F variation selector", "\ufe0f"],
  ["U+E0100 variation selector", "\u{e0100}"],
] as const;

Deno.test(
  "blank-looking and hidden characters in a name are refused with a 400 at the field, on create and rename",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const t = await createTenant();
      const admin = await tokenFor(t.admin, t.organizationId);
      const founderUser = await createUser();
      const founder = await tokenFor(founderUser);
      const [before] = await sql()`select name from public.organizations where id = ${t.organizationId}`;
      const refused = async (method: "POST" | "PATCH", name: string, why: string, message: RegExp) => {
        const r = await call(
          api.base,
          method,
          method === "POST" ? "/organizations" : "/organization",
          asBearer(
            method === "POST" ? founder : admin,
          ),
          { name },
        );
        assertEquals([r.status, r.data?.error?.code], [400, "invalid_request"], `${method} ${why}`);
        assertEquals(r.data.error.details.fields.length, 1, why);
        assertEquals(r.data.error.details.fields[0].field, "name", why);
        assertMatch(r.data.error.details.fields[0].message, message, why);
      };
      for (const [why, c] of HIDDEN) {
        const code = `U\\+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
        for (const method of ["POST", "PATCH"] as const) {
          await refused(
            method,
            c,
            `${why} alone`,
            new RegExp(`contains ${code}, .*invisible or blank-looking`),
          );
          await refused(method, `${c}${c}${c}`, `${why} three times`, new RegExp(code));
          await refused(method, `First${c}Church`, `${why} inside a name`, new RegExp(code));
        }
      }
      for (const method of ["POST", "PATCH"] as const) {
        await refused(method, "\u00a0\u3000 \u2003", "spaces of every kind", /is blank/);
        await refused(method, `Grace${"\u0301".repeat(150)}`, "150 combining marks", /combining marks/);
        await refused(method, "\u0301\u0302", "marks with nothing to sit on", /is blank/);
      }
      const [after] = await sql()`select name from public.organizations where id = ${t.organizationId}`;
      assertEquals(after!.name, before!.name, "no rename landed");
      const made = await sql()`select 1 from public.organizations where created_by = ${founderUser.id}`;
      assertEquals(made.length, 0, "nor any creation");
    } finally {
      await api.close();
    }
  },
);

Deno.test(
  "names are stored normalized: NFC, one kind of space; so look-alikes are the same name (409)",
  opts,
  async () => {
    const api = await startWebhooksApi();
    try {
      const token = await tokenFor(await createUser());
      const run = crypto.randomUUID().slice(0, 6);
      const made = await call(api.base, "POST", "/organizations", asBearer(token), {
        name: `\u3000Cafe\u0301\u00a0\u00a0Church ${run}\u2003`,
      });
      assertEquals([made.status, made.data.name], [201, `Caf\u00e9 Church ${run}`]);
      const twin = await call(api.base, "POST", "/organizations", asBearer(token), {
        name: `caf\u00e9\u202fchurch ${run}`,
      });
      assertEquals(
        [twin.status, twin.data.error?.code],
        [409, "duplicate_name"],
        "the same name to a reader",
      );
      const marks = await call(api.base, "POST", "/organizations", asBearer(token), {
        name: `x\u0300\u0302\u0303\u0304\u0305 ${run}`,
      });
      assertEquals(marks.status, 201, "five combining marks on one letter are allowed");
      const [row] =
        await sql()`insert into public.organizations (name) values (${`  Grace\u00a0Chapel ${run} `})
        returning id, name`;
      await sql()`delete from public.organizations where id = ${row!.id}`;
      assertEquals(row!.name, `Grace Chapel ${run}`, "any writer's name is stored normalized");
    } finally {
      await api.close();
    }
  },
);

Deno.test("one rule for names: every name the API refuses, the table refuses, and the other way round", async () => {
  // Every code point of the Basic Multilingual Plane, and the supplementary ones that are format,
  // default-ignorable or combining (tags, variation selectors, musical and shorthand format controls),
  // between two letters and six times over (a run of marks) after one.
  const probe = [
    ...Array.from({ length: 0xffff }, (_, i) => i + 1).filter((c) => c < 0xd800 || c > 0xdfff),
    0x110bd,
    0x110cd,
    0x11f00,
    ...Array.from({ length: 0x10 }, (_, i) => 0x13430 + i),
    0x1bca0,
    0x1bca3,
    0x1d165,
    0x1d173,
    0x1d17a,
    0x1f600,
    0x1f3fb,
    ...Array.from({ length: 0x1000 }, (_, i) => 0xe0000 + i),
  ];
  const names = [
    ...probe.flatMap((c) => {
      const ch = String.fromCodePoint(c);
      return [`a${ch}b`, `x${ch.repeat(6)}`];
    }),
    // the emoji and text selectors: after a pictograph only, once
    "Grace Chapel \u271d\ufe0f",
    "\u00a9\ufe0e 2026",
    "\u271d\ufe0f\ufe0f",
    "\ud83d\ude4f\ufe0f",
    "Grace \ufe0fChapel",
  ];
  const ts = names.map((n) => {
    const normalized = normalizeOrganizationName(n);
    return [normalized, organizationNameProblem(normalized) !== undefined] as const;
  });
  const db = await sql()<{ normalized: string; refused: boolean }[]>`
    select n.normalized, private.organization_name_problem(n.normalized) is not null as refused
    from unnest(${names}::text[]) with ordinality as x(name, i)
    cross join lateral (select private.normalize_organization_name(x.name) as normalized) n
    order by x.i`;
  const differ = names.flatMap((n, i) =>
    ts[i]![0] !== db[i]!.normalized || ts[i]![1] !== db[i]!.refused
      ? [
        `${[...n].map((c) => c.codePointAt(0)!.toString(16)).join(" ")}: api ${JSON.stringify(ts[i])} table ${
          JSON.stringify(db[i])
        }`,
      ]
      : []
  );
  assertEquals(differ.slice(0, 10), [], `${differ.length} names judged differently`);
  const refused = (c: number) => ts[probe.indexOf(c) * 2]![1];
  assert([0x3164, 0x2800, 0x115f, 0xffa0, 0x34f, 0xe0041, 0xfe0f, 0x202e, 0x200b, 0x0a].every(refused));
  assert(![0x1f600, 0xe9, 0x20, 0x5d0, 0x0915].some(refused), "letters, emoji and spaces are not refused");
  assertEquals(
    ts.slice(-5).map(([, r]) => r),
    [false, false, true, false, true],
    "selectors after pictographs only",
  );

  // And the table itself (not only its function): a refused name is a check_violation on the column.
  for (const name of ["First\u3164Church", "\u2800", `x${"\u0301".repeat(6)}`, " \u00a0 "]) {
    const err = await sql().begin(async (tx) => {
      await tx`insert into public.organizations (name) values (${name})`;
    }).catch((e) => e);
    assertEquals(
      [err?.code, err?.constraint_name],
      ["23514", "organizations_name_check"],
      JSON.stringify(name),
    );
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
