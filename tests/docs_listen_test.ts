// The "Test your receiver locally" section of docs/receiving-webhooks.md, run as written: its
// `npm run listen` line against the real dev server (scripts/dev.ts on a free port, its configuration
// API and local sign-in), forwarding to the guide's own Node.js receiver, which must verify the event and
// print it; then Ctrl-C stops the forwarder cleanly.
import { assert, assertEquals } from "./helpers/assert.ts";
import { markedBlock, ROOT } from "./helpers/markdown.ts";
import { startDevStack, upsertDevUser } from "./helpers/dev_stack.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { freePort } from "./helpers/server.ts";

const GUIDE = new URL("docs/receiving-webhooks.md", ROOT);

function output(child: Deno.ChildProcess) {
  let text = "";
  const done = Promise.all([child.stdout, child.stderr].map(async (s) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) text += chunk;
  }));
  return { text: () => text, done };
}

async function until(check: () => boolean, what: string, ms = 60_000) {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("receiving-webhooks: the local forwarder's block runs as written against the dev server, into the Node.js receiver", async () => {
  const guide = await Deno.readTextFile(GUIDE);
  const command = markedBlock(guide, "listen").split("\n").find((l) => l.startsWith("npm run"))!;
  const receiverPort = freePort();
  const args = command.replace("127.0.0.1:8000", `127.0.0.1:${receiverPort}`).split(/\s+/).slice(1);
  const stateFile = new URL(".webhooks-listen.json", ROOT);
  await Deno.remove(stateFile).catch(() => {});
  const stack = await startDevStack();
  const receiverFile = new URL(`node_modules/.docs-receivers/listen-${crypto.randomUUID()}.mjs`, ROOT);
  let listener: Deno.ChildProcess | undefined;
  let receiver: Deno.ChildProcess | undefined;
  try {
    const run = crypto.randomUUID().slice(0, 8);
    const admin = await upsertDevUser({
      email: `listen-${run}@firstchurch.example`,
      password: "demo-password",
      organization: `Listen Church ${run}`,
      role: "admin",
    });
    const token = (await (await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { apikey: stack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: admin.email, password: "demo-password" }),
    })).json()).access_token as string;
    const api = `${stack.url}/functions/v1/webhooks`;
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const key = (await (await fetch(`${api}/api-keys`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "listen" }),
    })).json()).key as string;
    // The feed holds the events an enabled endpoint subscribes to (this one points nowhere).
    const ep = await fetch(`${api}/endpoints`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: "http://127.0.0.1:9/nowhere", events: ["member.created"] }),
    });
    assertEquals(ep.status, 201);
    const endpointId = (await ep.json()).id;

    listener = new Deno.Command("npm", {
      args,
      cwd: ROOT.pathname,
      env: { WEBHOOKS_API_KEY: key, WEBHOOKS_API_URL: api },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const listened = output(listener);
    await until(() => listened.text().includes("Forwarding"), "the forwarder to start");
    const secret = /Signing secret [^:]*: (whsec_\S+)/.exec(listened.text())![1]!;

    await Deno.mkdir(new URL("node_modules/.docs-receivers/", ROOT), { recursive: true });
    await Deno.writeTextFile(receiverFile, markedBlock(guide, "receiver:node"));
    receiver = new Deno.Command("node", {
      args: [receiverFile.pathname],
      env: { WEBHOOK_SECRET: secret, PORT: String(receiverPort) },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const received = output(receiver);
    for (let i = 0;; i++) {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port: receiverPort })).close();
        break;
      } catch (err) {
        if (i > 200) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    const [member] = await sql()<{ id: string }[]>`
      insert into public.members (organization_id, first_name) values (${admin.organizationId!}, 'Local')
      returning id`;
    const [event] = await sql()<{ id: string }[]>`
      select id from public.webhook_events where organization_id = ${admin.organizationId!}
        and payload #>> '{data,row,id}' = ${member!.id}`;
    await until(() => received.text().includes(`member.created ${event!.id}`), "the receiver to verify it");
    await until(() => listened.text().includes(`${event!.id}  -> 204`), "the forwarder's line");

    listener.kill("SIGINT");
    const status = await listener.status;
    await listened.done;
    listener = undefined;
    assertEquals(status.code, 0, listened.text());
    assert(listened.text().includes("Stopped"), listened.text());
    await fetch(`${api}/endpoints/${endpointId}`, { method: "DELETE", headers: auth }).then((r) =>
      r.body?.cancel()
    );
  } finally {
    for (const child of [listener, receiver]) {
      if (!child) continue;
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    }
    await Deno.remove(receiverFile).catch(() => {});
    await Deno.remove(stateFile).catch(() => {});
    await stack.stop();
    await closeSql();
  }
});
