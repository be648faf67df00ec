// Plays the WhatsApp gateway: webhook bodies in the Cloud API's documented shape, signed the way the
// gateway signs them, and the accounts they route to.
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";
import { sql } from "./db.ts";

export interface TestAccount {
  id: string;
  organizationId: string;
  phoneNumberId: string;
  displayPhoneNumber: string;
  appSecret: string;
  verifyToken: string;
}

let counter = 0;
const unique = () =>
  `${Date.now()}${(counter++).toString().padStart(4, "0")}${Math.floor(Math.random() * 1000)}`;

/** A fresh digits-only phone number (country code 1, 11 digits) no other test uses. */
export function newPhone(): string {
  return `1${unique().slice(-10).padStart(10, "5")}`;
}

/** A fresh phone-number id (the gateway's id of a business number) no other test uses. */
export const newPhoneNumberId = (): string => unique();

export function newMessageId(): string {
  return `wamid.${btoa(crypto.randomUUID()).replace(/=+$/, "")}`;
}

/** Registers a gateway number for an organization, as an operator would (server side); any id, also one
 * another organization registered. */
export async function createAccount(
  organizationId: string,
  opts: { appSecret?: string; verifyToken?: string; phoneNumberId?: string } = {},
): Promise<TestAccount> {
  const phoneNumberId = opts.phoneNumberId ?? unique();
  const displayPhoneNumber = `1555${phoneNumberId.slice(-7)}`;
  const appSecret = opts.appSecret ?? `secret-${crypto.randomUUID()}`;
  const verifyToken = opts.verifyToken ?? `verify-${crypto.randomUUID()}`;
  const [row] = await sql()<{ id: string }[]>`
    insert into public.messaging_accounts (organization_id, phone_number_id, display_phone_number)
    values (${organizationId}, ${phoneNumberId}, ${displayPhoneNumber}) returning id`;
  await sql()`
    insert into public.messaging_account_secrets (account_id, organization_id, app_secret, verify_token)
    values (${row!.id}, ${organizationId}, ${appSecret}, ${verifyToken})`;
  return { id: row!.id, organizationId, phoneNumberId, displayPhoneNumber, appSecret, verifyToken };
}

export async function createMember(
  organizationId: string,
  primaryPhone: string | null,
  firstName = "Member",
) {
  const [row] = await sql()<{ id: string }[]>`
    insert into public.members (organization_id, first_name, primary_phone)
    values (${organizationId}, ${firstName}, ${primaryPhone}) returning id`;
  return row!.id;
}

type Obj = Record<string, unknown>;

export const unixNow = (offsetSeconds = 0) => String(Math.floor(Date.now() / 1000) + offsetSeconds);

export function textMessage(from: string, body: string, extra: Obj = {}): Obj {
  return { from, id: newMessageId(), timestamp: unixNow(), type: "text", text: { body }, ...extra };
}

export function contact(waId: string | undefined, name: string, userId?: string): Obj {
  return {
    profile: { name },
    ...(waId !== undefined ? { wa_id: waId } : {}),
    ...(userId !== undefined ? { user_id: userId } : {}),
  };
}

export function status(id: string, value: string, recipientId: string, extra: Obj = {}): Obj {
  return { id, status: value, timestamp: unixNow(), recipient_id: recipientId, ...extra };
}

/** One change (the `value` of entry[].changes[]) for an account. */
export function change(
  account: TestAccount,
  value: { contacts?: Obj[]; messages?: Obj[]; statuses?: Obj[] },
) {
  return {
    field: "messages",
    value: {
      messaging_product: "whatsapp",
      metadata: { display_phone_number: account.displayPhoneNumber, phone_number_id: account.phoneNumberId },
      ...value,
    },
  };
}

/** The whole body: one entry per array of changes. */
export function webhookBody(...entries: ReturnType<typeof change>[][]): Obj {
  return {
    object: "whatsapp_business_account",
    entry: entries.map((changes, i) => ({ id: `waba-${i}`, changes })),
  };
}

export async function signedPost(
  url: string,
  body: Obj | string,
  secret: string | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const h: Record<string, string> = { "content-type": "application/json", ...headers };
  if (secret !== null) h["x-hub-signature-256"] = `sha256=${await hmacSha256Hex(secret, raw)}`;
  return await fetch(url, { method: "POST", headers: h, body: raw });
}
