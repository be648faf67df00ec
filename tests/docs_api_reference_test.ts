// docs/api/index.html, the rendered reference of the configuration API, must be what the pinned renderer
// makes of docs/webhooks-openapi.json now, and must load nothing from the network when opened: it is
// read from a checkout or served as is, by people who may be offline or behind a strict proxy.
import { assert, assertEquals } from "./helpers/assert.ts";
import { API_REFERENCE, renderApiReference } from "../scripts/gen-docs.ts";
import { CHROMIUM, launchBrowser } from "../web/tests/helpers/browser.ts";

const LOCAL = /^(file|data|blob|about):/;

Deno.test("docs/api/index.html is rendered from the current OpenAPI document (run `npm run docs`)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "api-reference-" });
  try {
    const fresh = new URL(`file://${dir}/index.html`);
    await renderApiReference(fresh);
    const committed = await Deno.readTextFile(API_REFERENCE);
    // Compared as text but reported briefly: the file is 2.5 MB of mostly inlined JavaScript.
    assert(committed === await Deno.readTextFile(fresh), "docs/api/index.html is stale: run `npm run docs`");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the API reference inlines its scripts and forbids every fetch by policy", async () => {
  const html = await Deno.readTextFile(API_REFERENCE);
  assert(
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/.test(html),
    "the page carries a Content-Security-Policy that allows no fetch (scripts/docs/api-reference.hbs)",
  );
  const external = [...html.matchAll(/<(script|link|img|iframe)\b[^>]*\b(src|href)="([^"]*)"/g)]
    .map((m) => m[3]!)
    .filter((url) => !url.startsWith("#") && !LOCAL.test(url));
  assertEquals(external, [], "no element of the page loads a URL");
  assert(html.includes("__redoc_definition"), "the OpenAPI document is embedded");
});

let chromium = true;
try {
  await Deno.stat(CHROMIUM);
} catch {
  chromium = false;
}

Deno.test({
  name: "opened from the file system in Chromium, the reference renders and nothing reaches the network",
  ignore: !chromium, // .ci/run installs Chromium; without it this check is reported as ignored
  async fn() {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const requested: string[] = [];
      const blocked = new Map<string, string>();
      page.on("request", (r) => requested.push(r.url()));
      page.on("requestfailed", (r) => blocked.set(r.url(), r.failure()?.errorText ?? ""));
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(API_REFERENCE.href);
      await page.getByText("Webhook Logs", { exact: true }).first().click();
      await page.getByText("List deliveries, newest first", { exact: false }).first().click();
      await page.getByText("permanently_failed").first().waitFor();
      assertEquals(new URL(page.url()).hash, "#/webhook-logs/paths/~1webhooks~1deliveries/get");
      // The events a receiver gets are in the reference too, each with its body's schema and example.
      await page.getByText("donation.recorded", { exact: true }).first().click();
      await page.getByText("A row is inserted into", { exact: false }).first().waitFor();
      assertEquals(errors, []);
      // Not even a request the page's policy would refuse (the renderer's logo is drawn inline).
      assertEquals(requested.filter((url) => !LOCAL.test(url)), [], "no request leaves the page");
      assertEquals([...blocked.keys()].filter((url) => !LOCAL.test(url)), []);
    } finally {
      await browser.close();
    }
  },
});
