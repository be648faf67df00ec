// Custom request headers on the real dev stack (scripts/dev.ts: the configuration API, the local sign-in
// and the dispatcher's local loop), to a real receiver on 127.0.0.1: they arrive on every attempt (a first
// attempt answered 500, its retry, a test event, a redelivery, a recovery), a change reaches the next
// delivery, and no answer of the API touching the endpoint, nor the server's log, holds a value, even
// when the receiver echoes every header back in its body and its own headers.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { retireEndpoints } from "./helpers/outbound.ts";

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  ms = 20_000,
): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("custom headers reach the receiver on every attempt and are never shown unmasked", async () => {
  const stack = await startDevStack({ env: { WEB_DEV: "false", MAIL_DEV: "false" } });
  const run = crypto.randomUUID();
  const gateway = `Bearer gw-${run}`; // Authorization
  const apiKey = `key-${crypto.randomUUID()}`; // X-Api-Key
  const replaced = `key-${crypto.randomUUID()}`; // X-Api-Key after the change
  // The receiver echoes everything it got, in its body and in a header of its own (as echo services do).
  const receiver = await startReceiver((req, i) => {
    const echo = JSON.stringify(Object.fromEntries(req.headers.entries()));
    return new Response(echo, {
      status: i === 0 ? 500 : 200,
      headers: {
        "x-echo-authorization": req.headers.get("authorization") ?? "",
        "x-echo-key": req.headers.get("x-api-key") ?? "",
      },
    });
  });
  let endpointId: string | undefined;
  try {
    const admin = await upsertDevUser({
      email: `headers-${run.slice(0, 8)}@firstchurch.example`,
      password: "demo-password",
      organization: `Headers Church ${run.slice(0, 8)}`,
      role: "admin",
    });
    const token = (await (await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: admin.email, password: "demo-password" }),
    })).json()).access_token as string;
    const api = `${stack.url}/functions/v1/webhooks`;
    const bodies: string[] = [];
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      bodies.push(text);
      return { status: res.status, data: text ? JSON.parse(text) : null };
    };

    const created = await call("POST", "/endpoints", {
      url: `${receiver.url}/hook`,
      events: ["member.created"],
      custom_headers: [{ name: "Authorization", value: gateway }, { name: "X-Api-Key", value: apiKey }],
    });
    assertEquals(created.status, 201, JSON.stringify(created.data) + stack.output().slice(-2000));
    endpointId = created.data.id as string;
    assertEquals(created.data.custom_headers, [
      { name: "Authorization", value_hint: `…${gateway.slice(-4)}` },
      { name: "X-Api-Key", value_hint: `…${apiKey.slice(-4)}` },
    ]);
    const organizationId = (await sql()`select organization_id from public.webhook_endpoints
                                        where id = ${endpointId}`)[0]!.organization_id as string;

    const arrived = (n: number) => receiver.waitFor(n, 20_000).then((r) => r[n - 1]!);
    const assertCarries = (req: { headers: Headers }, what: string, key = apiKey) => {
      assertEquals(req.headers.get("authorization"), gateway, `${what}: Authorization`);
      assertEquals(req.headers.get("x-api-key"), key, `${what}: X-Api-Key`);
      assert(req.headers.get("webhook-signature")?.startsWith("v1,"), `${what}: still signed`);
    };

    // 1. The first attempt, answered 500; 2. its retry, made due now rather than in a minute.
    await sql()`insert into public.members (organization_id, first_name) values (${organizationId}, 'Ada')`;
    assertCarries(await arrived(1), "first attempt");
    const delivery = await until(
      "the failed attempt recorded",
      async () =>
        (await sql()<{ id: string }[]>`select id from public.webhook_deliveries
                                     where endpoint_id = ${endpointId!} and status = 'retrying'`)[0],
    );
    await sql()`update public.webhook_deliveries set next_attempt_at = now() where id = ${delivery.id}`;
    assertCarries(await arrived(2), "retry");

    // 3. A test event; 4. a redelivery; 5. a recovery of a delivery that failed for good.
    assertEquals((await call("POST", `/endpoints/${endpointId}/test`, {})).status, 202);
    assertCarries(await arrived(3), "test event");
    await until(
      "the retry's success recorded",
      async () =>
        (await sql()`select 1 from public.webhook_deliveries where id = ${delivery.id} and status = 'delivered'`)
          .length > 0,
    );
    assertEquals((await call("POST", `/deliveries/${delivery.id}/redeliver`)).status, 202);
    assertCarries(await arrived(4), "redelivery");
    await until(
      "the redelivery recorded",
      async () =>
        (await sql()`select 1 from public.webhook_deliveries where id = ${delivery.id} and status = 'delivered'`)
          .length > 0,
    );
    await sql()`update public.webhook_deliveries set status = 'permanently_failed', next_attempt_at = null
                where id = ${delivery.id}`;
    const recovered = await call("POST", `/endpoints/${endpointId}/recover`, {
      since: new Date(Date.now() - 3600_000).toISOString(),
    });
    assertEquals(recovered.data.recovered, 1, JSON.stringify(recovered.data));
    assertCarries(await arrived(5), "recovery");

    // A change reaches the next delivery: Authorization kept without resending it, X-Api-Key replaced.
    const patched = await call("PATCH", `/endpoints/${endpointId}`, {
      custom_headers: [{ name: "Authorization" }, { name: "X-Api-Key", value: replaced }],
    });
    assertEquals(patched.status, 200, JSON.stringify(patched.data));
    assertEquals(patched.data.custom_headers[1], { name: "X-Api-Key", value_hint: `…${replaced.slice(-4)}` });
    assertEquals((await call("POST", `/endpoints/${endpointId}/test`, {})).status, 202);
    assertCarries(await arrived(6), "after the change", replaced);

    // Every answer touching the endpoint, and the server's log: no value, however the receiver echoed it.
    await until(
      "every attempt recorded",
      async () =>
        Number(
          (await sql()`select count(*) from public.webhook_delivery_attempts a
                          join public.webhook_deliveries d on d.id = a.delivery_id
                          where d.endpoint_id = ${endpointId!}`)[0]!.count,
        ) >= 6,
    );
    await call("GET", "/endpoints");
    await call("GET", `/endpoints/${endpointId}`);
    const listed = await call("GET", `/deliveries?endpoint_id=${endpointId}`);
    assert(listed.data.data.length >= 2);
    let maskedSeen = false;
    for (const d of listed.data.data as { id: string }[]) {
      const detail = await call("GET", `/deliveries/${d.id}`);
      for (const a of detail.data.attempts as { request_headers: Record<string, string> }[]) {
        assert(
          a.request_headers.Authorization === `…${gateway.slice(-4)}`,
          JSON.stringify(a.request_headers),
        );
        maskedSeen = true;
      }
    }
    assert(maskedSeen, "the attempts show the headers by name, masked");
    const events = await call("GET", "/events");
    for (const e of events.data.data as { id: string }[]) await call("GET", `/events/${e.id}`);
    const everything = [...bodies, stack.output()].join("\n");
    for (const [what, value] of [["Authorization", gateway], ["X-Api-Key", apiKey], ["replaced", replaced]]) {
      const at = everything.indexOf(value!);
      assert(
        at < 0,
        `the ${what} value appears in an answer or the log: ${everything.slice(at - 300, at + 50)}`,
      );
      // Nor a long piece of it (an echo cut short, say).
      assert(!everything.includes(value!.slice(0, 20)), `the start of the ${what} value appears`);
    }
    // The receiver did get the values echoed back to it (so the masking above was tested).
    assert(receiver.requests.length >= 6);
  } finally {
    if (endpointId) await retireEndpoints(endpointId);
    await receiver.close();
    await stack.stop();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
