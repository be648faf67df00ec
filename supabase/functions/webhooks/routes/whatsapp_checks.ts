// Connections > WhatsApp: the two checks an admin runs on a registered number, performed here so its app
// secret and verify token never reach the browser. "Send a signed test" posts a body in Meta's shape,
// signed as Meta signs (X-Hub-Signature-256 over the raw bytes with the app secret), to the organization's
// own messaging-webhook URL; its change is marked as a test (CONNECTION_TEST_MARK), so the receiver
// verifies and logs it and stores no message. "Check the handshake" performs Meta's subscription GET
// (hub.mode=subscribe, hub.verify_token, hub.challenge) against the same URL and says whether the challenge
// came back; it carries the replay secret, so the receiver does not record it as Meta's.
// People only, admins only, as every connection route.
// @see docs/whatsapp.md#check-a-number-from-the-settings-page
import { z } from "zod";
import type { AppDeps } from "../../_shared/app.ts";
import { notFound, serviceUnavailable } from "../../_shared/errors.ts";
import { hmacSha256Hex } from "../../_shared/hmac.ts";
import { CONNECTION_TEST_MARK } from "../../_shared/inbound/shapes.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";

const CHECK_TIMEOUT_MS = 10_000;
const REFUSAL = "API keys cannot see or change the organization's provider connections";
const id = { id: z.uuid() };

const Answer = z.object({ code: z.string(), message: z.string() }).nullable();
const NumberTestResult = z.object({
  delivered: z.boolean().describe(
    "The receiver verified the signature with the number's app secret and logged it",
  ),
  status: z.number().int().describe("The HTTP status the receiver answered"),
  log_id: z.uuid().nullable().describe("The test's entry in the inbound log (its event is connection.test)"),
  error: Answer,
}).openapi({
  example: { delivered: true, status: 200, log_id: "60106e03-4c1a-4d8e-9a37-0f2b8c1d2e3f", error: null },
});
const HandshakeResult = z.object({
  echoed: z.boolean().describe("The URL answered 200 with the challenge, as Meta requires"),
  status: z.number().int().describe("The HTTP status the URL answered"),
  error: Answer,
}).openapi({ example: { echoed: true, status: 200, error: null } });

/** The number (of the caller's organization, checked by the caller's own SQL) and its secrets. */
async function numberWithSecrets(deps: AppDeps, c: Parameters<typeof asAdmin>[1], numberId: string) {
  const { organizationId, number } = await asAdmin(deps, c, async (tx, { organizationId }) => {
    const [n] = await tx<{ phone_number_id: string; display_phone_number: string | null }[]>`
      select phone_number_id, display_phone_number from private.whatsapp_numbers() where id = ${numberId}`;
    if (!n) throw notFound("not_found", "No such WhatsApp number");
    return { organizationId, number: n };
  });
  // Read as the server: no user role may read a secret, and it never leaves this function.
  const [s] = await deps.sql<{ app_secret: string; verify_token: string }[]>`
    select s.app_secret, s.verify_token
    from public.messaging_account_secrets s join public.messaging_accounts a on a.id = s.account_id
    where a.id = ${numberId} and a.organization_id = ${organizationId}`;
  if (!s) throw notFound("not_found", "No such WhatsApp number");
  const base = deps.config?.functionsUrl;
  if (!base) {
    throw serviceUnavailable("The functions' URL is not configured (SUPABASE_URL or SUPABASE_FUNCTIONS_URL)");
  }
  return { number, secrets: s, url: `${base}/messaging-webhook/${organizationId}` };
}

/** What the receiver said, as an error when it was not the expected answer. */
function errorOf(status: number, answer: unknown): z.infer<typeof Answer> {
  const e = (answer as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (e) return { code: String(e.code ?? "error"), message: String(e.message ?? "") };
  return { code: `http_${status}`, message: `The receiver answered ${status}` };
}

/** Meta's documented "messages" change with one text message, as its dashboard's Test button sends. */
export function testBody(phoneNumberId: string, displayPhoneNumber: string | null, now = new Date()) {
  const from = "15550100000";
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [{
      id: "0",
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: (displayPhoneNumber ?? "").replace(/\D/g, "") || phoneNumberId,
            phone_number_id: phoneNumberId,
          },
          contacts: [{ profile: { name: "Connection test" }, wa_id: from }],
          messages: [{
            from,
            id: `wamid.connection-test-${crypto.randomUUID()}`,
            timestamp: String(Math.floor(now.getTime() / 1000)),
            type: "text",
            text: { body: "A signed test from the Connections page" },
          }],
          [CONNECTION_TEST_MARK]: true,
        },
      }],
    }],
  });
}

