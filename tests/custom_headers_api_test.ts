// Custom request headers through the configuration API as deployed: what is refused (each refusal a 400
// naming the header, nothing changed), the PATCH semantics (the set replaced, an entry without a value
// keeps its stored one), and the attacks: staff, another organization's admin, a removed admin with a
// still-valid token, anonymous callers, another organization's API key, and the Data API reading or
// writing the storage directly.
import { assert, assertEquals } from "./helpers/assert.ts";
import { addMember, asConfigApi, asUser, closeSql, createTenant, createUser, sql } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const URL_ = "http://127.0.0.1:9/hook";

/** The values stored for an endpoint, read as the server (no user role can). */
async function stored(endpointId: string): Promise<{ name: string; value: string }[] | null> {
  const [row] =
    await sql()`select headers from private.webhook_endpoint_headers where endpoint_id = ${endpointId}`;
  return (row?.headers as { name: string; value: string }[] | undefined) ?? null;
}

async function apiKeyFor(organizationId: string): Promise<string> {
  const key = `orgkey_${crypto.randomUUID().replaceAll("-", "")}`;
  const hash = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))),
  )
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  await sql()`insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash)
              values (${organizationId}, 'Zapier', ${key.slice(0, 14)}, ${hash})`;
  return key;
}

Deno.test("refused headers: a 400 naming the header, and nothing saved", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const create = (custom_headers: unknown) =>
      call(api.base, "POST", "/endpoints", admin, { url: URL_, events: ["member.created"], custom_headers });
    const refused = async (custom_headers: unknown, mention: string, field: string) => {
      const res = await create(custom_headers);
      assertEquals(res.status, 400, `${mention}: ${res.text}`);
      assertEquals(res.data.error.code, "invalid_request");
      const f = (res.data.error.details.fields as { field: string; message: string }[])
        .find((x) => x.field === field);
      assert(f, `${mention}: no refusal at ${field}: ${res.text}`);
      assert(f.message.includes(mention), `${mention} not named: ${f.message}`);
      return f.message;
    };
    // Header injection: a line break would end the header and start another.
    const crlf = await refused(
      [{ name: "X-Tenant", value: "grace\r\nX-Injected: yes" }],
      '"X-Tenant"',
      "custom_headers.0.value",
    );
    assert(crlf.includes("line break"), crlf);
    await refused([{ name: "X-Tenant", value: "grace\nchapel" }], '"X-Tenant"', "custom_headers.0.value");
    await refused([{ name: "X-Tenant", value: "grace\u0000" }], '"X-Tenant"', "custom_headers.0.value");
    for (
      const name of [
        "Connection",
        "keep-alive",
        "Proxy-Authorization",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "webhook-id",
        "Webhook-Signature",
        "X-Webhook-Signature",
        "Host",
        "Content-Length",
        "content-type",
        "User-Agent",
        "Bad Name",
        "X-A:b",
        "",
      ]
    ) {
      await refused([{ name, value: "v" }], JSON.stringify(name), "custom_headers.0.name");
    }
    await refused(
      [{ name: "X-Key", value: "a" }, { name: "x-key", value: "b" }],
      '"x-key"',
      "custom_headers.1.name",
    );
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `X-H${i}`, value: "v" }));
    const tooMany = await create(eleven);
    assertEquals(tooMany.status, 400, tooMany.text);
    assert(tooMany.text.includes("at most 10"), tooMany.text);
    await refused([{ name: "X-Big", value: "x".repeat(1025) }], '"X-Big"', "custom_headers.0.value");
    const [made] = await sql()`select count(*)::int as n from public.webhook_endpoints
                               where organization_id = ${a.organizationId}`;
    assertEquals(made!.n, 0, "no refused endpoint was made");

    // The limits themselves are accepted: 10 headers, a value of exactly 1 KB.
    const ten = Array.from({ length: 10 }, (_, i) => ({ name: `X-H${i}`, value: "x".repeat(i ? 16 : 1024) }));
    const ok = await create(ten);
    assertEquals(ok.status, 201, ok.text);
    assertEquals(ok.data.custom_headers.length, 10);
    assert(!ok.text.includes("x".repeat(16)), "no value in the answer");

    // A refused change keeps what was stored.
    const before = await stored(ok.data.id);
    const bad = await call(api.base, "PATCH", `/endpoints/${ok.data.id}`, admin, {
      description: "renamed",
      custom_headers: [{ name: "X-H0", value: "a\r\nb" }],
    });
    assertEquals(bad.status, 400, bad.text);
    assertEquals(await stored(ok.data.id), before);
    const [row] = await sql()`select description from public.webhook_endpoints where id = ${ok.data.id}`;
    assertEquals(row!.description, null, "nothing of a refused change is saved");
  } finally {
    await api.close();
  }
});

