// The Python and PHP functions for the hex signature (x-webhook-signature) in docs/receiving-webhooks.md,
// run exactly as the guide shows them, must accept what the dispatcher really sends and refuse what it
// did not: each case below is signed by the dispatcher's own signing code (webhook-dispatcher/signing.ts),
// then changed the way an attacker would change it. (The guide's four receivers, on Standard Webhooks'
// headers, are run against real deliveries by tests/docs_receivers_test.ts.)
import { assert, assertEquals } from "./helpers/assert.ts";
import { codeBlocks, ROOT } from "./helpers/markdown.ts";
import { signedHeaders } from "../supabase/functions/webhook-dispatcher/signing.ts";

interface Case {
  name: string;
  secret: string;
  body: string;
  headers: Record<string, string>;
  /** The expected answer of verify(secret, body, x-webhook-signature). */
  hex: boolean;
}

const WHSEC = "whsec_" + btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const OWN = "our-church-webhook-secret-2026";
const BODY = JSON.stringify({ id: "5b0f0c55-3f3a-4bde-9a9e-1f2a4c8e9d10", type: "member.created", data: {} });

function signed(secret: string, opts: { previous?: string; age?: number; body?: string } = {}) {
  return signedHeaders({
    eventId: "5b0f0c55-3f3a-4bde-9a9e-1f2a4c8e9d10",
    eventType: "member.created",
    secret,
    previousSecret: opts.previous,
    body: new TextEncoder().encode(opts.body ?? BODY),
    timestamp: Math.floor(Date.now() / 1000) - (opts.age ?? 0),
  });
}

function cases(): Case[] {
  const rotated = signed(WHSEC, { previous: OWN });
  return [
    {
      name: "generated secret",
      secret: WHSEC,
      body: BODY,
      headers: signed(WHSEC),
      hex: true,
    },
    {
      name: "organization's own secret",
      secret: OWN,
      body: BODY,
      headers: signed(OWN),
      hex: true,
    },
    {
      name: "during a rotation, the previous secret",
      secret: OWN,
      body: BODY,
      headers: { ...rotated, "x-webhook-signature": rotated["x-webhook-signature-previous"]! },
      hex: true,
    },
    {
      name: "tampered body",
      secret: WHSEC,
      body: BODY.replace("member.created", "member.lost"),
      headers: signed(WHSEC),
      hex: false,
    },
    {
      name: "wrong secret",
      secret: OWN + "x",
      body: BODY,
      headers: signed(OWN),
      hex: false,
    },
    {
      name: "replayed ten minutes later",
      secret: WHSEC,
      body: BODY,
      headers: signed(WHSEC, { age: 600 }),
      hex: true, // the hex scheme signs the body only: it cannot tell a replay (the guide says so)
    },
    {
      name: "no signature",
      secret: WHSEC,
      body: BODY,
      headers: { ...signed(WHSEC), "x-webhook-signature": "" },
      hex: false,
    },
  ];
}

async function guideBlocks(lang: string): Promise<string[]> {
  const guide = await Deno.readTextFile(new URL("docs/receiving-webhooks.md", ROOT));
  const section = guide.slice(guide.indexOf("## The hex signature"), guide.indexOf("## Try it locally"));
  return codeBlocks(section).filter((b) => b.lang === lang).map((b) => b.text);
}

async function installed(cmd: string): Promise<boolean> {
  try {
    return (await new Deno.Command(cmd, { args: ["--version"], stdout: "null", stderr: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

/** Runs `program` with the cases as JSON on stdin; it prints one JSON array of answers. */
async function answers(cmd: string, args: string[], program: string): Promise<boolean[]> {
  const dir = await Deno.makeTempDir({ prefix: "verify-snippet-" });
  try {
    const file = `${dir}/snippet`;
    await Deno.writeTextFile(file, program);
    const child = new Deno.Command(cmd, {
      args: [...args, file],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
      .spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(cases())));
    await writer.close();
    const out = await child.output();
    const d = new TextDecoder();
    assert(out.success, `${cmd} failed:\n${d.decode(out.stderr)}`);
    return JSON.parse(d.decode(out.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const expected = () => cases().map((c) => c.hex);

Deno.test({
  name: "the guide's Python verifies real signatures and refuses forged and unsigned ones",
  ignore: !(await installed("python3")),
  async fn() {
    const blocks = await guideBlocks("python");
    assertEquals(blocks.length, 1, "one hex function");
    const harness = `
import json, sys
print(json.dumps([verify(c["secret"], c["body"].encode(), c["headers"].get("x-webhook-signature"))
                  for c in json.load(sys.stdin)]))
`;
    assertEquals(await answers("python3", [], blocks[0] + "\n" + harness), expected());
  },
});

Deno.test({
  name: "the guide's PHP verifies real signatures and refuses forged and unsigned ones",
  ignore: !(await installed("php")),
  async fn() {
    const [functions] = await guideBlocks("php");
    assert(functions?.startsWith("<?php"), "the PHP block holds the function");
    const harness = `
$out = [];
foreach (json_decode(stream_get_contents(STDIN), true) as $c) {
    $out[] = verify($c['secret'], $c['body'], $c['headers']['x-webhook-signature'] ?? null);
}
echo json_encode($out);
`;
    assertEquals(await answers("php", [], functions + "\n" + harness), expected());
  },
});
