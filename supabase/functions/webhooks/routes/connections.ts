// Inbound connections (Settings > Integrations > Connections): what an administrator sets up so that the
// checkout provider, the card-payment provider and the WhatsApp gateway can reach the organization. The
// URL to give each provider, its secret (set or replaced, never read back: whether one is set, its last
// four characters and since when), a signed test through the real receiver, the last payload and the
// failures; the organization's WhatsApp numbers with their app secret, verify token (shown once),
// handshake and first verified body. People only: an API key cannot see or change a connection.
// The secrets are written and summarized by SQL functions (20261128140000_inbound_connections.sql) that
// check the caller themselves; the test reads the secret it signs with as the server.
// @see docs/inbound-webhooks.md#connect-a-provider-in-the-settings-page
import { z } from "zod";
import type { AppDeps } from "../../_shared/app.ts";
import { AppError, badRequest, notFound, serviceUnavailable } from "../../_shared/errors.ts";
import { hmacSha256Hex } from "../../_shared/hmac.ts";
import type { Tx } from "../../_shared/db.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";

export const PAYMENT_PROVIDERS = ["checkout", "payments"] as const;
type PaymentProvider = typeof PAYMENT_PROVIDERS[number];

const RECEIVER: Record<PaymentProvider, { fn: string; header: string }> = {
  checkout: { fn: "checkout-webhook", header: "x-checkout-signature" },
  payments: { fn: "payments-webhook", header: "x-payments-signature" },
};
const TEST_TIMEOUT_MS = 10_000;

const ORG = "11111111-1111-4111-8111-111111111111";
const NOW = "2026-11-28T09:30:00.000Z";

// What a provider secret must be (the same rule as private.inbound_secret_acceptable): it keys the HMAC,
// so long enough not to be guessed, and text a provider's dashboard accepts.
const SECRET_MESSAGE = "must be 16 to 256 printable characters without spaces";
const ProviderSecret = z.string().regex(/^[!-~]{16,256}$/, SECRET_MESSAGE);

const SecretState = z.object({
  set: z.boolean(),
  last4: z.string().nullable().describe("The secret's last four characters, to tell it apart"),
  set_at: z.string().nullable(),
});
const LogSummary = z.object({
  id: z.uuid(),
  event: z.string().nullable(),
  status: z.string(),
  received_at: z.string(),
});
const Failure = z.object({
  status: z.string(),
  error: z.string().nullable(),
  received_at: z.string().describe("When it (or, for a count of refused bodies, the last of them) arrived"),
});
const Failures = z.object({
  to_replay: z.number().int().describe(
    "Verified payloads that failed or matched nothing and wait for a replay (counted up to 1000)",
  ),
  refused_7d: z.number().int().describe(
    "Bodies refused over the last 7 days: wrong or missing signature, malformed",
  ),
  last: Failure.nullable().describe("The newest failure of the last 7 days"),
});

const PaymentConnection = z.object({
  provider: z.enum(PAYMENT_PROVIDERS),
  url: z.string().nullable().describe(
    "The address to give the provider (null when the functions' URL is not configured)",
  ),
  signature_header: z.string().describe("The header our receiver reads the signature from"),
  secret: SecretState.extend({
    uses_checkout_secret: z.boolean().describe(
      "Card payments: no secret of its own, so the checkout secret verifies its signatures",
    ),
  }),
  last_received: LogSummary.nullable().describe("The newest verified payload (a signed test counts)"),
  failures: Failures,
});

