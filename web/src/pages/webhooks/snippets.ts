// What an administrator hands to whoever writes the receiving side: two ways to check a delivery.
export function hexSnippet(): string {
  return `// Node.js: check x-webhook-signature (hex HMAC-SHA256 of the raw body)
import { createHmac, timingSafeEqual } from "node:crypto";

// rawBody: the request body exactly as received (bytes), before any JSON parsing.
export function verify(rawBody, headers, secret = process.env.WEBHOOK_SECRET) {
  const expected = Buffer.from(createHmac("sha256", secret).update(rawBody).digest("hex"));
  // During a secret rotation the old secret signs too (x-webhook-signature-previous).
  return [headers["x-webhook-signature"], headers["x-webhook-signature-previous"]]
    .filter(Boolean)
    .some((sig) => {
      const given = Buffer.from(String(sig));
      // Constant time: never compare signatures with === .
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
// Answer 401 when verify(...) is false.`;
}

export function standardSnippet(): string {
  return `// Any language with a Standard Webhooks library (npm: standardwebhooks)
import { Webhook } from "standardwebhooks";

const wh = new Webhook(process.env.WEBHOOK_SECRET); // the whsec_... secret
// Throws when the signature (webhook-signature) or the timestamp is wrong: answer 401 then.
const event = wh.verify(rawBody, headers); // headers: webhook-id, webhook-timestamp, webhook-signature`;
}
