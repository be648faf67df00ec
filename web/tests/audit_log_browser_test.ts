// The Audit log page in a real browser against the real dev stack: a church's admin makes changes (an
// endpoint added and changed, an API key that then adds an endpoint of its own), and finds them in the
// Audit log by what, by who and by when; a range that ends before it starts says so; Clear filters
// shows everything again and keeps focus; on a phone who and from where stand under each entry; a custom
// range from a link is asked once, in the church's zone. axe-core finds no violation of any impact, at
// 1280 and 390 px.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { authCall, type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  cutChoices,
  focused,
  launchBrowser,
  openPage,
  serveStatic,
  sidewaysOverflow,
  signInAs,
  VIEWPORTS,
  watchGets,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const ADMIN = `audit-admin-${run}@firstchurch.example`;
const CHURCH = `Audit Church ${run}`;
const AUDIT = "/settings/organization/audit-log";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
const problems: string[] = [];

const rows = async () =>
  (await page.getByRole("region", { name: "Audit log" }).getByRole("row").allTextContents()).slice(1);

Deno.test(
  "setup: dev stack, a church with an admin who changes things through the API, the build, Chromium",
  opts,
  async () => {
    await upsertDevUser({ email: ADMIN, password: "demo-password", organization: CHURCH, role: "admin" });
    stack = await startDevStack({ env: { WEBHOOKS_DEV_DISPATCH: "false" } });
    const signIn = await authCall(stack, "/token?grant_type=password", {
      json: { email: ADMIN, password: "demo-password" },
    });
    assertEquals(signIn.status, 200, JSON.stringify(signIn.body));
    const headers = {
      authorization: `Bearer ${signIn.body.access_token}`,
      "content-type": "application/json",
      "user-agent": "AuditBrowserTest/1",
    };
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${stack.url}/functions/v1/webhooks${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const made = await api("POST", "/endpoints", {
      url: "https://crm.example.org/hooks",
      events: ["member.created"],
    });
    assertEquals(made.status, 201, JSON.stringify(made.body));
    assertEquals(
      (await api("PATCH", `/endpoints/${made.body.id}`, { description: "Finance CRM" })).status,
      200,
    );
    const key = await api("POST", "/api-keys", { name: "Zapier" });
    assertEquals(key.status, 201);
    const byKey = await fetch(`${stack.url}/functions/v1/webhooks/endpoints`, {
      method: "POST",
      headers: { "x-api-key": key.body.key, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://hooks.zapier.example/catch/1", events: ["member.created"] }),
    });
    assertEquals(byKey.status, 201);
    await byKey.body?.cancel();

    site = serveStatic(await buildWeb(stack.url, stack.anonKey));
    browser = await launchBrowser();
    page = await openPage(browser);
  },
);

Deno.test(
  "the admin finds each change by what, by who and by when; Clear filters keeps focus",
  opts,
  async () => {
    await signInAs(page, site.url, ADMIN);
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Audit log" }).click();
    await page.waitForURL(new RegExp(`${AUDIT}$`));
    const log = page.getByRole("region", { name: "Audit log" });
    await log.getByText("Changed an endpoint").waitFor();
    const all = await rows();
    assert(all.length >= 4, all.join(" | "));
    problems.push(...await captureAndCheck(page, "audit-log-all", { everyImpact: true }));

    // What: only the endpoint change, with its before and after.
    await page.getByLabel("What").selectOption("endpoint.updated");
    await page.waitForURL(/action=endpoint\.updated/);
    await log.getByText("description: none → Finance CRM").waitFor();
    assertEquals((await rows()).length, 1);
    const [changed] = await rows();
    // From where: the client's address (the local gateway's x-forwarded-for) and its user agent.
    assert(
      /Changed an endpoint.*Administrator.*audit-admin-.*127\.0\.0\.1AuditBrowserTest\/1/.test(changed!),
      changed,
    );

    // Who: the API key's own change, by its name.
    await page.getByLabel("What").selectOption("");
    await page.getByLabel("Who (e-mail or API key name)").fill("Zapier");
    await page.getByRole("button", { name: "Find" }).click();
    await page.waitForURL(/actor=Zapier/);
    await log.getByText("hooks.zapier.example").waitFor();
    const byKey = await rows();
    assertEquals(byKey.length, 1, byKey.join(" | "));
    assert(/Added an endpoint.*API key.*Zapier/.test(byKey[0]!), byKey[0]);
    assertEquals((await focused(page)).text, "Find", "focus stays on Find");

    // Kind of actor: API keys only gives the same one entry.
    await page.getByLabel("Who (e-mail or API key name)").fill("");
    await page.getByRole("button", { name: "Find" }).click();
    await page.getByLabel("Kind of actor").selectOption("api_key");
    await page.waitForURL(/by=api_key/);
    await page.waitForFunction(() => !location.search.includes("actor="));
    await log.getByText("hooks.zapier.example").waitFor();
    assertEquals((await rows()).length, 1);

    // When: a custom range that ends before it starts says so and asks nothing of the API; one in the
    // future finds nothing.
    await page.getByLabel("Kind of actor").selectOption("");
    await page.getByLabel("When").selectOption("custom");
    await page.getByLabel("From").fill("2030-01-02T00:00");
    await page.getByLabel("Until").fill("2030-01-01T00:00");
    await page.getByRole("alert").filter({ hasText: "“Until” is before “From”" }).waitFor();
    problems.push(...await captureAndCheck(page, "audit-log-bad-range", { everyImpact: true }));
    await page.getByLabel("Until").fill("2030-01-03T00:00");
    await page.getByText("No entry matches these filters").waitFor();
    problems.push(...await captureAndCheck(page, "audit-log-none", { everyImpact: true }));
    await page.getByLabel("When").selectOption("24h");
    await log.getByText("Changed an endpoint").waitFor();

    // Clear filters: everything again, and focus where it was.
    await page.getByLabel("What").selectOption("api_key.created");
    await log.getByText("Created an API key").waitFor();
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForURL(new RegExp(`${AUDIT}$`));
    await log.getByText("Changed an endpoint").waitFor();
    assertEquals((await rows()).length, all.length);
    const f = await focused(page);
    assertEquals(f.text, "Clear filters", `focus is on ${JSON.stringify(f)}`);
    problems.push(...await captureAndCheck(page, "audit-log-filtered", { everyImpact: true }));
  },
);

Deno.test(
  "on a phone the log does not scroll sideways: who and from where are under each entry",
  opts,
  async () => {
    await page.setViewportSize(VIEWPORTS[1]);
    try {
      await page.goto(`${site.url}${AUDIT}?action=api_key.created`);
      const log = page.getByRole("region", { name: "Audit log" });
      const entry = log.getByRole("row").filter({ hasText: "Created an API key" });
      await entry.waitFor();
      const by = entry.locator("dl").getByText(`Administrator: ${ADMIN}`);
      assert(await by.isVisible(), "who did it, under the entry");
      assert(await entry.locator("dl").getByText("127.0.0.1").isVisible(), "from where, under the entry");
      const sideways = await sidewaysOverflow(log);
      assert(sideways <= 1, `the table scrolls sideways by ${sideways}px`);
      // Every choice of every filter is read whole once chosen.
      const cut = await cutChoices(page, 'form[aria-label="Filter the audit log"]');
      assertEquals(cut, [], "choices cut at 390 px");
    } finally {
      await page.setViewportSize(VIEWPORTS[0]);
    }
    // At 1280 the columns say it, and the list under the entry is not shown.
    await page.getByRole("region", { name: "Audit log" }).getByRole("columnheader", { name: "By" }).waitFor();
    assertEquals(await page.locator("dl.audit-narrow").first().isVisible(), false);
  },
);

Deno.test(
  "a custom range opened from a link is asked once, in the church's time zone (the browser is in UTC)",
  opts,
  async () => {
    await sql()`update public.organizations set time_zone = 'America/New_York' where name = ${CHURCH}`;
    const { asked, stop } = watchGets(page, "/webhooks/audit-log");
    try {
      await page.goto(`${site.url}${AUDIT}?range=custom&since=2026-12-07T06:00`);
      await page.getByRole("region", { name: "Audit log" }).getByRole("row").nth(1).waitFor();
      await page.waitForTimeout(1500);
      assertEquals(asked.length, 1, `the log was asked ${asked.length} times: ${asked.join(" | ")}`);
      assertEquals(new URLSearchParams(asked[0]).get("from"), "2026-12-07T11:00:00.000Z", "6:00 in New York");
    } finally {
      stop();
    }
  },
);

Deno.test("no accessibility problem on any state of the audit log", opts, () => {
  assertEquals(problems, []);
});

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
