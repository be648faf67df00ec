// Our signatures, cut short wherever Webhook Logs would keep them: the headers we sent, and anything the
// receiver answers with (echo services return the request's headers in their body or their own headers).
// A signature has no expiry of its own, so a whole one in the logs would let whoever reads them replay
// that body to the receiver; its first characters are enough to tell two signatures apart. An endpoint's
// custom header values (an API key, a password) are shown only as their hint ("…abcd"), in the headers
// sent and wherever the receiver echoes them.
import { valueHint } from "../_shared/custom_headers.ts";

/** Signature headers keep this many characters of each value. */
export const SIGNATURE_SHOWN = 8;
const SIGNATURES = new Set(["x-webhook-signature", "x-webhook-signature-previous", "webhook-signature"]);

const mask = (v: string) => v.length > SIGNATURE_SHOWN ? `${v.slice(0, SIGNATURE_SHOWN)}…` : v;

/** A signature header as Webhook Logs keeps it; each Standard Webhooks entry ("v1,<base64>") keeps its version. */
const maskSignature = (name: string, value: string) =>
  name !== "webhook-signature" ? mask(value) : value.split(" ").map((e) => {
    const comma = /^v\d+,/.test(e) ? e.indexOf(",") + 1 : 0;
    return e.slice(0, comma) + mask(e.slice(comma));
  }).join(" ");

/**
 * The headers we send, as Webhook Logs shows them: every signature cut to its first characters, every
 * custom header (`custom`: their names, lower case) as its value's hint.
 */
export function maskedRequestHeaders(
  headers: Record<string, string>,
  custom?: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = SIGNATURES.has(name)
      ? maskSignature(name, value)
      : custom?.has(name.toLowerCase())
      ? valueHint(value)
      : value;
  }
  return out;
}

/** The signature values an attempt sent (the hex ones, and each Standard Webhooks entry's base64). */
export function sentSignatures(headers: Record<string, string>): string[] {
  const out: string[] = [];
  for (const name of SIGNATURES) {
    const value = headers[name];
    if (!value) continue;
    for (const entry of name === "webhook-signature" ? value.split(" ") : [value]) {
      const signature = entry.replace(/^v\d+,/, "");
      if (signature.length > SIGNATURE_SHOWN) out.push(signature);
    }
  }
  return out;
}

/**
 * `text` with every one of `signatures` in it cut to its first characters: as sent, with JSON's escaped
 * slash (`\/`, which some encoders write for base64's `/`), and a signature the excerpt's end cuts in
 * two (a long enough beginning of one would leave few characters to guess).
 */
export function maskEchoes(text: string, signatures: string[], customValues: readonly string[] = []): string {
  for (const value of customValues) text = maskValueEchoes(text, value);
  for (const signature of signatures) {
    for (const form of new Set([signature, signature.replaceAll("/", "\\/")])) {
      if (text.includes(form)) text = text.replaceAll(form, mask(signature));
    }
    // A cut one: the text ends with more than SIGNATURE_SHOWN characters of its beginning.
    const tail = text.slice(-(signature.length - 1));
    const start = signature.slice(0, SIGNATURE_SHOWN + 1);
    for (let i = tail.indexOf(start); i >= 0; i = tail.indexOf(start, i + 1)) {
      if (signature.startsWith(tail.slice(i))) {
        text = text.slice(0, text.length - (tail.length - i)) + mask(signature);
        break;
      }
    }
  }
  return text;
}

/** A custom value's shortest beginning that is masked where the text ends in it (an excerpt cut it). */
const CUT_VALUE_SHOWN = 4;

/**
 * `text` with a custom header's value replaced by its hint wherever it appears: as sent, and as JSON
 * writes it (an echo service's body: quotes and backslashes escaped, `/` maybe as `\/`); and a value the
 * excerpt's end cuts in two, once at least 4 of its characters are there.
 */
function maskValueEchoes(text: string, value: string): string {
  const hint = valueHint(value);
  const json = JSON.stringify(value).slice(1, -1);
  for (const form of new Set([value, json, json.replaceAll("/", "\\/")])) {
    if (text.includes(form)) text = text.replaceAll(form, hint);
  }
  const start = value.slice(0, CUT_VALUE_SHOWN);
  const tail = text.slice(-(value.length - 1));
  for (
    let i = tail.indexOf(start);
    i >= 0 && value.length > CUT_VALUE_SHOWN;
    i = tail.indexOf(start, i + 1)
  ) {
    if (value.startsWith(tail.slice(i))) {
      text = text.slice(0, text.length - (tail.length - i)) + hint;
      break;
    }
  }
  return text;
}