export const whatsappCheckRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "post",
      path: "/connections/whatsapp/numbers/:id/test",
      summary: "Send a signed test message for a WhatsApp number",
      description: "A body in Meta's shape, signed with the number's app secret as Meta signs " +
        "(`X-Hub-Signature-256`), sent to the organization's messaging-webhook URL. Verified and logged " +
        "(event `connection.test`), stored as no message, and the number's status is left as it is.",
      tag: "Connections",
      access: "user",
      refusal: REFUSAL,
      params: id,
      responses: {
        200: { description: "What the receiver answered (delivered or not)", schema: NumberTestResult },
        404: { description: "No such number in this organization" },
        503: { description: "The functions' URL is not configured, or the receiver did not answer" },
      },
    },
    async (c) => {
      const { number, secrets, url } = await numberWithSecrets(deps, c, c.req.valid("param").id);
      const body = testBody(number.phone_number_id, number.display_phone_number);
      let res: Response;
      try {
        res = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-hub-signature-256": `sha256=${await hmacSha256Hex(secrets.app_secret, body)}`,
            "user-agent": "church-settings-connection-test",
          },
          body,
          redirect: "manual",
          signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
        });
      } catch {
        throw serviceUnavailable("The messaging-webhook function did not answer; retry later");
      }
      const answer = await res.json().catch(() => null) as { status?: unknown; log_ids?: unknown } | null;
      const logId = Array.isArray(answer?.log_ids) && typeof answer.log_ids[0] === "string"
        ? answer.log_ids[0]
        : null;
      const delivered = res.status === 200 && answer?.status === "test" && logId !== null;
      return c.json({
        delivered,
        status: res.status,
        log_id: logId,
        error: delivered ? null : errorOf(res.status, answer),
      });
    },
  ),
  route(
    {
      method: "post",
      path: "/connections/whatsapp/numbers/:id/handshake",
      summary: "Check Meta's subscription handshake for a WhatsApp number",
      description: "Performs Meta's verification request against the organization's messaging-webhook URL " +
        "(`GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…` with the number's verify token) " +
        "and says whether the challenge came back. Not recorded as Meta's handshake.",
      tag: "Connections",
      access: "user",
      refusal: REFUSAL,
      params: id,
      responses: {
        200: { description: "Whether the URL echoed the challenge", schema: HandshakeResult },
        404: { description: "No such number in this organization" },
        503: { description: "The functions' URL is not configured, or the receiver did not answer" },
      },
    },
    async (c) => {
      const { secrets, url } = await numberWithSecrets(deps, c, c.req.valid("param").id);
      const challenge = String(crypto.getRandomValues(new Uint32Array(1))[0]);
      const query = new URLSearchParams({
        "hub.mode": "subscribe",
        "hub.verify_token": secrets.verify_token,
        "hub.challenge": challenge,
      });
      let res: Response;
      try {
        res = await fetch(`${url}?${query}`, {
          headers: {
            "user-agent": "church-settings-handshake-check",
            ...(deps.config.replaySecret ? { authorization: `Bearer ${deps.config.replaySecret}` } : {}),
          },
          redirect: "manual",
          signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
        });
      } catch {
        throw serviceUnavailable("The messaging-webhook function did not answer; retry later");
      }
      const text = (await res.text().catch(() => "")).slice(0, 1024);
      const echoed = res.status === 200 && text === challenge;
      let answer: unknown = null;
      try {
        answer = JSON.parse(text);
      } catch { /* not JSON: the status says it */ }
      return c.json({ echoed, status: res.status, error: echoed ? null : errorOf(res.status, answer) });
    },
  ),
];
