// Target safety: endpoint URLs that are not https in production, or that are or resolve to loopback,
// private, link-local, CGNAT or cloud-metadata addresses (IPv4 and IPv6), are refused when saved and
// again when sent; WEBHOOKS_ALLOW_PRIVATE_TARGETS=true lets loopback and http through for development.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { closeSql, createTenant, sql } from "./helpers/db.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { createEndpoint, deliveriesOf, retireEndpoints, testEngine } from "./helpers/outbound.ts";
import {
  blockedAddressReason,
  checkTargetUrl,
  checkTargetUrlSyntax,
} from "../supabase/functions/_shared/webhook_targets.ts";

const publicDns = (map: Record<string, string[]>) => (host: string) => {
  const found = map[host];
  return found ? Promise.resolve(found) : Promise.reject(new Error(`NXDOMAIN ${host}`));
};

Deno.test("address ranges: private, loopback, link-local, CGNAT, metadata, in IPv4 and IPv6 forms", () => {
  const blocked = [
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.255",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "168.63.129.16",
    "::",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a9fe:a9fe",
    "::ffff:10.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "2002:7f00:1::",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1%eth0",
    "fec0::1",
    "ff02::1",
    "fd00:ec2::254",
    "2001:db8::1",
  ];
  for (const a of blocked) assert(blockedAddressReason(a) !== null, `${a} must be refused`);
  for (
    const a of ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]
  ) {
    assertEquals(blockedAddressReason(a), null, `${a} is public`);
  }
});

Deno.test("checkTargetUrl in production: https to public addresses only, after resolving the host", async () => {
  const dns = publicDns({
    "hooks.example.org": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "rebind.example.org": ["93.184.215.14", "10.0.0.7"],
    "v6private.example.org": ["fd00::5"],
    "mapped.example.org": ["::ffff:169.254.169.254"],
  });
  const prod = { allowPrivate: false, resolve: dns };
  const ok = await checkTargetUrl("https://hooks.example.org/church?x=1", prod);
  assert(ok.ok, "a public https target is accepted");
  const refused: [string, RegExp][] = [
    ["http://hooks.example.org/", /https/],
    ["ftp://hooks.example.org/", /https/],
    ["https://user:pw@hooks.example.org/", /credentials/],
    ["https://127.0.0.1/", /loopback/],
    ["https://2130706433/", /loopback/],
    ["https://0x7f.1/", /loopback/],
    ["https://[::1]/", /loopback/],
    ["https://[::ffff:127.0.0.1]/", /loopback/],
    ["https://169.254.169.254/latest/meta-data/", /metadata|link-local/],
    ["https://100.100.100.200/", /carrier-grade/],
    ["https://localhost/", /loopback/],
    ["https://api.localhost/", /loopback/],
    ["https://metadata.google.internal/", /internal/],
    // What a name resolves to is never told apart: the same words for a private, a unique local, a
    // metadata address and no address at all.
    ["https://rebind.example.org/", /^rebind\.example\.org does not resolve to a public internet address$/],
    [
      "https://v6private.example.org/",
      /^v6private\.example\.org does not resolve to a public internet address$/,
    ],
    ["https://mapped.example.org/", /^mapped\.example\.org does not resolve to a public internet address$/],
    ["https://nowhere.example.org/", /^nowhere\.example\.org does not resolve to a public internet address$/],
    ["not a url", /valid URL/],
  ];
  for (const [url, why] of refused) {
    const v = await checkTargetUrl(url, prod);
    assert(!v.ok, `${url} must be refused`);
    if (!v.ok) assertMatch(v.reason, why, url);
  }
});

Deno.test("with WEBHOOKS_ALLOW_PRIVATE_TARGETS, loopback and http are allowed (still no credentials)", async () => {
  assert((await checkTargetUrl("http://127.0.0.1:8080/hook", { allowPrivate: true })).ok);
  assert(checkTargetUrlSyntax("http://localhost:3000/x", true).ok);
  assert(!checkTargetUrlSyntax("http://a:b@127.0.0.1/", true).ok);
  assert(!checkTargetUrlSyntax("file:///etc/passwd", true).ok);
});

Deno.test("an unsupported scheme is refused with the rule in force: http or https in development, https else", () => {
  for (const url of ["ftp://example.org/hook", "file:///etc/passwd", "ws://127.0.0.1:8080/"]) {
    assertEquals(checkTargetUrlSyntax(url, true), { ok: false, reason: "scheme must be http or https" }, url);
    assertEquals(checkTargetUrlSyntax(url, false), { ok: false, reason: "scheme must be https" }, url);
  }
  assertEquals(checkTargetUrlSyntax("http://example.org/hook", false), {
    ok: false,
    reason: "scheme must be https",
  });
});

Deno.test("the database refuses malformed endpoint URLs and unknown event types when saved", async () => {
  const tenant = await createTenant();
  for (
    const url of [
      "ftp://x.org/",
      "https://user@x.org/",
      "https:///nohost",
      "javascript:alert(1)",
      "https://x.org/a b",
    ]
  ) {
    const err = await createEndpoint(tenant.organizationId, url, ["member.created"]).then(
      () => null,
      (e) => e,
    );
    assert(err, `${url} must be refused`);
  }
  const bad = await createEndpoint(tenant.organizationId, "https://x.org/", ["member.deleted"]).then(
    () => null,
    (e) => e,
  );
  assert(bad, "unknown event type refused");
  const none = await createEndpoint(tenant.organizationId, "https://x.org/", []).then(() => null, (e) => e);
  assert(none, "at least one event");
});

Deno.test("at send time a private target is refused when private targets are not allowed", async () => {
  const tenant = await createTenant();
  const receiver = await startReceiver();
  const ep = await createEndpoint(tenant.organizationId, `${receiver.url}/hook`, ["member.created"]);
  try {
    await sql()`insert into public.members (organization_id, first_name) values (${tenant.organizationId}, 'x')`;
    await testEngine({ allowPrivateTargets: false }).run({ stopWhenIdle: true });
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(receiver.requests.length, 0, "nothing reached the loopback receiver");
    const [d] = await deliveriesOf(ep.id);
    assertEquals(d!.status, "retrying");
    assertMatch(d!.last_error ?? "", /^target refused: scheme must be https/);
  } finally {
    await retireEndpoints(ep.id);
    await receiver.close();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
