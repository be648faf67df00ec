// The dispatcher's per-URL cache of the target syntax check (targets.ts): the same verdicts as
// checkTargetUrlSyntax, per policy, the origin/path undici is given, and a bounded size. The DNS check
// at connect time is not cached here (outbound_targets_test.ts and outbound_transport_test.ts cover it).
import { assert, assertEquals } from "./helpers/assert.ts";
import { checkTargetUrlSyntax } from "../supabase/functions/_shared/webhook_targets.ts";
import { TargetCache } from "../supabase/functions/webhook-dispatcher/targets.ts";

Deno.test("the cached verdict is the syntax check's, per policy, and the origin/path are the URL's", () => {
  const strict = new TargetCache(false);
  const dev = new TargetCache(true);
  const urls = [
    "https://hooks.example.com:8443/a/b?x=1&y=%20",
    "https://hooks.example.com/",
    "http://hooks.example.com/hook",
    "https://127.0.0.1/hook",
    "http://127.0.0.1:9999/hook",
    "https://0x7f.1/hook",
    "https://[::ffff:169.254.169.254]/x",
    "https://metadata.google.internal/x",
    "https://user:pw@hooks.example.com/x",
    "ftp://hooks.example.com/x",
    "not a url",
  ];
  for (const url of urls) {
    for (const [cache, allowPrivate] of [[strict, false], [dev, true]] as const) {
      // Twice: the first fills the cache, the second is answered from it.
      for (let i = 0; i < 2; i++) {
        const verdict = checkTargetUrlSyntax(url, allowPrivate);
        const target = cache.get(url);
        if (verdict.ok) {
          const parsed = new URL(url);
          assertEquals(target, {
            ok: true,
            origin: parsed.origin,
            path: `${parsed.pathname}${parsed.search}`,
          });
        } else {
          assertEquals(target, { ok: false, reason: verdict.reason }, `${url} allowPrivate=${allowPrivate}`);
        }
      }
    }
  }
  assertEquals(strict.get("https://hooks.example.com:8443/a/b?x=1&y=%20"), {
    ok: true,
    origin: "https://hooks.example.com:8443",
    path: "/a/b?x=1&y=%20",
  });
  assertEquals(
    strict.get("http://127.0.0.1:9999/hook").ok,
    false,
    "a dev verdict never leaks into production's",
  );
  assertEquals(dev.get("http://127.0.0.1:9999/hook").ok, true);
});

Deno.test("the cache answers repeat URLs from memory and starts over past 10,000 URLs", () => {
  const cache = new TargetCache(false);
  const first = cache.get("https://hooks.example.com/0");
  assert(cache.get("https://hooks.example.com/0") === first, "a repeat URL is not checked again");
  for (let i = 1; i < 10_000; i++) cache.get(`https://hooks.example.com/${i}`);
  assert(cache.get("https://hooks.example.com/0") === first, "10,000 URLs fit");
  cache.get("https://hooks.example.com/10000");
  const again = cache.get("https://hooks.example.com/0");
  assert(again !== first, "the 10,001st URL started the cache over");
  assertEquals(again, first);
});
