// Benchmark of messaging-webhook: latency of each kind of request, side by side in one run, against a
// real PostgreSQL with the project's migrations. The function is served in this process on loopback
// with the same pool settings as deployed; the client is in this process too.
//
//   BENCH_DATABASE_URL=postgresql://... deno run -A scripts/bench/messaging_webhook.ts
//
// BENCHMARKS.md shows how to run it against a throwaway cluster.
import { createApp } from "../../supabase/functions/messaging-webhook/app.ts";
import { createSql } from "../../supabase/functions/_shared/db.ts";
import { loadConfig } from "../../supabase/functions/_shared/config.ts";
import { serveFunction } from "../../tests/helpers/server.ts";
import {
  change,
  contact,
  newMessageId,
  signedPost,
  status,
  type TestAccount,
  textMessage,
  webhookBody,
} from "../../tests/helpers/whatsapp.ts";

const url = Deno.env.get("BENCH_DATABASE_URL");
if (!url) {
  console.error("BENCH_DATABASE_URL is not set (a database with the migrations applied)");
  Deno.exit(2);
}
const N = Number(Deno.env.get("BENCH_N") ?? 300);
const WARMUP = 30;
const CONCURRENCY = 8;

const admin = createSql(url, { max: 2 });
const deps = { config: loadConfig({ SUPABASE_DB_URL: url }), sql: createSql(url, { max: 10 }) };
const server = await serveFunction("messaging-webhook", createApp(deps));

const [org] = await admin<
  { id: string }[]
>`insert into public.organizations (name) values ('Bench') returning id`;
const organizationId = org!.id;
const phoneNumberId = `bench${Date.now()}`;
const account: TestAccount = {
  id: "",
  organizationId,
  phoneNumberId,
  displayPhoneNumber: "15550000000",
  appSecret: `bench-secret-${crypto.randomUUID()}`,
  verifyToken: `bench-token-${crypto.randomUUID()}`,
};
const [acc] = await admin<{ id: string }[]>`
  insert into public.messaging_accounts (organization_id, phone_number_id, display_phone_number)
  values (${organizationId}, ${phoneNumberId}, ${account.displayPhoneNumber}) returning id`;
account.id = acc!.id;
await admin`insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
  values (${account.id}, ${organizationId}, ${account.appSecret}, ${account.verifyToken})`;
// A congregation of 5,000 members so matching is an index lookup among realistic data.
await admin`
  insert into public.members (organization_id, first_name, primary_phone)
  select ${organizationId}, 'Member ' || i, '+1 (555) ' || lpad(i::text, 3, '0') || '-' || lpad(i::text, 4, '0')
  from generate_series(1, 5000) i`;

let phoneCounter = 0;
const freshPhone = () => `1777${String(phoneCounter++).padStart(7, "0")}`;
const regular = "15550010010";

async function expectOk(res: Response) {
  if (res.status !== 200) throw new Error(`unexpected ${res.status}: ${await res.text()}`);
  await res.body?.cancel();
}

interface Scenario {
  name: string;
  /** Builds the request's arguments before timing starts; `run` sends it. */
  prepare: () => Promise<() => Promise<void>>;
}

const outbound: string[] = [];
async function prepareOutbound(count: number) {
  const [thread] = await admin<{ id: string }[]>`
    insert into public.whatsapp_conversations (organization_id, contact_phone) values (${organizationId}, ${regular})
    on conflict (organization_id, contact_phone) do update set contact_phone = excluded.contact_phone returning id`;
  const ids = Array.from({ length: count }, () => newMessageId());
  await admin`
    insert into public.whatsapp_messages (organization_id, conversation_id, provider_message_id, direction, type, status)
    select ${organizationId}, ${thread!.id}, id, 'outbound', 'text', 'sent' from unnest(${ids}::text[]) id`;
  outbound.push(...ids);
}