const WhatsAppNumber = z.object({
  id: z.uuid(),
  phone_number_id: z.string(),
  display_phone_number: z.string().nullable(),
  app_secret_last4: z.string().nullable(),
  status: z.enum(["pending", "verified"]).describe(
    "verified: a body for this number signed with this app secret has arrived. pending: none yet " +
      "(messages arrive once Meta sends them signed with this app secret)",
  ),
  verified_at: z.string().nullable(),
  handshake_at: z.string().nullable().describe(
    "When Meta's subscription handshake last presented this number's verify token",
  ),
  last_received_at: z.string().nullable(),
  last_message: z.object({
    received_at: z.string(),
    type: z.string(),
    from: z.string().nullable().describe("The sender's last four digits"),
  }).nullable(),
  created_at: z.string(),
});
const NUMBER_EXAMPLE: z.infer<typeof WhatsAppNumber> = {
  id: "dddddddd-0000-4000-8000-000000000001",
  phone_number_id: "106540352242922",
  display_phone_number: "+1 555 078 3881",
  app_secret_last4: "9c1f",
  status: "verified",
  verified_at: NOW,
  handshake_at: NOW,
  last_received_at: NOW,
  last_message: { received_at: NOW, type: "text", from: "…1234" },
  created_at: NOW,
};
const WhatsAppNumberWithToken = WhatsAppNumber.extend({
  verify_token: z.string().describe("The verify token to enter in Meta's webhook settings. Shown only here."),
}).openapi({ example: { ...NUMBER_EXAMPLE, verify_token: "vt_2Q1m9cS4yWb6nX0pL7aDkRfE3uTjHgZ8" } });

const failuresExample = { to_replay: 0, refused_7d: 1, last: null };
const Connections = z.object({
  checkout: PaymentConnection,
  payments: PaymentConnection,
  whatsapp: z.object({
    callback_url: z.string().nullable().describe(
      "The Callback URL to enter in Meta's webhook settings: the organization's own, which answers the " +
        "handshake and routes bodies for its numbers only",
    ),
    numbers: z.array(WhatsAppNumber),
    failures: Failures,
  }),
}).openapi({
  example: {
    checkout: {
      provider: "checkout",
      url: `https://abcd.supabase.co/functions/v1/checkout-webhook/${ORG}`,
      signature_header: "x-checkout-signature",
      secret: { set: true, last4: "f1rs", set_at: NOW, uses_checkout_secret: false },
      last_received: {
        id: "60106e03-4c1a-4d8e-9a37-0f2b8c1d2e3f",
        event: "connection.test",
        status: "processed",
        received_at: NOW,
      },
      failures: failuresExample,
    },
    payments: {
      provider: "payments",
      url: `https://abcd.supabase.co/functions/v1/payments-webhook/${ORG}`,
      signature_header: "x-payments-signature",
      secret: { set: false, last4: null, set_at: null, uses_checkout_secret: true },
      last_received: null,
      failures: { to_replay: 0, refused_7d: 0, last: null },
    },
    whatsapp: {
      callback_url: `https://abcd.supabase.co/functions/v1/messaging-webhook/${ORG}`,
      numbers: [NUMBER_EXAMPLE],
      failures: { to_replay: 0, refused_7d: 0, last: null },
    },
  },
});

const SetSecret = z.object({
  secret: ProviderSecret.optional().describe(
    "The secret the provider gave you, or the one you typed into its dashboard; omitted: we generate one " +
      "(returned once) for you to enter there",
  ),
}).strict().openapi({ example: { secret: "rzp_whsec_4q9VtXr2mZ7kLp0a" } });
const SecretResult = SecretState.extend({
  provider: z.enum(PAYMENT_PROVIDERS),
  generated_secret: z.string().optional().describe("Only when we generated it: the secret, shown only here"),
}).openapi({ example: { provider: "checkout", set: true, last4: "Lp0a", set_at: NOW } });

const TestResult = z.object({
  delivered: z.boolean().describe("The receiver verified, logged and accepted the signed test"),
  status: z.number().int().describe("The HTTP status the receiver answered"),
  outcome: z.string().nullable().describe("The receiver's status (processed, ...)"),
  log_id: z.uuid().nullable().describe("The test's entry in the inbound log (Payment webhooks)"),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
}).openapi({
  example: {
    delivered: true,
    status: 200,
    outcome: "processed",
    log_id: "60106e03-4c1a-4d8e-9a37-0f2b8c1d2e3f",
    error: null,
  },
});