Deno.test("PATCH replaces the set; an entry without a value keeps its stored one", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const token = `Bearer ${crypto.randomUUID()}`;
    const created = await call(api.base, "POST", "/endpoints", admin, {
      url: URL_,
      events: ["member.created"],
      custom_headers: [{ name: "Authorization", value: token }, { name: "X-Tenant", value: "short" }],
    });
    assertEquals(created.status, 201, created.text);
    const id = created.data.id;
    assertEquals(created.data.custom_headers, [
      { name: "Authorization", value_hint: `…${token.slice(-4)}` },
      { name: "X-Tenant", value_hint: "…" }, // under 12 characters: no character of it
    ]);
    const patch = (body: unknown) => call(api.base, "PATCH", `/endpoints/${id}`, admin, body);

    // Other fields alone leave the headers be.
    assertEquals((await patch({ description: "CRM" })).data.custom_headers.length, 2);
    // Kept without resending (any letter case), X-Tenant removed, X-New added.
    const kept = await patch({
      custom_headers: [{ name: "authorization" }, { name: "X-New", value: "n".repeat(12) }],
    });
    assertEquals(kept.status, 200, kept.text);
    assertEquals(await stored(id), [{ name: "authorization", value: token }, {
      name: "X-New",
      value: "n".repeat(12),
    }]);
    assertEquals(kept.data.custom_headers, [
      { name: "authorization", value_hint: `…${token.slice(-4)}` },
      { name: "X-New", value_hint: "…nnnn" },
    ]);
    // Keeping a name that has no stored value is refused, naming it.
    const none = await patch({ custom_headers: [{ name: "X-Missing" }] });
    assertEquals(none.status, 400, none.text);
    assert(none.data.error.message.includes('"X-Missing"'), none.text);
    assertEquals((await stored(id))!.length, 2, "the refusal changed nothing");
    // [] removes them all.
    assertEquals((await patch({ custom_headers: [] })).data.custom_headers, []);
    assertEquals(await stored(id), null);
    // GET and the list show the same as the endpoint row.
    await patch({ custom_headers: [{ name: "X-Key", value: "k".repeat(20) }] });
    const one = await call(api.base, "GET", `/endpoints/${id}`, admin);
    assertEquals(one.data.custom_headers, [{ name: "X-Key", value_hint: "…kkkk" }]);
    const list = await call(api.base, "GET", "/endpoints", admin);
    assertEquals(list.data.data[0].custom_headers, [{ name: "X-Key", value_hint: "…kkkk" }]);
    assert(![one.text, list.text].some((t) => t.includes("k".repeat(5))), "no value in any answer");
  } finally {
    await api.close();
  }
});

Deno.test("only the organization's admins and API keys change them; nobody reads a value", async () => {
  const api = await startWebhooksApi({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true" });
  try {
    const a = await createTenant();
    const b = await createTenant();
    const admin = asBearer(await tokenFor(a.admin, a.organizationId));
    const secretValue = `gw-${crypto.randomUUID()}`;
    const created = await call(api.base, "POST", "/endpoints", admin, {
      url: URL_,
      events: ["member.created"],
      custom_headers: [{ name: "X-Gateway-Key", value: secretValue }],
    });
    const id = created.data.id as string;
    const removed = await createUser();
    await addMember(removed.id, a.organizationId, "admin");
    const removedToken = asBearer(await tokenFor(removed, a.organizationId));
    await sql()`delete from public.profiles where user_id = ${removed.id}`;
    const attempt = { custom_headers: [{ name: "X-Gateway-Key", value: "attacker-chosen-value" }] };
    const attackers: [string, Record<string, string>, number][] = [
      ["staff", asBearer(await tokenFor(a.staff, a.organizationId)), 403],
      ["another organization's admin", asBearer(await tokenFor(b.admin, b.organizationId)), 404],
      ["a removed admin with a still-valid token", removedToken, 403],
      ["anonymous", { "content-type": "application/json" }, 401],
      ["another organization's API key", {
        "x-api-key": await apiKeyFor(b.organizationId),
        "content-type": "application/json",
      }, 404],
    ];
    for (const [who, headers, status] of attackers) {
      const res = await call(api.base, "PATCH", `/endpoints/${id}`, headers, attempt);
      assertEquals(res.status, status, `${who}: ${res.text}`);
      const read = await call(api.base, "GET", `/endpoints/${id}`, headers);
      assert(!read.text.includes(secretValue), `${who} read the value`);
    }
    assertEquals(await stored(id), [{ name: "X-Gateway-Key", value: secretValue }], "nothing changed");

    // The organization's own API key may, as it may every endpoint write (Zapier, Make, n8n).
    const key = { "x-api-key": await apiKeyFor(a.organizationId), "content-type": "application/json" };
    const byKey = await call(api.base, "PATCH", `/endpoints/${id}`, key, {
      custom_headers: [{ name: "X-Gateway-Key" }, { name: "X-Other", value: "o".repeat(12) }],
    });
    assertEquals(byKey.status, 200, byKey.text);
    assertEquals((await stored(id))![0]!.value, secretValue);

    // The Data API (PostgREST's role with the admin's claims) and the configuration API's role: neither
    // reads nor writes the stored values, nor writes the endpoint's list of names, nor calls the setter
    // from the Data API.
    const claims = a.adminClaims;
    for (const [door, as] of [["Data API", asUser], ["configuration API role", asConfigApi]] as const) {
      for (
        const statement of [
          "select * from private.webhook_endpoint_headers",
          "select headers from private.webhook_endpoint_headers",
          "delete from private.webhook_endpoint_headers",
          `insert into private.webhook_endpoint_headers values ('${id}', '[{"name":"X-A","value":"b"}]')`,
          `update public.webhook_endpoints set custom_headers = '[]' where id = '${id}'`,
        ]
      ) {
        const err = await as(claims, (tx) => tx.unsafe(statement)).then(() => null, (e) => e);
        assertEquals(err?.code, "42501", `${door}: ${statement} was not refused (${err?.message})`);
      }
    }
    const viaDataApi = await asUser(
      claims,
      (tx) => tx`select private.webhook_set_custom_headers(${id}, '[]')`,
    ).then(() => null, (e) => e);
    assertEquals(viaDataApi?.code, "42501", "the Data API cannot call the setter");
    const anon = await asUser({ role: "anon" }, (tx) => tx`select * from private.webhook_endpoint_headers`)
      .then(() => null, (e) => e);
    assertEquals(anon?.code, "42501");
    assertEquals((await stored(id))!.length, 2, "the stored values are intact");
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
