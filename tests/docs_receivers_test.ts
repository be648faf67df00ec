// The four receivers of docs/receiving-webhooks.md (Node.js with the standardwebhooks library; Python,
// PHP and Go with their standard libraries), each run exactly as the guide shows it, must take a real
// delivery from the dispatcher (an endpoint of a real organization, a member inserted, the delivery
// engine on the test database) with a generated and with an organization's own secret, keep verifying
// during a secret rotation, and answer 401 to a forged, a stale, an unsigned and a wrongly keyed request.
// Each forged request is signed by the dispatcher's own signing code, then changed as an attacker or a
// clock would change it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { markedBlock, ROOT } from "./helpers/markdown.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import { freePort } from "./helpers/server.ts";
import { signedHeaders } from "../supabase/functions/webhook-dispatcher/signing.ts";

const GUIDE = new URL("docs/receiving-webhooks.md", ROOT);
const OWN_SECRET = "our-church-webhook-secret-2026";

interface Language {
  name: "node" | "python" | "php" | "go";
  /** The command that must exist for this language's receiver to run. */
  tool: string;
  /** Prepares the snippet (writes it, builds it); returns the command line of one receiver on `port`. */
  prepare(snippet: string, dir: string): Promise<(port: number) => { cmd: string; args: string[] }>;
}

const LANGUAGES: Language[] = [
  {
    name: "node",
    tool: "node",
    // Inside the repository's node_modules/ (which no static check reads), so `import "standardwebhooks"`
    // finds the package package.json pins, as it would in the reader's own project.
    prepare: async (snippet) => {
      const dir = new URL("node_modules/.docs-receivers/", ROOT);
      await Deno.mkdir(dir, { recursive: true });
      const file = new URL(`receiver-${crypto.randomUUID()}.mjs`, dir);
      await Deno.writeTextFile(file, snippet);
      cleanups.push(() => Deno.remove(file));
      return () => ({ cmd: "node", args: [file.pathname] });
    },
  },
  {
    name: "python",
    tool: "python3",
    prepare: async (snippet, dir) => {
      await Deno.writeTextFile(`${dir}/receiver.py`, snippet);
      return () => ({ cmd: "python3", args: [`${dir}/receiver.py`] });
    },
  },
  {
    name: "php",
    tool: "php",
    // PHP's built-in server runs the script for every request, as a web server would.
    prepare: async (snippet, dir) => {
      await Deno.writeTextFile(`${dir}/receiver.php`, snippet);
      return (port) => ({ cmd: "php", args: ["-S", `127.0.0.1:${port}`, `${dir}/receiver.php`] });
    },
  },
  {
    name: "go",
    tool: "go",
    // Built once with Debian's Go and nothing downloaded, then started per secret.
    prepare: async (snippet, dir) => {
      await Deno.writeTextFile(`${dir}/receiver.go`, snippet);
      const built = await new Deno.Command("go", {
        args: ["build", "-o", `${dir}/receiver`, `${dir}/receiver.go`],
        cwd: dir,
        env: { GOPROXY: "off", GOTOOLCHAIN: "local", GOFLAGS: "" },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert(built.success, `go build failed:\n${new TextDecoder().decode(built.stderr)}`);
      return () => ({ cmd: `${dir}/receiver`, args: [] });
    },
  },
];

const cleanups: (() => Promise<void>)[] = [];

async function installed(cmd: string): Promise<boolean> {
  for (const args of [["--version"], ["version"]]) {
    try {
      const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "null" }).output();
      if (out.success) return true;
    } catch {
      return false;
    }
  }
  return false;
}

/** The receiver process on `port` with WEBHOOK_SECRET `secret`, once it accepts connections. */
async function startReceiver(line: { cmd: string; args: string[] }, port: number, secret: string) {
  const child = new Deno.Command(line.cmd, {
    args: line.args,
    cwd: ROOT.pathname,
    env: { WEBHOOK_SECRET: secret, PORT: String(port) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const out = await output;
    const d = new TextDecoder();
    return d.decode(out.stdout) + d.decode(out.stderr);
  };
  for (const started = Date.now(); Date.now() - started < 20_000;) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return { url: `http://127.0.0.1:${port}/`, stop };
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`the receiver never listened:\n${await stop()}`);
}

/** The request a receiver gets, signed as the dispatcher signs, then changed as `change` says. */
function request(secret: string, opts: { age?: number; previous?: string; tamper?: boolean } = {}) {
  const id = crypto.randomUUID();
  const body = JSON.stringify({ id, type: "member.created", created_at: new Date().toISOString(), data: {} });
  const headers = signedHeaders({
    eventId: id,
    eventType: "member.created",
    secret,
    previousSecret: opts.previous,
    body: new TextEncoder().encode(body),
    timestamp: Math.floor(Date.now() / 1000) - (opts.age ?? 0),
  });
  return { headers, body: opts.tamper ? body.replace("member.created", "member.lost") : body };
}

async function post(url: string, r: { headers: Record<string, string>; body: string }): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: r.headers, body: r.body });
  await res.body?.cancel();
  return res.status;
}

