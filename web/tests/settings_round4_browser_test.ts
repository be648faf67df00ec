// The settings area's fourth round in a real browser against the real dev stack, production build: every
// time in the church's time zone, named beside it, with a person's own choice; the time zone list under
// current names by region; a 410's reason in words people read; the health period naming its day. Every
// screen touched: axe at every impact at 1280x800 and 390x844.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  consoleProblems,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const CHURCH = `Round Four Church ${run}`;
const ADMIN = `r4-admin-${run}@hope.example`;
const STAFF = `r4-staff-${run}@hope.example`;
const PASSWORD = "demo-password";
const WEBHOOKS = "/settings/integrations/webhooks";
const LOGS = "/settings/integrations/webhook-logs";
const ORGANIZATION = "/settings/organization";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let context: BrowserContext;
let page: Page;
let organizationId: string;
let endpointId: string;
const problems: string[] = [];
const consoleLines: string[] = [];

/** Screenshots at both sizes, axe at every impact. */
async function check(name: string) {
  problems.push(
    ...await captureAndCheck(page, `r4-${name}`, { everyImpact: true }),
  );
}

const card = () => page.locator(`li#endpoint-${endpointId}`);

Deno.test(
  "setup: dev stack, an admin and a staff member, a disabled endpoint with a delivery, the build, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: PASSWORD,
      organization: CHURCH,
      role: "admin",
    });
    await upsertDevUser({
      email: STAFF,
      password: PASSWORD,
      organization: CHURCH,
      role: "staff",
    });
    organizationId = admin.organizationId!;
    await sql()`update public.organizations set time_zone = 'America/New_York' where id = ${organizationId}`;
    // Made at 12:08 UTC (7:08 AM in New York); the receiver answered 410 Gone at 12:14:34 UTC.
    const [e] = await sql()<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, secret, created_at, enabled,
                                            disabled_reason, disabled_at)
      values (${organizationId}, 'https://crm.example/hooks', '{member.created}', private.webhook_new_secret(),
              '2026-12-07T12:08:00Z', false, 'the endpoint answered 410 Gone at 2026-12-07T12:14:34Z',
              '2026-12-07T12:14:34Z')
      returning id`;
    endpointId = e!.id;
    const [ev] = await sql()<{ id: string }[]>`
      insert into public.webhook_events (organization_id, type, payload, created_at)
      values (${organizationId}, 'member.created', '{"type":"member.created"}', '2026-12-07T12:08:00Z')
      returning id`;
    await sql()`insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status,
                  attempt_count, next_attempt_at, last_response_status, created_at)
                values (${organizationId}, ${ev!.id}, ${endpointId}, 'permanently_failed', 1, null, 410,
                        '2026-12-07T12:08:00Z')`;
    stack = await startDevStack();
    site = serveStatic(await buildWeb(stack.url, stack.anonKey));
    browser = await launchBrowser();
    context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      timezoneId: "UTC",
    });
    page = await openPage(context, consoleLines);
    await signInAs(page, site.url, ADMIN, PASSWORD);
  },
);

Deno.test(
  "times: in the church's time zone and named beside them on Webhooks and Webhook Logs (the browser is in UTC)",
  opts,
  async () => {
    await card().getByText("Added").first().waitFor();
    // The organization's zone arrives with its answer; then every time follows.
    await card().getByText(/Dec 7, 2026, 7:08:00\sAM EST/).first().waitFor();
    const disabled = (await card().locator("p.warn").first().textContent())!;
    assertMatch(
      disabled,
      /^Disabled: the endpoint answered 410 Gone at Dec 7, 2026, 7:14:34\sAM EST · Dec 7/,
    );
    assert(
      !/\d{4}-\d{2}-\d{2}T/.test(disabled),
      `no ISO time in "${disabled}"`,
    );
    await check("times-webhooks");

    await page.goto(`${site.url}${LOGS}`);
    await page.getByText("Times are in America/New York.", { exact: false })
      .waitFor();
    const row = page.locator("table.logs tbody tr").first();
    await row.getByText(/Dec 7, 2026, 7:08:00\sAM EST/).waitFor();
    assertMatch(
      (await row.getByRole("button").first().getAttribute("aria-label"))!,
      /7:08:00\sAM EST/,
    );
    await check("times-logs");
  },
);

Deno.test(
  "time zones: canonical names grouped by region for the church, and a person's own choice kept in this browser",
  opts,
  async () => {
    await page.goto(`${site.url}${ORGANIZATION}`);
    const church = page.getByLabel("Time zone", { exact: true });
    await church.waitFor();
    const options = await church.locator("option").evaluateAll((os) =>
      os.map((o) => (o as unknown as { value: string }).value)
    );
    assert(
      options.includes("Asia/Kolkata") && options.includes("Europe/Kyiv"),
      "current names",
    );
    assert(
      !options.includes("Asia/Calcutta") && !options.includes("Europe/Kiev"),
      "no old names",
    );
    const groups = await church.locator("optgroup").evaluateAll((gs) =>
      gs.map((g) => g.getAttribute("label"))
    );
    assert(
      ["UTC", "Africa", "America", "Asia", "Europe", "Pacific"].every((r) => groups.includes(r)),
      `${groups}`,
    );
    assertEquals(await church.inputValue(), "America/New_York");

    const mine = page.getByLabel("Show times in");
    assertEquals(
      await mine.inputValue(),
      "",
      "follows the church's zone at first",
    );
    await mine.selectOption("Asia/Kolkata");
    await page.getByText("Times are shown in Asia/Kolkata.").waitFor();
    await check("times-own-choice");
    // Kept across a reload, in this browser, for this person; the church's zone is unchanged.
    await page.goto(`${site.url}${LOGS}`);
    await page.locator("table.logs tbody tr").first().getByText(
      /Dec 7, 2026, 5:38:00\sPM GMT\+5:30/,
    ).waitFor();
    await page.getByText("Times are in Asia/Kolkata.", { exact: false })
      .waitFor();
    const [o] = await sql()<{ time_zone: string }[]>`
      select time_zone from public.organizations where id = ${organizationId}`;
    assertEquals(o!.time_zone, "America/New_York");

    // Staff in another browser see the church's zone, and can choose too.
    const staff = await openPage(
      await browser.newContext({ viewport: { width: 1280, height: 800 } }),
      consoleLines,
    );
    await signInAs(staff, site.url, STAFF, PASSWORD);
    await staff.goto(`${site.url}${ORGANIZATION}`);
    await staff.getByLabel("Show times in").waitFor();
    assertMatch(
      (await staff.getByLabel("Show times in").locator("option").first()
        .textContent())!,
      /The church's time zone \(America\/New York\)/,
    );
    await staff.context().close();

    await page.goto(`${site.url}${ORGANIZATION}`);
    await page.getByLabel("Show times in").selectOption("");
    await page.getByText("Times follow the church's time zone again.")
      .waitFor();
  },
);

Deno.test(
  "health: the period names its day and zone, so 'from 1:00 PM' never reads as the future",
  opts,
  async () => {
    await sql()`update public.webhook_endpoints set enabled = true, disabled_reason = null, disabled_at = null
              where id = ${endpointId}`;
    await page.goto(`${site.url}${WEBHOOKS}`);
    await card().getByText(
      /^Health for the last 24 hours \(from (Mon|Tue|Wed|Thu|Fri|Sat|Sun), [A-Z][a-z]{2} \d+, \d+:\d{2}\s[AP]M, America\/New York\)/,
    )
      .waitFor();
    assertMatch(
      (await card().locator("p.period").textContent())!,
      /updated \d+:\d{2}:\d{2}\s[AP]M EST\.$/,
    );
  },
);

Deno.test("no console problems", opts, () => {
  assertEquals(consoleProblems(consoleLines), []);
});

Deno.test(
  "no accessibility or layout problem on any screen at either size",
  opts,
  () => {
    assertEquals(problems, []);
  },
);

Deno.test("cleanup", opts, async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