const DisplayNumber = z.string().trim().regex(
  /^[0-9 +().-]{1,40}$/,
  "must be a phone number of digits, spaces, +, ( ) . - (at most 40 characters)",
);
const PhoneNumberId = z.string().trim().regex(
  /^[0-9A-Za-z_.-]{1,64}$/,
  "must be the Phone number ID from Meta's WhatsApp settings (digits, at most 64 characters)",
);
const RegisterNumber = z.object({
  phone_number_id: PhoneNumberId,
  display_phone_number: DisplayNumber.optional(),
  app_secret: ProviderSecret.describe("The Meta app's App secret (App settings > Basic)"),
  verify_token: ProviderSecret.optional().describe(
    "Your own verify token (e.g. the one your Meta app already uses for another number); omitted: generated",
  ),
}).strict().openapi({
  example: {
    phone_number_id: "106540352242922",
    display_phone_number: "+1 555 078 3881",
    app_secret: "0c2d9f7e5b3a18c64e2f0a9b7d5c9c1f",
  },
});
const UpdateNumber = z.object({
  display_phone_number: DisplayNumber.nullable().optional(),
  app_secret: ProviderSecret.optional(),
}).strict().refine((v) => Object.keys(v).length > 0, "nothing to change").openapi({
  example: { app_secret: "5a7e1c9d3b2f40e68a1c7d9e2b4f6a8c" },
});
const NewVerifyToken = z.object({ verify_token: ProviderSecret.optional() }).strict().openapi({
  example: {},
});

const provider = { provider: z.enum(PAYMENT_PROVIDERS) };
const id = { id: z.uuid() };
const REFUSAL = "API keys cannot see or change the organization's provider connections";

/** A new secret or verify token: 32 random bytes, base64url. */
const generated = (prefix: string) =>
  prefix + crypto.getRandomValues(new Uint8Array(32)).toBase64({ alphabet: "base64url", omitPadding: true });

/** Our SQL functions name the field a refused value belongs to in the hint. */
function fromConnectionSqlError(err: unknown): unknown {
  const e = err as { code?: string; message?: string; hint?: string } | null;
  const field = e?.hint ?? "body";
  if (e?.code === "22023") {
    return badRequest("invalid_request", `Invalid body: ${field}`, {
      fields: [{ field, message: e.message ?? "is not acceptable" }],
    });
  }
  if (e?.code === "23505") {
    return new AppError(409, "already_registered", e.message ?? "Already registered", {
      fields: [{ field, message: e.message ?? "is registered already" }],
    });
  }
  if (e?.code === "54000") return new AppError(409, "too_many_numbers", e.message ?? "Too many numbers");
  if (e?.code === "P0002") return notFound("not_found", "No such WhatsApp number");
  return err;
}
async function sqlErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fromConnectionSqlError(err);
  }
}

type NumberRow = Omit<z.infer<typeof WhatsAppNumber>, "status" | "last_message"> & {
  last_message_at: string | null;
  last_message_type: string | null;
  last_message_from: string | null;
};
const toNumber = (r: NumberRow): z.infer<typeof WhatsAppNumber> => ({
  id: r.id,
  phone_number_id: r.phone_number_id,
  display_phone_number: r.display_phone_number,
  app_secret_last4: r.app_secret_last4,
  status: r.verified_at ? "verified" : "pending",
  verified_at: r.verified_at,
  handshake_at: r.handshake_at,
  last_received_at: r.last_received_at,
  last_message: r.last_message_at
    ? { received_at: r.last_message_at, type: r.last_message_type ?? "unknown", from: r.last_message_from }
    : null,
  created_at: r.created_at,
});
const NUMBER_COLUMNS =
  `id, phone_number_id, display_phone_number, app_secret_last4, verified_at, handshake_at,
  last_received_at, last_message_at, last_message_type, last_message_from, created_at`;

async function numberOf(tx: Tx, numberId: string) {
  const [r] = await tx.unsafe<NumberRow[]>(
    `select ${NUMBER_COLUMNS} from private.whatsapp_numbers() where id = $1`,
    [numberId],
  );
  if (!r) throw notFound("not_found", "No such WhatsApp number");
  return toNumber(r);
}