const tenant = await createTenant("Receivers");

/** An endpoint of the tenant subscribed to member.created, with a generated secret or `ownSecret`. */
async function createEndpoint(url: string, ownSecret?: string) {
  const events = ["member.created"];
  const [endpoint] = ownSecret
    ? await sql()<{ id: string; secret: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, secret)
      values (${tenant.organizationId}, ${url}, ${events}, ${ownSecret}) returning id, secret`
    : await sql()<{ id: string; secret: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events)
      values (${tenant.organizationId}, ${url}, ${events}) returning id, secret`;
  return endpoint!;
}

for (const language of LANGUAGES) {
  Deno.test({
    name:
      `docs/receiving-webhooks.md: the ${language.name} receiver takes a real delivery and refuses forged, stale and unsigned ones`,
    ignore: !(await installed(language.tool)), // .ci/run installs every tool; a reader's machine may lack one
    sanitizeResources: false,
    async fn() {
      const snippet = markedBlock(await Deno.readTextFile(GUIDE), `receiver:${language.name}`);
      const dir = await Deno.makeTempDir({ prefix: `receiver-${language.name}-` });
      try {
        const commandFor = await language.prepare(snippet, dir);
        for (const kind of ["generated", "own"] as const) {
          // The endpoint first (its URL names the receiver's port), then the receiver with its secret.
          const port = freePort();
          const endpoint = await createEndpoint(
            `http://127.0.0.1:${port}/`,
            kind === "own" ? OWN_SECRET : undefined,
          );
          const receiver = await startReceiver(commandFor(port), port, endpoint.secret);
          let log = "";
          let eventId = "";
          try {
            await sql()`insert into public.members (organization_id, first_name, email)
              values (${tenant.organizationId}, 'Receiver', ${`receiver-${language.name}@example.org`})`;
            await testEngine().run({ stopWhenIdle: true });
            const [delivery] = await deliveriesOf(endpoint.id);
            assertEquals(
              [delivery?.status, delivery?.last_response_status],
              ["delivered", 204],
              `${kind} secret: the real delivery (${delivery?.last_error})`,
            );
            eventId = delivery!.event_id;

            const url = receiver.url;
            assertEquals(await post(url, request(endpoint.secret)), 204, `${kind}: a fresh signed request`);
            assertEquals(
              await post(url, request(endpoint.secret, { tamper: true })),
              401,
              `${kind}: a changed body`,
            );
            assertEquals(
              await post(url, request(endpoint.secret, { age: 600 })),
              401,
              `${kind}: ten minutes old`,
            );
            assertEquals(
              await post(url, request(endpoint.secret, { age: -600 })),
              401,
              `${kind}: from the future`,
            );
            const unsigned = request(endpoint.secret);
            delete unsigned.headers["webhook-signature"];
            assertEquals(await post(url, unsigned), 401, `${kind}: no signature`);
            const another = kind === "own"
              ? OWN_SECRET + "x"
              : `whsec_${btoa("another secret of 32 bytes, yes!")}`;
            assertEquals(await post(url, request(another)), 401, `${kind}: another secret`);
            // During a rotation the receiver still holds the previous secret: the second entry verifies.
            const rotated = request(`whsec_${btoa("a new secret of 32 bytes, really")}`, {
              previous: endpoint.secret,
            });
            assertEquals(await post(url, rotated), 204, `${kind}: during a rotation, with the old secret`);
          } finally {
            log = await receiver.stop();
            await retireEndpoints(endpoint.id);
          }
          assert(
            log.includes(`member.created ${eventId}`),
            `the ${language.name} receiver kept the event:\n${log}`,
          );
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test("cleanup", async () => {
  for (const c of cleanups) await c().catch(() => {});
  await closeSql();
});
