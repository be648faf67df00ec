// Through a transaction-mode pooler, as Supabase advises Edge Functions to connect: Debian's PgBouncer
// 1.18 with pool_mode = transaction and 4 server connections, started by scripts/test-in-cluster.sh
// (scripts/pooler.sh) in front of the run's cluster. Each transaction of a client may run on another
// server connection, so nothing may rely on session state: not a startup role (the pooler refuses it),
// not a statement prepared on one server connection and executed on another.
import { assert, assertEquals, assertRejects } from "./helpers/assert.ts";
import { closeSql, createTenant } from "./helpers/db.ts";
import { tokenFor } from "./helpers/tokens.ts";
import { startWebhooksApi } from "./helpers/webhooks_api.ts";
import { createSql, type Sql } from "../supabase/functions/_shared/db.ts";
import postgres from "postgres";

function poolerUrl(): string {
  const url = Deno.env.get("TEST_POOLER_URL");
  if (!url) {
    throw new Error("TEST_POOLER_URL is not set: run through scripts/test.sh, which starts PgBouncer");
  }
  return url;
}

Deno.test("a statement prepared on one server connection and executed on another fails; unprepared, 120 at once all answer", async () => {
  // The pooler gives a client's next transaction whichever server connection is free. Hold the one the
  // statement was prepared on in another client's open transaction, and the next execution lands on
  // a server that never saw it.
  const client = createSql(poolerUrl(), { max: 1, prepare: true });
  const holders: Sql[] = [];
  const releases: (() => void)[] = [];
  const held: Promise<unknown>[] = [];
  try {
    const pidOf = async () => (await client<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
    const preparedOn = await pidOf();
    for (let i = 0; i < 3; i++) {
      const holder = createSql(poolerUrl(), { max: 1, prepare: false });
      holders.push(holder);
      const pid = await new Promise<number>((resolve, reject) => {
        held.push(
          holder.begin(async (tx) => {
            resolve((await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid);
            await new Promise<void>((release) => releases.push(release));
          }).catch(reject),
        );
      });
      if (pid === preparedOn) break;
    }
    // In a transaction, as every user request runs: postgres.js cannot re-prepare and retry there.
    const err = await assertRejects(() =>
      client.begin((tx) => tx<{ pid: number }[]>`select pg_backend_pid() as pid`)
    );
    // 26000: prepared statement "…" does not exist
    assertEquals((err as { code?: string }).code, "26000", (err as Error).message);
  } finally {
    releases.forEach((release) => release());
    await Promise.allSettled(held);
    await Promise.all([client, ...holders].map((p) => p.end({ timeout: 1 })));
  }
  const unprepared = createSql(poolerUrl(), { max: 16, prepare: false });
  try {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        Array.from(
          { length: 120 },
          (_, i) => unprepared<{ n: number }[]>`select ${i}::int + 1 as n`.then((r) => r[0]!.n),
        ),
      );
      assertEquals(answers, Array.from({ length: 120 }, (_, i) => i + 1));
    }
  } finally {
    await unprepared.end({ timeout: 1 });
  }
});

Deno.test("a pool that starts its sessions as a role is refused by the pooler", async () => {
  // What the user pool did before: the startup parameter role=anon.
  const withRole = postgres(poolerUrl(), { max: 1, connection: { role: "anon" } as Record<string, string> });
  try {
    const err = await assertRejects(() => withRole`select 1`);
    assert(/unsupported startup parameter: role/.test((err as Error).message), (err as Error).message);
  } finally {
    await withRole.end({ timeout: 1 });
  }
});

Deno.test("the configuration API through the pooler: 60 concurrent requests of two organizations' admins all answer", async () => {
  const api = await startWebhooksApi({
    SUPABASE_DB_URL: `${poolerUrl()}?prepare=false`,
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
  });
  try {
    const a = await createTenant();
    const b = await createTenant();
    const tokenA = await tokenFor(a.admin, a.organizationId);
    const tokenB = await tokenFor(b.admin, b.organizationId);
    const created = await fetch(`${api.base}/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokenA}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://a.example.org/hook", events: ["member.created"] }),
    });
    assertEquals(created.status, 201, await created.text());
    const answers = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const token = i % 2 ? tokenA : tokenB;
        const res = await fetch(`${api.base}${i % 3 ? "/endpoints" : "/me"}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        const body = await res.json();
        return { i, status: res.status, body };
      }),
    );
    assertEquals(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body]), []);
    // Each admin saw only their own organization's endpoints (RLS inside each request's transaction).
    for (const a of answers.filter((a) => a.i % 3)) {
      const endpoints = (a.body.data ?? a.body) as unknown[];
      assertEquals(endpoints.length, a.i % 2 ? 1 : 0, `request ${a.i}`);
    }
  } finally {
    await api.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