type SecretRow = {
  provider: PaymentProvider;
  secret_set: boolean;
  secret_last4: string | null;
  set_at: string | null;
};
const secretState = (r: SecretRow) => ({ set: r.secret_set, last4: r.secret_last4, set_at: r.set_at });

/** Per provider: the newest verified payload, what waits for a replay, what was refused, the last failure. */
async function logSummaries(tx: Tx, organizationId: string) {
  const rows = await tx<
    {
      provider: string;
      last_received: z.infer<typeof LogSummary> | null;
      to_replay: number;
      refused_7d: number;
      last_failure: z.infer<typeof Failure> | null;
    }[]
  >`
    select p.provider,
      (select jsonb_build_object('id', l.id, 'event', l.event, 'status', l.status, 'received_at', l.received_at)
       from public.inbound_webhook_log l
       where l.organization_id = ${organizationId} and l.provider = p.provider and l.signature_valid
       order by l.received_at desc, l.id desc limit 1) as last_received,
      (select count(*)::int from (select 1 from public.inbound_webhook_log l
                                  where l.organization_id = ${organizationId} and l.provider = p.provider
                                    and l.status in ('failed', 'unmatched')
                                  limit 1000) x) as to_replay,
      (select coalesce(sum(l.deliveries), 0)::int from public.inbound_webhook_log l
       where l.organization_id = ${organizationId} and l.provider = p.provider
         and l.status in ('unverified', 'rejected')
         and l.last_received_at > now() - interval '7 days') as refused_7d,
      (select jsonb_build_object('status', l.status, 'error', l.error, 'received_at', l.last_received_at)
       from public.inbound_webhook_log l
       where l.organization_id = ${organizationId} and l.provider = p.provider
         and l.status in ('failed', 'unmatched', 'unverified', 'rejected')
         and l.received_at > now() - interval '7 days'
       order by l.last_received_at desc limit 1) as last_failure
    from (values ('checkout'), ('payments'), ('whatsapp')) p (provider)`;
  return new Map(rows.map((r) => [r.provider, r]));
}

/** The secret a provider's signatures are checked with (card payments fall back to the checkout one). */
async function effectiveSecret(deps: AppDeps, organizationId: string, p: PaymentProvider) {
  const [row] = await deps.sql<{ secret: string | null }[]>`
    select case when ${p} = 'payments' then coalesce(nullif(payments_webhook_secret, ''), webhook_secret)
                else webhook_secret end as secret
    from public.organization_settings where organization_id = ${organizationId}`;
  return row?.secret || null;
}

