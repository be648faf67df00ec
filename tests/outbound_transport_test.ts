// The dispatcher's one HTTP client (undici with the target check as its connection step): it connects
// only to addresses its own lookup approved (never resolving the name anywhere else), verifies TLS
// against the URL's host name, keeps connections alive, reads chunked and length-framed bodies, and
// never reads more than its limit of a huge or endless response.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { createAgent } from "../supabase/functions/webhook-dispatcher/transport.ts";
import { sendAttempt } from "../supabase/functions/webhook-dispatcher/send.ts";

/** A client for loopback tests; `resolve` stands in for DNS. */
const client = (
  opts: { resolve?: (host: string) => Promise<string[]>; ca?: string[]; allowPrivate?: boolean } = {},
) => createAgent({ allowPrivate: opts.allowPrivate ?? true, timeoutMs: 5000, ...opts });
const toLoopback = () => Promise.resolve(["127.0.0.1"]);

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
  const agent = client({ resolve: toLoopback });
  try {
    // "hooks.invalid" cannot resolve anywhere: the request can only arrive by our lookup's address.
    const res = await sendAttempt(agent, {
      url: `http://hooks.invalid:${server.port}/in?x=1`,
      headers: { "x-webhook-id": "abc" },
      body: encoder.encode("{}"),
      timeoutMs: 2000,
    });
    assertEquals(res.outcome, "delivered");
    assertEquals(res.response_status, 204);
    assert(server.heads[0]!.startsWith("POST /in?x=1 HTTP/1.1"), server.heads[0]);
    assert(server.heads[0]!.includes(`host: hooks.invalid:${server.port}`), "Host names the URL's host");
  } finally {
    await agent.close();
    server.close();
  }
});

Deno.test("keeps connections alive and reads chunked bodies", async () => {
  const server = rawServer(
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n",
  );
  const agent = client();
  try {
    for (let i = 0; i < 5; i++) {
      const res = await sendAttempt(agent, {
        url: `http://127.0.0.1:${server.port}/hook`,
        headers: {},
        body: encoder.encode(`{"n":${i}}`),
        timeoutMs: 2000,
      });
      assertEquals(res.outcome, "delivered");
      assertEquals(res.response_excerpt, "abcde");
      // undici hands the socket back to its pool a tick after the body ends.
      await new Promise((r) => setTimeout(r, 0));
    }
    assertEquals(server.heads.length, 5);
    assertEquals(server.connections(), 1, "one connection for five sequential deliveries");
  } finally {
    await agent.close();
    server.close();
  }
});

Deno.test("a receiver that closes its kept-alive connection gets a fresh one, not a failure", async () => {
  const server = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
  const agent = client();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await sendAttempt(agent, {
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
    await agent.close();
    server.close();
  }
  // The same, but the receiver closes without saying so: the stale connection is retried once.
  const silent = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", true);
  const agent2 = client();
  try {
    for (let i = 0; i < 3; i++) {
      const res = await sendAttempt(agent2, {
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
    await agent2.close();
    silent.close();
  }
});

Deno.test("a 2xx whose body stalls past the timeout still counts; a stalled head does not", async () => {
  const stalledBody = rawServer("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npart");
  const stalledHead = rawServer("HTTP/1.1 200 O");
  const agent = client();
  try {
    const send = (port: number) =>
      sendAttempt(agent, {
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
    await agent.close();
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

/** A test CA and a server certificate for `hooks.test` signed by it, made with openssl. */
async function testPki(): Promise<{ ca: string; cert: string; key: string }> {
  const dir = await Deno.makeTempDir();
  const run = async (...args: string[]) => {
    const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" })
      .output();
    if (!out.success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "1",
    "-subj",
    "/CN=Test CA",
  );
  await run("req", ...ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=hooks.test");
  await Deno.writeTextFile(`${dir}/ext`, "subjectAltName=DNS:hooks.test\n");
  await run(
    "x509",
    "-req",
    "-in",
    "srv.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "srv.pem",
    "-days",
    "1",
    "-extfile",
    "ext",
  );
  const read = (f: string) => Deno.readTextFile(`${dir}/${f}`);
  const pki = { ca: await read("ca.pem"), cert: await read("srv.pem"), key: await read("srv.key") };
  await Deno.remove(dir, { recursive: true });
  return pki;
}

Deno.test("HTTPS: pinned to the looked-up address, certificate verified against the URL's host name", async () => {
  const pki = await testPki();
  const hosts: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: pki.cert, key: pki.key, onListen() {} },
    (req) => {
      hosts.push(new URL(req.url).hostname);
      return new Response("ok");
    },
  );
  const port = server.addr.port;
  const looked: string[] = [];
  const resolve = (host: string) => (looked.push(host), toLoopback());
  const send = (agent: ReturnType<typeof client>, host: string) =>
    sendAttempt(agent, {
      url: `https://${host}:${port}/hook`,
      headers: {},
      body: new Uint8Array(),
      timeoutMs: 3000,
    });
  const trusting = client({ resolve, ca: [pki.ca] });
  const stranger = client({ resolve });
  try {
    // hooks.test exists only in our resolver, and the certificate names it: delivered.
    const ok = await send(trusting, "hooks.test");
    assertEquals(ok.outcome, "delivered", ok.error ?? "");
    assertEquals(hosts, ["hooks.test"]);
    // Same address, another name: the certificate does not match it.
    const wrongName = await send(trusting, "other.test");
    assertEquals(wrongName.outcome, "failed");
    assertMatch(wrongName.error ?? "", /connection error: .*(altname|certificate|hostname)/i);
    // A CA nobody configured is not trusted.
    const unknownCa = await send(stranger, "hooks.test");
    assertEquals(unknownCa.outcome, "failed");
    assertMatch(unknownCa.error ?? "", /connection error: .*(certificate|issuer|verify)/i);
    assertEquals(hosts, ["hooks.test"], "neither refused handshake got a request through");
    assert(
      looked.includes("hooks.test") && looked.includes("other.test"),
      "every name went through our lookup",
    );
  } finally {
    await Promise.all([trusting.close(), stranger.close()]);
    await server.shutdown();
  }
});

Deno.test("a name resolving to a blocked address is refused before any connection", async () => {
  const server = rawServer("HTTP/1.1 204 No Content\r\n\r\n");
  const agent = client({ allowPrivate: false, resolve: toLoopback });
  try {
    const res = await sendAttempt(agent, {
      url: `https://hooks.example.org:${server.port}/hook`,
      headers: {},
      body: new Uint8Array(),
      timeoutMs: 2000,
    });
    assertEquals(res.outcome, "failed");
    assertEquals(
      res.error,
      "target refused: hooks.example.org does not resolve to a public internet address",
    );
    assertEquals(server.connections(), 0);
  } finally {
    await agent.close();
    server.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
