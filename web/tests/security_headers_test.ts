// The settings UI's security headers, read where they are served: from the Vite dev server (npm run dev)
// and from the `_headers` file the production build writes for Netlify and Cloudflare Pages; and both
// served pages load in Chromium without a single Content-Security-Policy violation.
//
// The attack they answer: the session sits in localStorage (as the specification requires), so any
// injected script could read it; and a page that may be framed lets another site clickjack its delete
// and revoke buttons.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { startWebDev } from "../../scripts/dev-web.ts";
import { buildWeb, headersForEveryPath, launchBrowser, serveStatic } from "./helpers/browser.ts";
import type { Browser } from "playwright-core";

const opts = { sanitizeOps: false, sanitizeResources: false };
// Where the site's API lives: its only connect-src. Nothing needs to answer there for these tests.
const API = "http://127.0.0.1:9";

/** The directives of a policy, by name. */
function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp.split(";").map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map((
      d,
    ) => [d[0]!, d.slice(1)]),
  );
}

/** What every policy of the site must say, whoever serves it. */
function assertStrict(headers: Record<string, string | null>, where: string) {
  const csp = directives(headers["content-security-policy"] ?? "");
  assertEquals(csp.get("default-src"), ["'none'"], `${where}: default-src`);
  for (const name of ["script-src", "style-src"]) {
    const sources = csp.get(name) ?? [];
    assert(sources.includes("'self'"), `${where}: ${name} 'self'`);
    assert(
      sources.every((s) => s === "'self'" || /^'nonce-[A-Za-z0-9+/=]{16,}'$/.test(s)),
      `${where}: ${name} is the site itself (and a nonce), no 'unsafe-inline' or 'unsafe-eval': ${sources}`,
    );
  }
  assertEquals(csp.get("connect-src")?.filter((s) => !s.startsWith("ws://")), [
    API,
  ], `${where}: connect-src`);
  assertEquals(
    csp.get("frame-ancestors"),
    ["'none'"],
    `${where}: frame-ancestors`,
  );
  assertEquals(csp.get("base-uri"), ["'none'"], `${where}: base-uri`);
  assertEquals(csp.get("object-src"), ["'none'"], `${where}: object-src`);
  assertEquals(headers["x-frame-options"], "DENY", `${where}: X-Frame-Options`);
  assertEquals(
    headers["x-content-type-options"],
    "nosniff",
    `${where}: X-Content-Type-Options`,
  );
  assertEquals(
    headers["referrer-policy"],
    "no-referrer",
    `${where}: Referrer-Policy`,
  );
}

const lower = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));

/** Loads `url` in Chromium; every CSP violation the page reports (events and console), and its heading. */
async function violations(
  browser: Browser,
  url: string,
): Promise<{ found: string[]; heading: string }> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const found: string[] = [];
    page.on("console", (m: { text(): string }) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) {
        found.push(m.text());
      }
    });
    page.on("pageerror", (e: Error) => found.push(`pageerror: ${e.message}`));
    await page.addInitScript(() =>
      addEventListener(
        "securitypolicyviolation",
        (e) =>
          console.error(
            `Refused to load (CSP): ${(e as unknown as { violatedDirective: string }).violatedDirective}`,
          ),
      )
    );
    await page.goto(url);
    const heading = await page.getByRole("heading", { level: 1 }).first()
      .textContent({ timeout: 15_000 }).catch(() => "");
    await page.waitForTimeout(300);
    return { found, heading: heading ?? "" };
  } finally {
    await context.close();
  }
}

let browser: Browser;

Deno.test("setup: Chromium", opts, async () => {
  browser = await launchBrowser();
});

Deno.test(
  "the production build writes _headers (Netlify, Cloudflare Pages) with a strict policy; Chromium loads it without a violation",
  opts,
  async () => {
    const dir = await buildWeb(API, "anon-key-for-the-headers-test");
    const site = serveStatic(dir);
    try {
      const file = headersForEveryPath(
        await Deno.readTextFile(`${dir}/_headers`),
      );
      assertStrict(lower(file), "web/dist/_headers");
      // Hosts that set no headers still get the policy's script and connect rules from the page itself.
      const html = await Deno.readTextFile(`${dir}/index.html`);
      assertMatch(
        html,
        /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;self&#39;;/,
      );
      assert(
        !/<script(?![^>]*\bsrc=)[^>]*>/.test(html),
        "no inline script in the built page",
      );

      const served = await fetch(`${site.url}/settings/integrations/webhooks`);
      await served.body?.cancel();
      assertStrict(Object.fromEntries(served.headers), "the static host");
      const { found, heading } = await violations(browser, `${site.url}/auth`);
      assertEquals(found, []);
      assertEquals(heading, "Sign in", "the app ran under the policy");
    } finally {
      await site.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "the dev server (npm run dev) sends the same headers, its hot-reload scripts carrying the nonce; no violation",
  opts,
  async () => {
    const free = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (free.addr as Deno.NetAddr).port;
    free.close();
    const web = await startWebDev(API, "anon-key-for-the-headers-test", port);
    assert(web, "vite started");
    try {
      const res = await fetch(`${web.url}/auth`);
      const html = await res.text();
      const headers = Object.fromEntries(res.headers);
      assertStrict(headers, "the dev server");
      const nonce = directives(headers["content-security-policy"]!).get(
        "script-src",
      )!.find((s) => s.startsWith("'nonce-"))!
        .slice(7, -1);
      const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]!);
      assert(
        scripts.some((attrs) => attrs.includes('src="/@vite/client"')),
        `the dev page loads Vite's hot-reload client: ${scripts}`,
      );
      // An inline script (a hot-reload preamble; Preact's Prefresh needs none) must carry the nonce.
      const inline = scripts.filter((attrs) => !/\bsrc=/.test(attrs));
      assert(
        inline.every((attrs) => attrs.includes(`nonce="${nonce}"`)),
        `every inline script has the nonce: ${inline}`,
      );
      const { found, heading } = await violations(browser, `${web.url}/auth`);
      assertEquals(found, []);
      assertEquals(heading, "Sign in", "the app ran under the policy");
    } finally {
      await web.stop();
    }
  },
);

Deno.test("teardown", opts, async () => {
  await browser?.close();
});