export const connectionRoutes: RouteFactory = (deps) => {
  const functionsUrl = deps.config?.functionsUrl;
  const urlOf = (fn: string, organizationId?: string) =>
    functionsUrl ? `${functionsUrl}/${fn}${organizationId ? `/${organizationId}` : ""}` : null;

  return [
    route(
      {
        method: "get",
        path: "/connections",
        summary: "The organization's provider connections",
        description: "For each provider: the URL to give it, whether its secret is set, the WhatsApp " +
          "numbers, the last payload received and recent failures.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        responses: { 200: { description: "Every connection", schema: Connections } },
      },
      async (c) => {
        const out = await asAdmin(deps, c, async (tx, { organizationId }) => {
          const secrets = await tx<SecretRow[]>`select * from private.inbound_secrets()`;
          const numbers = await tx.unsafe<NumberRow[]>(
            `select ${NUMBER_COLUMNS} from private.whatsapp_numbers()`,
          );
          const logs = await logSummaries(tx, organizationId);
          const failures = (p: string) => {
            const l = logs.get(p);
            return {
              to_replay: l?.to_replay ?? 0,
              refused_7d: l?.refused_7d ?? 0,
              last: l?.last_failure ?? null,
            };
          };
          const checkout = secrets.find((s) => s.provider === "checkout")!;
          const payment = (p: PaymentProvider) => {
            const s = secrets.find((x) => x.provider === p)!;
            return {
              provider: p,
              url: urlOf(RECEIVER[p].fn, organizationId),
              signature_header: RECEIVER[p].header,
              secret: {
                ...secretState(s),
                uses_checkout_secret: p === "payments" && !s.secret_set && checkout.secret_set,
              },
              last_received: logs.get(p)?.last_received ?? null,
              failures: failures(p),
            };
          };
          return {
            checkout: payment("checkout"),
            payments: payment("payments"),
            whatsapp: {
              callback_url: urlOf("messaging-webhook", organizationId),
              numbers: numbers.map(toNumber),
              failures: failures("whatsapp"),
            },
          };
        });
        return c.json(out);
      },
    ),
    route(
      {
        method: "post",
        path: "/connections/:provider/secret",
        summary: "Set or replace a payment provider's secret",
        description: "Write-only. Omit `secret` to have one generated: it is returned once, to enter in " +
          "the provider's dashboard.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: provider,
        body: SetSecret,
        responses: { 200: { description: "The secret's new state", schema: SecretResult } },
      },
      async (c) => {
        const p = c.req.valid("param").provider;
        const given = c.req.valid("json").secret;
        const secret = given ?? generated("whsec_");
        const row = await asAdmin(deps, c, (tx) =>
          sqlErrors(async () => {
            const [r] = await tx<SecretRow[]>`select * from private.set_inbound_secret(${p}, ${secret})`;
            return r!;
          }));
        return c.json({ provider: p, ...secretState(row), ...(given ? {} : { generated_secret: secret }) });
      },
    ),
    route(
      {
        method: "delete",
        path: "/connections/:provider/secret",
        summary: "Remove a payment provider's secret",
        description: "Its deliveries are refused until a new one is set.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: provider,
        responses: { 200: { description: "The secret's new state", schema: SecretResult } },
      },
      async (c) => {
        const p = c.req.valid("param").provider;
        const row = await asAdmin(deps, c, (tx) =>
          sqlErrors(async () => {
            const [r] = await tx<SecretRow[]>`select * from private.set_inbound_secret(${p}, null)`;
            return r!;
          }));
        return c.json({ provider: p, ...secretState(row) });
      },
    ),
    route(
      {
        method: "post",
        path: "/connections/:provider/test",
        summary: "Send a signed test event to the provider's receiver",
        description: "Through the real receiver, signed with the stored secret; the answer says what it did.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: provider,
        responses: {
          200: { description: "What the receiver answered (delivered or not)", schema: TestResult },
          409: { description: "No secret is set for this provider, so nothing can be signed" },
          503: { description: "The functions' URL is not configured, or the receiver did not answer" },
        },
      },
      async (c) => {
        const p = c.req.valid("param").provider;
        const organizationId = await asAdmin(deps, c, async (tx, { organizationId }) => {
          // The caller's own check (a live admin session), as for every connection change.
          await tx`select 1 from private.inbound_secrets() limit 1`;
          return organizationId;
        });
        const url = urlOf(RECEIVER[p].fn, organizationId);
        if (!url) {
          throw serviceUnavailable(
            "The functions' URL is not configured (SUPABASE_URL or SUPABASE_FUNCTIONS_URL)",
          );
        }
        // Read as the server: no user role may read a secret, and it never leaves this function.
        const secret = await effectiveSecret(deps, organizationId, p);
        if (!secret) {
          throw new AppError(
            409,
            "secret_not_set",
            "Set the provider's secret first: the test is signed with it",
          );
        }
        const body = JSON.stringify({
          event: "connection.test",
          id: `test_${crypto.randomUUID()}`,
          occurred_at: new Date().toISOString(),
          organization_id: organizationId,
          test: true,
        });
        let res: Response;
        try {
          res = await fetch(url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              [RECEIVER[p].header]: `sha256=${await hmacSha256Hex(secret, body)}`,
              "idempotency-key": `connection-test-${crypto.randomUUID()}`,
              "user-agent": "church-settings-connection-test",
            },
            body,
            redirect: "manual",
            signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
          });
        } catch {
          throw serviceUnavailable(`The ${RECEIVER[p].fn} function did not answer; retry later`);
        }
        const answer = await res.json().catch(() => null) as
          | { status?: string; log_id?: string; error?: { code?: string; message?: string } }
          | null;
        return c.json({
          delivered: res.status === 200 && typeof answer?.log_id === "string",
          status: res.status,
          outcome: typeof answer?.status === "string" ? answer.status : null,
          log_id: typeof answer?.log_id === "string" ? answer.log_id : null,
          error: answer?.error
            ? { code: String(answer.error.code ?? "error"), message: String(answer.error.message ?? "") }
            : res.status === 200
            ? null
            : { code: `http_${res.status}`, message: `The receiver answered ${res.status}` },
        });
      },
    ),
    route(
      {
        method: "post",
        path: "/connections/whatsapp/numbers",
        summary: "Register a WhatsApp business number",
        description: "Its phone-number id, the Meta app's secret, and a verify token (generated when " +
          "omitted) to enter in Meta's webhook settings.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        body: RegisterNumber,
        responses: {
          201: {
            description: "The number, with its verify token (shown only here)",
            schema: WhatsAppNumberWithToken,
          },
          409: { description: "This organization registered the number already, or has as many as it may" },
        },
      },
      async (c) => {
        const input = c.req.valid("json");
        const verifyToken = input.verify_token ?? generated("vt_");
        const number = await asAdmin(deps, c, (tx) =>
          sqlErrors(async () => {
            const [r] = await tx<{ id: string }[]>`
              select private.register_whatsapp_number(${input.phone_number_id}, ${
              input.display_phone_number ?? null
            },
                                                      ${input.app_secret}, ${verifyToken}) as id`;
            return await numberOf(tx, r!.id);
          }));
        return c.json({ ...number, verify_token: verifyToken }, 201);
      },
    ),
    route(
      {
        method: "patch",
        path: "/connections/whatsapp/numbers/:id",
        summary: "Change a number's display number or replace its app secret",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: id,
        body: UpdateNumber,
        responses: {
          200: { description: "The number", schema: WhatsAppNumber.openapi({ example: NUMBER_EXAMPLE }) },
          404: { description: "No such number in this organization" },
        },
      },
      async (c) => {
        const numberId = c.req.valid("param").id;
        const input = c.req.valid("json");
        const number = await asAdmin(deps, c, (tx) =>
          sqlErrors(async () => {
            await tx`select private.update_whatsapp_number(${numberId}, ${input.display_phone_number ?? null},
                                                           ${input.display_phone_number !== undefined},
                                                           ${input.app_secret ?? null})`;
            return await numberOf(tx, numberId);
          }));
        return c.json(number);
      },
    ),
    route(
      {
        method: "post",
        path: "/connections/whatsapp/numbers/:id/verify-token",
        summary: "Replace a number's verify token",
        description: "Generated when omitted. Meta's subscription handshake must happen again.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: id,
        body: NewVerifyToken,
        responses: {
          200: {
            description: "The number, with its new verify token (shown only here)",
            schema: WhatsAppNumberWithToken,
          },
          404: { description: "No such number in this organization" },
        },
      },
      async (c) => {
        const numberId = c.req.valid("param").id;
        const verifyToken = c.req.valid("json").verify_token ?? generated("vt_");
        const number = await asAdmin(deps, c, (tx) =>
          sqlErrors(async () => {
            await tx`select private.set_whatsapp_verify_token(${numberId}, ${verifyToken})`;
            return await numberOf(tx, numberId);
          }));
        return c.json({ ...number, verify_token: verifyToken });
      },
    ),
    route(
      {
        method: "delete",
        path: "/connections/whatsapp/numbers/:id",
        summary: "Remove a WhatsApp number",
        description: "Its conversations stay; bodies for it are refused from now on.",
        tag: "Connections",
        access: "user",
        refusal: REFUSAL,
        params: id,
        responses: {
          204: { description: "Removed" },
          404: { description: "No such number in this organization" },
        },
      },
      async (c) => {
        const numberId = c.req.valid("param").id;
        await asAdmin(
          deps,
          c,
          (tx) => sqlErrors(() => tx`select private.delete_whatsapp_number(${numberId})`),
        );
        return c.body(null, 204);
      },
    ),
  ];
};
