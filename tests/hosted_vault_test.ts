// Vault and the dispatcher's start on a database prepared as a hosted project's (tests/helpers/hosted_db.ts:
// `postgres` not a superuser, Vault as supabase_vault 0.3.1 installs it, secrets encrypted), the
// migrations applied by the pinned CLI's `db push` as the deploy runs it. pg_net is played by a table its
// stand-in net.http_post writes each request to, and by this test, which sends those requests on to the
// webhook-dispatcher served as the Edge Runtime serves it (scripts/edge-runtime.ts), as pg_net's worker
// would: so what Vault holds is what authenticates the dispatcher's runs.
//   - edge_user's password lives in Vault (secret edge_user_password, encrypted), not in the private table:
//     before, the migration looked for a three-argument vault.create_secret that supabase_vault 0.3.1 does
//     not have, and kept it in private.edge_user_login;
//   - a new WEBHOOK_DISPATCH_SECRET reaches Vault with `npm run dispatch:secret`, and the next run
//     authenticates with it (`db push` again writes nothing: "Remote database is up to date");
//   - a run stopped by SIGTERM asks for its successor at once, and the successor, in a new worker,
//     delivers the rest within seconds, each once.
import { assert, assertEquals, assertMatch, assertNotEquals } from "./helpers/assert.ts";
import { ROOT } from "./helpers/markdown.ts";
import { startHostedDb } from "./helpers/hosted_db.ts";
import { CLI_OFFLINE_ENV, SUPABASE_CLI } from "./helpers/supabase_cli.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { createSql, type Sql } from "../supabase/functions/_shared/db.ts";

const PROJECT_URL = "https://abcdefghijklmnopqrst.supabase.co";

