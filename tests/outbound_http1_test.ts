// The dispatcher's HTTP/1.1 client: it connects to the address the target check approved (never
// resolving the name again), keeps connections alive, reads chunked and length-framed bodies, and
// never reads more than its limit of a huge or endless response.
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { Http1Client } from "../supabase/functions/webhook-dispatcher/http1.ts";
import { sendHttp1 } from "../supabase/functions/webhook-dispatcher/send.ts";

const encoder = new TextEncoder();

/** A raw HTTP/1.1 server answering every request on a connection with `reply`; counts connections. */
function rawServer(reply: string, closeAfterReply = false) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  let connections = 0;
  (async () => {
    for await (const conn of listener) {
      connections++;
      (async () => {
        const buf = new Uint8Array(64 * 1024);
        let pending = "";
        for (;;) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          pending += new TextDecoder().decode(buf.subarray(0, n));
          for (;;) {
            const end = pending.indexOf("\r\n\r\n");
            if (end < 0) break;
            const head = pending.slice(0, end);
            const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
            if (pending.length < end + 4 + length) break;
            heads.push(head);
            pending = pending.slice(end + 4 + length);
            await conn.write(encoder.encode(reply)).catch(() => {});
            if (closeAfterReply) conn.close();
          }
        }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return { port, heads, connections: () => connections, close: () => listener.close() };
}

Deno.test("connects to the approved address, not to a fresh lookup of the name", async () => {
  const server = rawServer("HTTP/1.1 204 No Content\r\n\r\n");
  const client = new Http1Client();
  try {
    // "hooks.invalid" cannot resolve anywhere: the request can only arrive by the pinned address.
    const res = await sendHttp1(client, {
      url: `http://hooks.invalid:${server.port}/in?x=1`,
      address: "127.0.0.1",
      headers: { "x-webhook-id": "abc" },
      body: encoder.encode("{}"),
      timeoutMs: 2000,
    });
    assertEquals(res.outcome, "delivered");
    assertEquals(res.response_status, 204);
    assert(server.heads[0]!.startsWith("POST /in?x=1 HTTP/1.1"), server.heads[0]);
    assert(server.heads[0]!.includes(`host: hooks.invalid:${server.port}`), "Host names the URL's host");
  } finally {
    client.close();
    server.close();
  }
});

Deno.test("keeps connections alive and reads chunked bodies", async () => {
  const server = rawServer(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n",
  );
  const client = new Http1Client();
  try {
    for (let i = 0; i < 5; i++) {
      const res = await sendHttp1(client, {
        url: `http://127.0.0.1:${server.port}/hook`,
        headers: {},
        body: encoder.encode(`{"n":${i}}`),
        timeoutMs: 2000,
      });
      assertEquals(res.outcome, "delivered");
      assertEquals(res.response_excerpt, "abcde");
    }
    assertEquals(server.heads.length, 5);
    assertEquals(server.connections(), 1, "one connection for five sequential deliveries");
  } finally {
    client.close();
    server.close();
  }
});

Deno.test("a receiver that closes its kept-alive connection gets a fresh one, not a failure", async () => {
  const server = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
  const client = new Http1Client();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await sendHttp1(client, {
        url: `http://127.0.0.1:${server.port}/hook`,
        headers: {},
        body: encoder.encode("{}"),
        timeoutMs: 2000,
      });
      assertEquals(res.outcome, "delivered");
      assertEquals(res.response_excerpt, "ok");
    }
    assertEquals(server.connections(), 3, "connection: close is honoured");
  } finally {
    client.close();
    server.close();
  }
  // The same, but the receiver closes without saying so: the stale connection is retried once.
  const silent = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", true);
  const client2 = new Http1Client();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await sendHttp1(client2, {
        url: `http://127.0.0.1:${silent.port}/hook`,
        headers: {},
        body: encoder.encode("{}"),
        timeoutMs: 2000,
      });
      assertEquals(res.outcome, "delivered", res.error ?? "");
      await new Promise((r) => setTimeout(r, 20));
    }
    assertEquals(silent.heads.length, 3);
  } finally {
    client2.close();
    silent.close();
  }
});

Deno.test("a 2xx whose body stalls past the timeout still counts; a stalled head does not", async () => {
  const stalledBody = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart");
  const stalledHead = rawServer("HTTP/1.1 200 O");
  const client = new Http1Client();
  try {
    const send = (port: number) =>
      sendHttp1(client, {
        url: `http://127.0.0.1:${port}/hook`,
        headers: {},
        body: encoder.encode("{}"),
        timeoutMs: 300,
      });
    const body = await send(stalledBody.port);
    assertEquals(body.outcome, "delivered");
    assertEquals(body.response_status, 200);
    const head = await send(stalledHead.port);
    assertEquals(head.outcome, "failed");
    assertEquals(head.error, "timeout: no response within 300 ms");
  } finally {
    client.close();
    stalledBody.close();
    stalledHead.close();
  }
});

Deno.test("a huge or endless response is read only up to the limit, and the delivery still counts", async () => {
  const tenant = await createTenant();
  let pulled = 0;
  const endless = await startReceiver(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          controller.enqueue(new Uint8Array(64 * 1024).fill(0x61));
        },
      }),
      { status: 200 },
    )
  );
  const ep = await createEndpoint(tenant.organizationId, `${endless.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x')`;
    const started = Date.now();
    await testEngine({ timeoutMs: 5000 }).run({ stopWhenIdle: true });
    assert(Date.now() - started < 4000, "did not wait for the endless body");
    const [d] = await deliveriesOf(ep.id);
    assertEquals(d!.status, "delivered");
    const [a] = await sql()<{ response_excerpt: string }[]>`
      select response_excerpt from public.webhook_delivery_attempts where delivery_id = ${d!.id}`;
    assertEquals(a!.response_excerpt, "a".repeat(1024), "the first 1 KiB is kept");
    await new Promise((r) => setTimeout(r, 200));
    assert(pulled < 64, `the receiver's stream was abandoned early (pulled ${pulled} chunks of 64 KiB)`);
  } finally {
    await retireEndpoints(ep.id);
    await endless.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