const scenarios: Scenario[] = [
  {
    name: "text, existing thread",
    prepare: () => {
      const body = webhookBody([
        change(account, {
          contacts: [contact(regular, "Regular")],
          messages: [textMessage(regular, "hello")],
        }),
      ]);
      return Promise.resolve(async () =>
        await expectOk(await signedPost(server.base, body, account.appSecret))
      );
    },
  },
  {
    name: "text, new contact (thread insert)",
    prepare: () => {
      const phone = freshPhone();
      const body = webhookBody([
        change(account, { contacts: [contact(phone, "New")], messages: [textMessage(phone, "hi")] }),
      ]);
      return Promise.resolve(async () =>
        await expectOk(await signedPost(server.base, body, account.appSecret))
      );
    },
  },
  {
    name: "receipt (delivered)",
    prepare: () => {
      const id = outbound.pop()!;
      const body = webhookBody([change(account, { statuses: [status(id, "delivered", regular)] })]);
      return Promise.resolve(async () =>
        await expectOk(await signedPost(server.base, body, account.appSecret))
      );
    },
  },
  {
    name: "duplicate redelivery",
    prepare: () => {
      const body = webhookBody([
        change(account, { messages: [textMessage(regular, "again", { id: "wamid.bench-dup" })] }),
      ]);
      return Promise.resolve(async () =>
        await expectOk(await signedPost(server.base, body, account.appSecret))
      );
    },
  },
  {
    name: "batch of 50 messages",
    prepare: () => {
      const messages = Array.from(
        { length: 50 },
        (_, i) => textMessage(i % 5 === 0 ? freshPhone() : regular, `m${i}`),
      );
      const body = webhookBody([change(account, { messages })]);
      return Promise.resolve(async () =>
        await expectOk(await signedPost(server.base, body, account.appSecret))
      );
    },
  },
  {
    name: "bad signature (401)",
    prepare: () => {
      const body = webhookBody([change(account, { messages: [textMessage(regular, "forged")] })]);
      return Promise.resolve(async () => {
        const res = await signedPost(server.base, body, "wrong-secret");
        if (res.status !== 401) throw new Error(`unexpected ${res.status}`);
        await res.body?.cancel();
      });
    },
  },
  {
    name: "GET handshake",
    prepare: () => {
      const q = `${server.base}?hub.mode=subscribe&hub.verify_token=${account.verifyToken}&hub.challenge=42`;
      return Promise.resolve(async () => await expectOk(await fetch(q)));
    },
  },
];

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

await prepareOutbound(N + WARMUP);
const results: { name: string; median: number; p95: number }[] = [];
// Interleaved rounds: every scenario runs once per round, so drift of the shared machine hits all alike.
const samples = new Map<string, number[]>(scenarios.map((s) => [s.name, []]));
for (let round = 0; round < N + WARMUP; round++) {
  for (const s of scenarios) {
    const run = await s.prepare();
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    if (round >= WARMUP) samples.get(s.name)!.push(ms);
  }
}
for (const s of scenarios) {
  const xs = samples.get(s.name)!.sort((a, b) => a - b);
  results.push({ name: s.name, median: quantile(xs, 0.5), p95: quantile(xs, 0.95) });
}

// Throughput: CONCURRENCY clients each sending N single-message requests, half to new contacts.
const t0 = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, async (_, c) => {
  for (let i = 0; i < N; i++) {
    const phone = i % 2 === 0 ? freshPhone() : `1555002${String(c).padStart(4, "0")}`;
    const body = webhookBody([change(account, { messages: [textMessage(phone, `c${c}-${i}`)] })]);
    await expectOk(await signedPost(server.base, body, account.appSecret));
  }
}));
const seconds = (performance.now() - t0) / 1000;
const throughput = (CONCURRENCY * N) / seconds;

const base = results[0]!.median;
console.log(
  `messaging-webhook benchmark: ${N} measured requests per scenario (after ${WARMUP} warm-up), interleaved`,
);
console.log(`| scenario | median ms | p95 ms | median / "text, existing thread" |`);
console.log(`|---|---|---|---|`);
for (const r of results) {
  console.log(
    `| ${r.name} | ${r.median.toFixed(2)} | ${r.p95.toFixed(2)} | ${(r.median / base).toFixed(2)} |`,
  );
}
const batch = results.find((r) => r.name.startsWith("batch"))!;
console.log(
  `\nbatch of 50: ${(batch.median / 50).toFixed(3)} ms per message = ${
    (batch.median / 50 / base).toFixed(3)
  } x a single-message request`,
);
console.log(
  `throughput: ${CONCURRENCY} concurrent clients, ${CONCURRENCY * N} single-message requests: ${
    throughput.toFixed(0)
  } requests/s`,
);

await server.close();
await deps.sql.end({ timeout: 5 });
await admin.end({ timeout: 5 });
