// Outbound signatures (signing.ts) against independent references: node:crypto's createHmac for the
// prepared-key HMAC, the standardwebhooks library for the Standard Webhooks headers.
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { assertEquals } from "./helpers/assert.ts";
import { PreparedHmac, signedHeaders } from "../supabase/functions/webhook-dispatcher/signing.ts";

const bytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));

Deno.test("the prepared HMAC is HMAC-SHA256 for keys shorter than, equal to and longer than a block", () => {
  // 64 bytes is SHA-256's block: longer keys are hashed first (RFC 2104), shorter ones zero-padded.
  for (const keyLength of [0, 1, 32, 63, 64, 65, 200]) {
    const key = bytes(keyLength);
    const mac = new PreparedHmac(key);
    for (const body of [bytes(0), bytes(312), bytes(60_000)]) {
      const expected = createHmac("sha256", key).update("id.123.").update(body).digest("hex");
      assertEquals(mac.digest("id.123.", body).toHex(), expected, `key of ${keyLength} bytes`);
      // Reused: each digest starts from the prepared state, not from the previous message.
      assertEquals(mac.digest("id.123.", body).toHex(), expected, `again, key of ${keyLength} bytes`);
    }
  }
});

Deno.test("during a rotation both secrets sign, in both schemes, and receivers' libraries accept each", () => {
  const current = `whsec_${bytes(32).toBase64()}`;
  const previous = "an organization's own secret, ünïcode";
  const body = new TextEncoder().encode(JSON.stringify({ type: "member.created", data: { n: 1 } }));
  const headers = signedHeaders({
    eventId: "evt_1",
    eventType: "member.created",
    secret: current,
    previousSecret: previous,
    body,
    timestamp: Math.floor(Date.now() / 1000),
  });
  assertEquals(headers["x-webhook-signature"], createHmac("sha256", current).update(body).digest("hex"));
  assertEquals(
    headers["x-webhook-signature-previous"],
    createHmac("sha256", previous).update(body).digest("hex"),
  );
  const text = new TextDecoder().decode(body);
  new Webhook(current).verify(text, headers);
  new Webhook(new TextEncoder().encode(previous).toBase64()).verify(text, headers);
  assertEquals(headers["webhook-signature"]!.split(" ").length, 2);
});