async function run(cmd: string, args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(cmd, {
    args,
    cwd: ROOT.pathname,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, output: d.decode(out.stdout) + d.decode(out.stderr) };
}

/** The deploy's `db push`, with the Vault secrets from the variables as [db.vault] reads them. */
function dbPush(url: string, dispatchSecret: string) {
  return run(SUPABASE_CLI, ["db", "push", "--db-url", url, "--yes"], {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/root",
    SUPABASE_PROJECT_URL: PROJECT_URL,
    WEBHOOK_DISPATCH_SECRET: dispatchSecret,
    PGSSLMODE: "disable",
    ...CLI_OFFLINE_ENV,
  });
}

/** pg_net's interface, as the platform would install it: each request queued in net.posted. */
const STAND_IN_PG_NET = `
create schema net;
create table net.posted (id bigserial primary key, url text, headers jsonb, body jsonb);
create function net.http_post(url text, body jsonb default '{}', params jsonb default '{}',
                              headers jsonb default '{}', timeout_milliseconds integer default 5000)
returns bigint language sql security definer set search_path = '' as $$
  insert into net.posted (url, headers, body) values (url, headers, body) returning id $$;
grant usage on schema net to postgres;
grant execute on function net.http_post(text, jsonb, jsonb, jsonb, integer) to postgres;
`;

/** scripts/edge-runtime.ts serving webhook-dispatcher's index.ts with this secret; a new worker each time. */
async function startDispatcher(dbUrl: string, secret: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "scripts/edge-runtime.ts", "webhook-dispatcher"],
    cwd: ROOT.pathname,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/root",
      ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      SUPABASE_DB_URL: dbUrl,
      WEBHOOK_DISPATCH_SECRET: secret,
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drained = Promise.all([child.stdout, child.stderr].map(async (s) => {
    for await (const t of s.pipeThrough(new TextDecoderStream())) out += t;
  }));
  for (const t0 = Date.now(); !/serving (http:\/\/\S+?)\//.test(out);) {
    if (Date.now() - t0 > 30_000) throw new Error(`the dispatcher did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const origin = out.match(/serving (http:\/\/\S+?)\//)![1]!;
  return {
    origin,
    output: () => out,
    /** SIGTERM: the runtime's shutdown notice. */
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
      await drained;
      return out;
    },
  };
}

/** pg_net's worker: sends the requests queued since the last call to `origin`; their bodies and statuses. */
function pgNetWorker(db: Sql) {
  let last = 0;
  return async (origin: string) => {
    const rows = await db<{ id: number; url: string; headers: Record<string, string>; body: unknown }[]>`
      select id::int, url, headers, body from net.posted where id > ${last} order by id`;
    const sent: { body: unknown; status: number }[] = [];
    for (const r of rows) {
      last = r.id;
      assert(r.url.startsWith(`${PROJECT_URL}/functions/v1/`), r.url);
      const res = await fetch(origin + r.url.slice(PROJECT_URL.length), {
        method: "POST",
        headers: r.headers,
        body: JSON.stringify(r.body),
      });
      await res.body?.cancel();
      sent.push({ body: r.body, status: res.status });
    }
    return sent;
  };
}

async function until(what: string, check: () => Promise<boolean>, ms: number, detail = () => "") {
  for (const t0 = Date.now(); Date.now() - t0 < ms;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}: ${detail()}`);
}

Deno.test({
  name:
    "on a hosted-like database: edge_user's password is in Vault, a new dispatch secret reaches Vault with npm run dispatch:secret, a stopped run's successor starts at once",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const db = await startHostedDb();
    const admin = createSql(db.adminUrl, { max: 2 });
    const asPostgres = createSql(db.url, { max: 2 });
    const receiver = await startReceiver(async () => {
      await new Promise((r) => setTimeout(r, 100));
      return new Response("ok");
    });
    const workers: Awaited<ReturnType<typeof startDispatcher>>[] = [];
    try {
      const oldSecret = `old-${crypto.randomUUID()}${crypto.randomUUID()}`;
      const pushed = await dbPush(db.url, oldSecret);
      assertEquals(pushed.code, 0, pushed.output);
      // The runs here are the test's own: no cron minute posts one in between.
      await asPostgres`select cron.unschedule('webhook-dispatch')`;

      // Vault's functions as supabase_vault 0.3.1 has them: four and five arguments, not three.
      const [sig] = await admin<{ three: string | null; four: string | null }[]>`
        select to_regprocedure('vault.create_secret(text, text, text)')::text as three,
               to_regprocedure('vault.create_secret(text, text, text, uuid)')::text as four`;
      assertEquals([sig!.three, sig!.four], [null, "vault.create_secret(text,text,text,uuid)"]);

      // edge_user's password: in Vault, stored encrypted, and what edge_user logs in with.
      const [login] = await admin<{ in_table: number; stored: string; password: string; read: string }[]>`
        select (select count(*)::int from private.edge_user_login) as in_table,
               s.secret as stored, d.decrypted_secret as password, private.edge_user_password() as read
        from vault.secrets s join vault.decrypted_secrets d using (id) where s.name = 'edge_user_password'`;
      assert(login, "Vault holds edge_user_password");
      assertEquals(login.in_table, 0, "nothing in the plain table private.edge_user_login");
      assertNotEquals(login.stored, login.password, "Vault's table holds it encrypted");
      assertEquals(login.read, login.password, "the functions read it from Vault");
      const edgeUser = createSql(
        `postgresql://edge_user:${encodeURIComponent(login.password)}@127.0.0.1:${db.port}/postgres`,
        { max: 1 },
      );
      try {
        assertEquals((await edgeUser<{ one: number }[]>`select 1 as one`)[0]!.one, 1);
      } finally {
        await edgeUser.end({ timeout: 5 });
      }

      await db.psqlAdmin(STAND_IN_PG_NET);
      const pgNet = pgNetWorker(admin);
      const invoke = async (origin: string) => {
        await asPostgres`select private.webhook_invoke_dispatcher()`;
        return (await pgNet(origin)).map((s) => s.status);
      };
      const vaultSecret = async () =>
        (await admin<{ secret: string; updated_at: Date }[]>`
          select decrypted_secret as secret, updated_at from vault.decrypted_secrets
          where name = 'webhook_dispatch_secret'`)[0]!;

      let fn = await startDispatcher(db.url, oldSecret);
      workers.push(fn);
      assertEquals(await invoke(fn.origin), [202], "the cron job's run authenticates with db push's secret");

      // A new secret: `secrets set` gives it to the functions (a new worker); Vault still has the old one.
      const newSecret = `new-${crypto.randomUUID()}${crypto.randomUUID()}`;
      await fn.stop();
      fn = await startDispatcher(db.url, newSecret);
      workers.push(fn);
      assertEquals(await invoke(fn.origin), [401], "the functions have the new secret, Vault the old one");
      const before = await vaultSecret();
      // What the guide used to say: `db push` again. With nothing to apply it writes no Vault secret.
      const again = await dbPush(db.url, newSecret);
      assertEquals(again.code, 0, again.output);
      assertMatch(again.output, /up to date/i);
      assertEquals((await vaultSecret()).secret, oldSecret, "db push with nothing to apply left Vault alone");

      // The command docs/operations.md gives for it.
      const guide = await Deno.readTextFile(new URL("docs/operations.md", ROOT));
      assertMatch(guide, /\nnpm run dispatch:secret /, "docs/operations.md shows the command");
      const rotated = await run("npm", ["run", "-s", "dispatch:secret"], {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/root",
        WEBHOOK_DISPATCH_SECRET: newSecret,
        SUPABASE_DB_URL: db.url,
      });
      assertEquals(rotated.code, 0, rotated.output);
      assert(!rotated.output.includes(newSecret), "the secret is never printed");
      const after = await vaultSecret();
      assertEquals(after.secret, newSecret);
      assert(after.updated_at > before.updated_at, "Vault's updated_at moved");
      assertEquals(await invoke(fn.origin), [202], "the next run authenticates with the new secret");
      const short = await run("npm", ["run", "-s", "dispatch:secret"], {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/root",
        WEBHOOK_DISPATCH_SECRET: "too-short",
        SUPABASE_DB_URL: db.url,
      });
      assertEquals(short.code, 2, short.output);
      assertMatch(short.output, /at least 32 characters/);
      assertEquals((await vaultSecret()).secret, newSecret, "a refused secret changes nothing");

      // A run stopped by SIGTERM mid-batch: 20 deliveries to an endpoint paced at 5 a second.
      const [org] = await asPostgres<{ id: string }[]>`
        insert into public.organizations (name) values ('Vault Church') returning id`;
      const [ep] = await asPostgres<{ id: string }[]>`
        insert into public.webhook_endpoints (organization_id, url, events, rate_limit_per_second)
        values (${org!.id}, ${`${receiver.url}/hook`}, ${["attendance.marked"]}, 5) returning id`;
      const [member] = await asPostgres<{ id: string }[]>`
        insert into public.members (organization_id, first_name) values (${org!.id}, 'p') returning id`;
      await pgNet(fn.origin); // whatever the inserts above woke
      await asPostgres`insert into public.attendance (organization_id, member_id)
                       select ${org!.id}, ${member!.id} from generate_series(1, 20)`;
      const woken = await pgNet(fn.origin);
      assert(
        woken.some((s) => s.status === 202),
        `the insert's wake-up started a run: ${JSON.stringify(woken)}`,
      );
      await until("two deliveries", () => Promise.resolve(receiver.requests.length >= 2), 30_000);
      const stoppedOut = await fn.stop();
      const receivedThen = receiver.requests.length;
      assert(receivedThen < 20, "stopped mid-batch");
      const successor = await admin<{ body: unknown }[]>`
        select body from net.posted where body = '{"stop_when_idle": true, "idle_grace_ms": 10000}'::jsonb`;
      assertEquals(successor.length, 1, `the stopped run asked for its successor:\n${stoppedOut}`);

      // pg_net sends it to a new worker: the rest goes out now, not at the next cron minute.
      const t0 = Date.now();
      fn = await startDispatcher(db.url, newSecret);
      workers.push(fn);
      const sent = await pgNet(fn.origin);
      assert(sent.every((s) => s.status === 202), JSON.stringify(sent));
      const deliveries = async () => (await asPostgres<{ status: string; attempt_count: number }[]>`
          select status, attempt_count from public.webhook_deliveries where endpoint_id = ${ep!.id}`);
      await until(
        "every delivery",
        async () => (await deliveries()).every((d) => d.status === "delivered"),
        20_000,
        fn.output,
      );
      const took = Date.now() - t0;
      assertEquals((await deliveries()).map((d) => d.attempt_count), Array(20).fill(1), "each sent once");
      assertEquals(receiver.requests.length, 20, "each received once");
      console.log(`stopped after ${receivedThen} of 20; the successor delivered the rest in ${took} ms`);

      // Without Vault's server key (supabase_vault not preloaded) nothing is stored, and the command says so.
      await db.psqlAdmin("delete from vault._root_key");
      const [noKey] = await asPostgres<{ stored: boolean }[]>`
        select private.vault_put_secret('probe', 'value') as stored`;
      assertEquals(noKey!.stored, false);
      const keyless = await run("npm", ["run", "-s", "dispatch:secret"], {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? "/root",
        WEBHOOK_DISPATCH_SECRET: `${newSecret}-again`,
        SUPABASE_DB_URL: db.url,
      });
      assertEquals(keyless.code, 1, keyless.output);
      assertMatch(keyless.output, /cannot encrypt/);
    } finally {
      for (const w of workers) await w.stop().catch(() => {});
      await receiver.close();
      await asPostgres.end({ timeout: 5 });
      await admin.end({ timeout: 5 });
      await db.close();
    }
  },
});
