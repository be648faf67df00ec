// A refusal the guides quote must be one the code can say: a reader searches the guides for the text
// Webhook Logs or the API showed them. A troubleshooting heading once quoted "… resolves to a private
// address", which the target check had stopped saying (it says one sentence whatever the reason).
import { assert, assertEquals } from "./helpers/assert.ts";
import { documentationFiles, ROOT } from "./helpers/markdown.ts";
import {
  blockedAddressReason,
  checkTargetUrlSyntax,
  notPublicReason,
} from "../supabase/functions/_shared/webhook_targets.ts";

/** Every reason the target check gives, as the code words it (a sample host for the named one). */
function targetReasons(): string[] {
  const reasons = new Set<string>([notPublicReason("hooks.example.org")]);
  const urls = [
    "not a url",
    "http://hooks.example.org/",
    "https://user:pass@hooks.example.org/",
    `https://hooks.example.org/${"x".repeat(2100)}`,
    "https:///",
    "https://localhost/",
    "https://db.corp.internal/",
    "https://metadata.google.internal/",
  ];
  for (const allowPrivate of [false, true]) {
    for (const url of urls) {
      const v = checkTargetUrlSyntax(url, allowPrivate);
      if (!v.ok) reasons.add(v.reason);
    }
  }
  const addresses = [
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "169.254.1.1",
    "169.254.169.254",
    "127.0.0.1",
    "100.64.0.1",
    "10.0.0.1",
    "192.0.2.1",
    "192.31.196.1",
    "fc00::1",
    "fec0::1",
    "100::1",
    "2001:2::1",
    "2001::1",
    "2001:10::1",
    "2001:20::1",
    "64:ff9b:1::1",
    "::ffff:10.0.0.1",
  ];
  for (const allowPrivate of [false, true]) {
    for (const a of addresses) {
      const why = blockedAddressReason(a, allowPrivate);
      if (why) reasons.add(`address is ${why}`);
    }
  }
  return [...reasons];
}

/** Every message a refused target produces: in Webhook Logs (`target refused: …`) and from the API. */
export function refusalMessages(): string[] {
  return targetReasons().flatMap((r) => [`target refused: ${r}`, `Webhook URL refused: ${r}`]);
}

/** The refusals a Markdown text quotes in code spans; `…` and `<placeholder>` stand for any text. */
export function quotedRefusals(markdown: string): string[] {
  return [...markdown.matchAll(/`((?:target|Webhook URL) refused: [^`]*)`/g)].map((m) => m[1]!);
}

/** Whether a quote (its start: it may leave the rest of the message out) is something the code says. */
export function saysSomethingReal(quote: string, messages: string[]): boolean {
  const pattern = quote.split(/…|<[^>]+>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(
    ".*",
  );
  const re = new RegExp(`^${pattern}`);
  return messages.some((m) => re.test(m));
}

Deno.test("the check knows the real refusals and tells a made-up one", () => {
  const messages = refusalMessages();
  assert(
    messages.includes("target refused: hooks.example.org does not resolve to a public internet address"),
  );
  assert(messages.includes("target refused: address is private"), messages.join("\n"));
  assert(saysSomethingReal("target refused: … does not resolve to a public internet address", messages));
  assert(saysSomethingReal("target refused: <rule>", messages));
  assert(saysSomethingReal("target refused: … cloud metadata", messages));
  assertEquals(saysSomethingReal("target refused: … resolves to a private address", messages), false);
  assertEquals(
    quotedRefusals("## `target refused: … x`\n\nSee `Webhook URL refused: y` and `other`."),
    ["target refused: … x", "Webhook URL refused: y"],
  );
});

Deno.test("every refusal the documentation quotes is one the code produces", async () => {
  const messages = refusalMessages();
  const unknown: string[] = [];
  let quoted = 0;
  for (const file of await documentationFiles()) {
    const text = await Deno.readTextFile(new URL(file, ROOT));
    for (const quote of quotedRefusals(text)) {
      quoted++;
      if (!saysSomethingReal(quote, messages)) unknown.push(`${file}: \`${quote}\``);
    }
  }
  assert(quoted >= 3, `${quoted} quoted refusals found`);
  assertEquals(unknown, [], `quoted but never said; what the code says:\n${messages.join("\n")}`);
});
