// Shared pieces of the reliability suites: the three inbound endpoints served together over loopback,
// snapshots of every domain table an inbound request could write, and a small bounded-concurrency runner.
import { sql, testDbUrl } from "../helpers/db.ts";
import { serveFunction } from "../helpers/server.ts";
import { createSql, type Sql } from "../../supabase/functions/_shared/db.ts";
import { loadConfig } from "../../supabase/functions/_shared/config.ts";
import { createApp as checkoutApp } from "../../supabase/functions/checkout-webhook/app.ts";
import { createApp as paymentsApp } from "../../supabase/functions/payments-webhook/app.ts";
import { createApp as messagingApp } from "../../supabase/functions/messaging-webhook/app.ts";
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";

export interface Inbound {
  checkout: string;
  payments: string;
  messaging: string;
  sql: Sql;
  close(): Promise<void>;
}

export async function serveInbound(): Promise<Inbound> {
  const appSql = createSql(testDbUrl(), { max: 8 });
  const deps = { sql: appSql, config: loadConfig({ SUPABASE_DB_URL: testDbUrl() }) };
  const servers = await Promise.all([
    serveFunction("checkout-webhook", checkoutApp(deps)),
    serveFunction("payments-webhook", paymentsApp(deps)),
    serveFunction("messaging-webhook", messagingApp(deps)),
  ]);
  return {
    checkout: servers[0].base,
    payments: servers[1].base,
    messaging: servers[2].base,
    sql: appSql,
    close: async () => {
      await Promise.all(servers.map((s) => s.close()));
      await appSql.end({ timeout: 5 });
    },
  };
}

/**
 * Everything an inbound request may change in the domain: row counts of the tables it inserts into and
 * a digest of the subscriptions it updates. Verified log rows are counted too (unverified ones are
 * allowed by design: they keep a capped copy of what was refused, for operators).
 */
export async function domainSnapshot(): Promise<Record<string, string>> {
  const [row] = await sql()<Record<string, string>[]>`
    select (select count(*) from public.donations)::text as donations,
           (select count(*) from public.donation_refunds)::text as donation_refunds,
           (select md5(coalesce(string_agg(to_jsonb(d)::text, ',' order by id), ''))
              from public.donations d) as donations_digest,
           (select md5(coalesce(string_agg(to_jsonb(r)::text, ',' order by id), ''))
              from public.recurring_donations r) as recurring_donations_digest,
           (select count(*) from public.whatsapp_messages)::text as whatsapp_messages,
           (select count(*) from public.whatsapp_conversations)::text as whatsapp_conversations,
           (select count(*) from public.whatsapp_message_receipts)::text as whatsapp_message_receipts,
           (select md5(coalesce(string_agg(to_jsonb(m)::text, ',' order by id), ''))
              from public.whatsapp_messages m) as whatsapp_messages_digest,
           (select count(*) from public.members)::text as members,
           (select count(*) from public.inbound_webhook_log
             where signature_valid is true)::text as verified_log_rows`;
  return row!;
}

/** Keys whose values differ between two snapshots. */
export function changed(a: Record<string, string>, b: Record<string, string>): string[] {
  return Object.keys(a).filter((k) => a[k] !== b[k]);
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export interface SignatureVariant {
  name: string;
  /** null: no signature header at all. */
  value: (body: Uint8Array) => Promise<string | null>;
  /** Whether the receiver must accept it as the organization's signature. */
  valid: boolean;
}

const hex = (secret: string, body: Uint8Array) => Promise.resolve(hmacSha256Hex(secret, body));

/** The signature header variants every hostile body is sent with. */
export function signatureVariants(secret: string, otherSecret: string): SignatureVariant[] {
  return [
    { name: "unsigned", value: () => Promise.resolve(null), valid: false },
    { name: "empty", value: () => Promise.resolve(""), valid: false },
    { name: "truncated", value: async (b) => (await hex(secret, b)).slice(0, 32), valid: false },
    { name: "one hex digit short", value: async (b) => (await hex(secret, b)).slice(1), valid: false },
    { name: "other organization's secret", value: (b) => hex(otherSecret, b), valid: false },
    {
      name: "other organization's secret, sha256= upper-case",
      value: async (b) => `sha256=${(await hex(otherSecret, b)).toUpperCase()}`,
      valid: false,
    },
    {
      name: "signed over other bytes",
      value: (b) => hex(secret, new Uint8Array([...b, 0x20])),
      valid: false,
    },
    { name: "not hex", value: () => Promise.resolve("z".repeat(64)), valid: false },
    { name: "valid", value: (b) => hex(secret, b), valid: true },
    { name: "valid upper-case hex", value: async (b) => (await hex(secret, b)).toUpperCase(), valid: true },
    { name: "valid sha256= prefix", value: async (b) => `sha256=${await hex(secret, b)}`, valid: true },
  ];
}

/** Waits until `url` answers 200, or throws after `ms`. */
export async function waitHealthy(url: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch { /* not yet */ }
    if (Date.now() > until) throw new Error(`${url} did not answer 200 within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
