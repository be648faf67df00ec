// The local forwarder (scripts/listen.ts, `npm run listen`) as a user runs it: its own process following
// the events feed of the configuration API with an API key, posting to a receiver on loopback that
// verifies every request with the standardwebhooks library. 100 events arrive verified, each once,
// across a Ctrl-C in the middle of the stream and a restart; the secret it made is printed once and never
// again; with --endpoint it forwards that endpoint's events signed with that endpoint's secret.
import { Webhook } from "standardwebhooks";
import { assert, assertEquals } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { createEndpoint, retireEndpoints } from "./helpers/outbound.ts";
import { serve } from "./helpers/server.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { asBearer, call, startWebhooksApi } from "./helpers/webhooks_api.ts";

const api = await startWebhooksApi();
const root = new URL("../", import.meta.url).pathname;

/** A receiver that verifies as the guide's Node.js receiver does, slowly enough to be stopped mid-stream. */
async function verifyingReceiver(delayMs: number) {
  let wh: Webhook | undefined;
  const verified: { id: string; type: string; body: unknown }[] = [];
  let refused = 0;
  const server = await serve(async (req) => {
    const raw = await req.text();
    await new Promise((r) => setTimeout(r, delayMs));
    try {
      const event = wh!.verify(raw, Object.fromEntries(req.headers)) as { id: string; type: string };
      verified.push({ id: event.id, type: event.type, body: event });
      return new Response(null, { status: 204 });
    } catch {
      refused++;
      return new Response(null, { status: 401 });
    }
  });
  return {
    ...server,
    verified,
    refused: () => refused,
    useSecret: (s: string) =>
      wh = s.startsWith("whsec_") ? new Webhook(s) : new Webhook(s, { format: "raw" }),
  };
}

function startListener(args: string[], key: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      "scripts/listen.ts",
      ...args,
    ],
    cwd: root,
    env: { WEBHOOKS_API_KEY: key },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) add(chunk);
  };
  const done = Promise.all([pump(child.stdout, (s) => out += s), pump(child.stderr, (s) => err += s)]);
  return {
    child,
    out: () => out,
    err: () => err,
    async until(text: string, ms = 30_000) {
      const end = Date.now() + ms;
      while (!out.includes(text)) {
        if (Date.now() > end) throw new Error(`listener never printed "${text}": ${out} ${err}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop() {
      child.kill("SIGINT");
      const status = await child.status;
      await done;
      return status.code;
    },
  };
}

async function until(check: () => boolean, what: string, ms = 60_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function keyOf(t: Awaited<ReturnType<typeof createTenant>>) {
  const admin = asBearer(await tokenFor(t.admin, t.organizationId));
  return (await call(api.base, "POST", "/api-keys", admin, { name: "listen" })).data.key as string;
}

const addMembers = (org: string, from: number, n: number) =>
  sql()`insert into public.members (organization_id, first_name)
        select ${org}, 'L' || g from generate_series(${from}::int, ${from + n - 1}::int) g`;

Deno.test("listen: 100 events forwarded, verified by standardwebhooks, once each across a Ctrl-C and a restart", async () => {
  const t = await createTenant();
  const key = await keyOf(t);
  const ep = await createEndpoint(t.organizationId, "https://hooks.example.org/listen", ["member.created"]);
  const receiver = await verifyingReceiver(30);
  const dir = await Deno.makeTempDir();
  const args = ["--forward-to", `${receiver.url}/hooks`, "--api", api.base, "--state", `${dir}/state.json`];
  try {
    const first = startListener(args, key);
    await first.until("Forwarding");
    const secret = /Signing secret [^:]*: (whsec_\S+)/.exec(first.out())![1]!;
    receiver.useSecret(secret);
    for (let i = 0; i < 6; i++) await addMembers(t.organizationId, i * 10 + 1, 10);
    await until(() => receiver.verified.length >= 20, "20 events");
    assertEquals(await first.stop(), 0, first.err());
    assert(first.out().includes("Stopped"), first.out());
    const atStop = receiver.verified.length;
    assert(atStop < 60, `stopped mid-stream (${atStop} of 60 forwarded)`);

    await addMembers(t.organizationId, 61, 40);
    const second = startListener(args, key);
    await second.until("Forwarding");
    await until(() => receiver.verified.length >= 100, "100 events");
    await new Promise((r) => setTimeout(r, 500)); // anything more would be a duplicate
    assertEquals(await second.stop(), 0, second.err());

    const ids = receiver.verified.map((v) => v.id);
    assertEquals(ids.length, 100, "nothing twice");
    assertEquals(receiver.refused(), 0, "every request verified");
    const events = await sql()<{ id: string; payload: unknown }[]>`
      select id, payload from public.webhook_events where organization_id = ${t.organizationId}`;
    assertEquals(new Set(ids), new Set(events.map((e) => e.id)), "every event");
    for (const e of events) assertEquals(receiver.verified.find((v) => v.id === e.id)!.body, e.payload);
    // One line per event with the receiver's answer; the secret shown once, on the first start only.
    const lines = (first.out() + second.out()).split("\n").filter((l) => / -> 204 in \d+ ms$/.test(l));
    assertEquals(lines.length, 100);
    assertEquals((first.out() + first.err() + second.out() + second.err()).split(secret).length - 1, 1);
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listen --endpoint: that endpoint's events, signed with its secret, which is never printed", async () => {
  const t = await createTenant();
  const key = await keyOf(t);
  const members = await createEndpoint(t.organizationId, "https://hooks.example.org/m", ["member.created"]);
  const gifts = await createEndpoint(t.organizationId, "https://hooks.example.org/d", ["donation.recorded"]);
  const receiver = await verifyingReceiver(0);
  receiver.useSecret(gifts.secret);
  const dir = await Deno.makeTempDir();
  const base = ["--forward-to", `${receiver.url}/`, "--api", api.base, "--state", `${dir}/s.json`];
  try {
    const refused = startListener([...base, "--endpoint", gifts.id], key);
    assertEquals((await refused.child.status).code, 2, "no secret: refused");
    await refused.stop().catch(() => {});
    assert(refused.err().includes("--secret"), refused.err());

    const listener = startListener([...base, "--endpoint", gifts.id, "--secret", gifts.secret], key);
    await listener.until("Forwarding donation.recorded");
    await addMembers(t.organizationId, 1, 1);
    const [m] = await sql()`select id from public.members where organization_id = ${t.organizationId}`;
    await sql()`insert into public.donations (organization_id, member_id, amount_minor, currency)
                values (${t.organizationId}, ${m!.id}, 1000, 'USD')`;
    await until(() => receiver.verified.length >= 1, "the donation");
    await new Promise((r) => setTimeout(r, 800));
    assertEquals(await listener.stop(), 0);
    assertEquals(receiver.verified.map((v) => v.type), ["donation.recorded"]);
    assert(!(listener.out() + listener.err()).includes(gifts.secret), "the endpoint's secret is not printed");
  } finally {
    await retireEndpoints(members.id, gifts.id);
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listen cleanup", async () => {
  await api.close();
  await closeSql();
});
