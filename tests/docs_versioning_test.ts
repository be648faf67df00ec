// One version number for what integrators depend on (docs/versioning.md): the configuration API's
// OpenAPI version, the newest entry of CHANGELOG.md, and the major version in the dispatcher's user-agent
// must agree, so a release cannot change one and forget the others.
import { assert, assertEquals } from "./helpers/assert.ts";
import { ROOT } from "./helpers/markdown.ts";
import { API_VERSION } from "../supabase/functions/webhooks/app.ts";
import { signedHeaders } from "../supabase/functions/webhook-dispatcher/signing.ts";

Deno.test("CHANGELOG.md's newest version, the OpenAPI document's and the user-agent's major agree", async () => {
  const changelog = await Deno.readTextFile(new URL("CHANGELOG.md", ROOT));
  const newest = changelog.match(/^## (\d+\.\d+\.\d+)\b/m)?.[1];
  assertEquals(newest, API_VERSION, "the newest CHANGELOG.md entry is the API's version");
  const openapi = JSON.parse(await Deno.readTextFile(new URL("docs/webhooks-openapi.json", ROOT)));
  assertEquals(openapi.info.version, API_VERSION, "docs/webhooks-openapi.json is current (npm run openapi)");
  const agent = signedHeaders({
    eventId: "e",
    eventType: "member.created",
    secret: "whsec_" + btoa("0123456789abcdef0123456789abcdef"),
    body: new Uint8Array(),
    timestamp: 0,
  })["user-agent"];
  assertEquals(agent, `church-integration-webhooks/${API_VERSION.split(".")[0]}`);
});

Deno.test("every version heading of CHANGELOG.md is semantic and newest first", async () => {
  const changelog = await Deno.readTextFile(new URL("CHANGELOG.md", ROOT));
  const versions = [...changelog.matchAll(/^## (\S+)/gm)].map((m) => m[1]!);
  assert(versions.length > 0, "CHANGELOG.md has at least one version");
  const parsed = versions.map((v) => {
    assert(/^\d+\.\d+\.\d+$/.test(v), `${v} is a semantic version`);
    return v.split(".").map(Number);
  });
  for (let i = 1; i < parsed.length; i++) {
    const [a, b] = [parsed[i - 1]!, parsed[i]!];
    const cmp = a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
    assert(cmp > 0, `${versions[i - 1]} comes before the older ${versions[i]}`);
  }
});
