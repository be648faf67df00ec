// The settings area's third round in a real browser against the real dev stack, production build: focus
// goes back to where an action came from (never to <body>); the health tiles and the activity chart say
// the same numbers for the same window; revealing a signing secret behind a fresh sign-in; one message for
// an unsupported URL scheme; and the smaller fixes (a revoked key's badge at 390 px, the unverified
// payment row's link, a used invitation link answering at once, staff's navigation, plain event
// descriptions). Every screen touched: axe at every impact at 1280x800 and 390x844.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import { type Receiver, startReceiver } from "../../tests/helpers/receiver.ts";
import type { Browser, BrowserContext, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  consoleProblems,
  focused,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const CHURCH = `Hope Church ${run}`;
const ADMIN = `r3-admin-${run}@hope.example`;
const STAFF = `r3-staff-${run}@hope.example`;
const PASSWORD = "demo-password";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: Receiver;
let organizationId: string;
let endpointId: string;
const problems: string[] = [];
const consoleLines: string[] = [];

/** Screenshots at both sizes, axe at every impact. */
async function check(name: string) {
  problems.push(...await captureAndCheck(page, `r3-${name}`, { everyImpact: true }));
}

async function goTo(linkName: string, path: RegExp) {
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: linkName, exact: true })
    .click();
  await page.waitForURL(path);
}

/** The first endpoint's card (the only one until the health test adds another). */
const card = () => endpointId ? page.locator(`li#endpoint-${endpointId}`) : page.locator("li.card").first();

Deno.test(
  "setup: dev stack, an admin and a staff member, the production build, a receiver, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: PASSWORD,
      organization: CHURCH,
      role: "admin",
    });
    await upsertDevUser({ email: STAFF, password: PASSWORD, organization: CHURCH, role: "staff" });
    organizationId = admin.organizationId!;
    stack = await startDevStack();
    site = serveStatic(await buildWeb(stack.url, stack.anonKey));
    receiver = await startReceiver();
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await openPage(context, consoleLines);
    await signInAs(page, site.url, ADMIN, PASSWORD);
  },
);

Deno.test(
  "focus: after I have saved the secret it is on the new card; after Save changes on Edit; after a rotation's secret on Rotate secret",
  opts,
  async () => {
    await page.getByRole("button", { name: "Add your first endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/hook`);
    await page.getByLabel("member.created").check();
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    await card().waitFor();
    const [e] = await sql()<{ id: string }[]>`
      select id from public.webhook_endpoints where organization_id = ${organizationId}`;
    endpointId = e!.id;
    assertEquals((await focused(page)).id, `endpoint-${endpointId}`, "the new endpoint's card");

    await card().getByRole("button", { name: "Edit" }).click();
    await page.getByLabel("Description (optional)").fill("Our CRM");
    await page.getByRole("button", { name: "Save changes" }).click();
    await card().getByText("Changes saved.").waitFor();
    let f = await focused(page);
    assertEquals([f.tag, f.text], ["button", "Edit"], "the card's Edit button");
    // Cancel too.
    await card().getByRole("button", { name: "Edit" }).click();
    await page.getByRole("button", { name: "Cancel" }).click();
    f = await focused(page);
    assertEquals([f.tag, f.text], ["button", "Edit"], "Edit again after Cancel");

    await card().getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    f = await focused(page);
    assertEquals([f.tag, f.text], ["button", "Rotate secret"], "the card's Rotate secret button");
    await check("webhooks-card");
  },
);

Deno.test("focus: Close details in Webhook Logs goes back to the row it was opened from", opts, async () => {
  await card().getByRole("button", { name: "Send test event" }).click();
  await page.getByRole("dialog").getByRole("button", { name: /^Send/ }).click();
  await receiver.waitFor(1, 15_000);
  await goTo("Webhook Logs", /webhook-logs/);
  const row = page.locator("table.logs tbody tr").first();
  const opener = row.getByRole("button", { name: /show details/ });
  await opener.click();
  await page.getByRole("heading", { name: "Delivery details" }).waitFor();
  await page.getByRole("button", { name: "Close details" }).click();
  const f = await focused(page);
  assertEquals(f.label, await opener.getAttribute("aria-label"), "the row's button");
  await check("logs");
});

Deno.test(
  "health tiles and the activity chart: the same numbers for the same period, said beside them, refreshed together",
  opts,
  async () => {
    const url = `${receiver.url}/tiles`;
    const [e] = await sql()<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, secret)
      values (${organizationId}, ${url}, '{member.created}', private.webhook_new_secret()) returning id`;
    const id = e!.id;
    // 12 attempts an hour ago, 3 of them delivered; 2 delivered in the last 24 hours but before the chart's
    // first hour (they once made the tiles say "35.7% of 14 attempts" beside "3 delivered, 9 failed").
    await sql()`insert into public.webhook_endpoint_health_buckets (endpoint_id, bucket_start, organization_id,
                  attempts, delivered, timed, duration_ms_sum, duration_histogram)
                values (${id}, date_trunc('hour', now()) - interval '50 minutes', ${organizationId}, 12, 3, 3, 300,
                        private.webhook_duration_histogram('{80,100,120}')),
                       (${id}, date_trunc('hour', now()) - interval '23 hours' - interval '1 microsecond',
                        ${organizationId}, 2, 2, 0, 0, '{}')`;
    await sql()`insert into public.webhook_endpoint_health (endpoint_id, organization_id, last_attempt_at,
                  last_response_status, last_outcome, consecutive_failures, failing_since)
                values (${id}, ${organizationId}, now() - interval '40 minutes', 500, 'failed', 9,
                        now() - interval '55 minutes')`;
    await page.goto(`${site.url}/settings/integrations/webhooks`);
    const tiles = page.locator("li.card").filter({ has: page.getByRole("heading", { name: url }) });
    const summary = tiles.locator("section.activity p.small").first();
    const health = tiles.locator("dl.health");
    const tile = async (name: string) =>
      (await health.locator("div").filter({ has: page.getByText(name, { exact: true }) }).locator("dd")
        .textContent())!;

    await summary.getByText(/^Last 24 hours: 3 delivered, 9 failed/).waitFor();
    assertEquals(await tile("Success rate (24 h)"), "25.0% of 12 attempts");
    assertMatch(await tile("Last delivery"), /^Failed \(HTTP 500\)/);
    assertMatch(await tile("Failures in a row"), /^9 since /);
    const median = (await summary.textContent())!.match(/median (\d+ ms)/)?.[1];
    assertEquals(
      await tile("Median response time (24 h)"),
      median,
      "the median the words beside the chart say",
    );
    // The period is said beside the tiles, as the chart's first point starts.
    await tiles.getByText(
      /^Health for the last 24 hours \(from .+\), the period the activity below shows; updated /,
    )
      .waitFor();
    await check("webhooks-health-24h");

    // The other period moves both.
    await tiles.getByRole("button", { name: "7 days" }).click();
    await summary.getByText(/^Last 7 days: 5 delivered, 9 failed/).waitFor();
    assertEquals(await tile("Success rate (7 days)"), "35.7% of 14 attempts");
    await tiles.getByText(/^Health for the last 7 days \(from /).waitFor();
    await check("webhooks-health-7d");

    // A delivery now: the tiles and the chart change in the same moment (one answer).
    await tiles.getByRole("button", { name: "24 hours" }).click();
    await summary.getByText(/^Last 24 hours: 3 delivered, 9 failed/).waitFor();
    await tiles.getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("dialog").getByRole("button", { name: /^Send/ }).click();
    await health.getByText("Delivered (HTTP 200)").waitFor();
    assertMatch((await summary.textContent())!, /^Last 24 hours: 4 delivered, 9 failed/);
    assertEquals(await tile("Success rate (24 h)"), "30.8% of 13 attempts");
    assertEquals(await tile("Failures in a row"), "0");
  },
);

Deno.test(
  "Reveal secret: the password again (a wrong one said at the field), the secret shown, the audit log says who",
  opts,
  async () => {
    await page.goto(`${site.url}/settings/integrations/webhooks`);
    await card().getByRole("button", { name: "Reveal secret" }).click();
    const dialog = page.getByRole("dialog", { name: "Reveal the signing secret" });
    const password = dialog.getByLabel("Your password");
    await password.waitFor();
    assertEquals(
      (await focused(page)).id,
      await password.getAttribute("id"),
      "the dialog opens on the password",
    );
    await password.fill("not-my-password");
    await dialog.getByRole("button", { name: "Reveal secret" }).click();
    await dialog.getByText("That is not your password. Try again.").waitFor();
    assertEquals(await password.getAttribute("aria-invalid"), "true");
    await check("webhooks-reveal-wrong");
    const [user] = await sql()<{ id: string }[]>`select id from auth.users where email = ${ADMIN}`;
    const sessions = async () =>
      (await sql()<{ n: number }[]>`select count(*)::int as n from auth.sessions where user_id = ${
        user!.id
      }`)[0]!.n;
    const before = await sessions();

    await password.fill(PASSWORD);
    await dialog.getByRole("button", { name: "Reveal secret" }).click();
    const shown = page.getByRole("textbox", { name: "Signing secret" });
    await shown.waitFor();
    const [e] = await sql()<
      { secret: string }[]
    >`select secret from public.webhook_endpoints where id = ${endpointId}`;
    assertEquals(await shown.inputValue(), e!.secret, "the endpoint's current secret");
    assertMatch((await focused(page)).text, /^Signing secret of /);
    assertEquals(
      await sessions(),
      before,
      "the sign-in it replaced is ended at Auth: no session left behind",
    );
    await check("webhooks-revealed");
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    const f = await focused(page);
    assertEquals([f.tag, f.text], ["button", "Reveal secret"], "back on the card's Reveal secret");

    await goTo("Audit log", /audit-log/);
    const row = page.getByRole("region", { name: "Audit log" }).locator("tbody tr").first();
    await row.getByText("Revealed an endpoint's signing secret").waitFor();
    assertMatch((await row.textContent())!, new RegExp(`Administrator${ADMIN}`));
    assert(!(await page.content()).includes(e!.secret), "the audit log never shows the secret");
    await check("audit-log");
  },
);

Deno.test(
  "development: a URL with an unsupported scheme is told the rule the help text states (http or https)",
  opts,
  async () => {
    await page.goto(`${site.url}/settings/integrations/webhooks`);
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    const help = page.getByText(/This is a development setup, so http and local or private addresses/);
    await help.waitFor();
    await page.getByLabel("Endpoint URL").fill("ftp://127.0.0.1/hook");
    await page.getByLabel("member.created").check();
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    const error = page.locator(".field-error");
    await error.waitFor();
    assertEquals(await error.textContent(), "scheme must be http or https");
    await check("webhooks-scheme");
    await page.getByRole("button", { name: "Cancel" }).click();
    const f = await focused(page);
    assertEquals([f.tag, f.text], ["button", "Add endpoint"], "back on Add endpoint after Cancel");
  },
);

Deno.test(
  "API keys: the empty state under the title, a confirmation after revoking, the revoked badge whole at 390 px",
  opts,
  async () => {
    await goTo("API keys", /api-keys/);
    await page.getByRole("heading", { level: 2, name: "No API keys yet" }).waitFor();
    await check("api-keys-empty");
    await page.getByLabel("Name").fill("Zapier");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("button", { name: "I have saved the key" }).click();
    await page.getByRole("button", { name: "Revoke Zapier" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke key" }).click();
    const said = page.getByRole("status").filter({ hasText: /^Revoked Zapier \(orgkey_/ });
    await said.waitFor();
    assertMatch((await said.textContent())!, /Anything using it is refused from now on\.$/);
    assertMatch((await focused(page)).text, /^Revoked Zapier/, "focus on what happened, not <body>");
    const badge = page.locator(".badge").filter({ hasText: "Revoked" });
    assertEquals(await badge.textContent(), "Revoked");
    await page.setViewportSize({ width: 390, height: 844 });
    const fits = await badge.evaluate((b) => b.scrollWidth <= b.clientWidth);
    await page.setViewportSize({ width: 1280, height: 800 });
    assert(fits, "the badge's text is not cut off");
    await check("api-keys-revoked");
  },
);

Deno.test(
  "Payment webhooks: an unverified notification's row has a real button with a name",
  opts,
  async () => {
    // As the receiver logs a wrong signature: nothing the sender chose is kept, so no event name either.
    await sql()`insert into public.inbound_webhook_log (organization_id, provider, signature_valid, status, error)
              values (${organizationId}, 'checkout', false, 'unverified', 'signature mismatch')`;
    await goTo("Payment webhooks", /payment-webhooks/);
    const button = page.getByRole("button", {
      name: /^Notification without an event name, received .+: show details$/,
    });
    await button.waitFor();
    assertEquals(await button.textContent(), "Show details");
    const box = (await button.boundingBox())!;
    assert(box.width >= 24 && box.height >= 24, `a target of ${box.width}x${box.height} px`);
    await check("payments-unverified");
  },
);

Deno.test("the events' descriptions are plain sentences: no 'delta holds every field'", opts, async () => {
  await goTo("Webhooks", /webhooks$/);
  await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
  await page.getByLabel("member.created").waitFor();
  const help = await page.locator(".event-choice p.help").allTextContents();
  assert(help.length >= 5, help.join("|"));
  for (const h of help) assert(!/\bdelta\b|\brow is\b/.test(h), h);
  await page.getByRole("button", { name: "Cancel" }).click();
});

Deno.test("a used or unknown invitation link is said at once: one question, no retries", opts, async () => {
  const previews: string[] = [];
  const onRequest = (r: { url(): string }) => {
    if (r.url().includes("/invitations/preview")) previews.push(r.url());
  };
  page.on("request", onRequest);
  await page.goto(`${site.url}/invitations/accept#token=inv_${"0".repeat(64)}`);
  await page.getByText(/This invitation link no longer works/).waitFor();
  await page.waitForTimeout(1500); // a retry would have been asked by now (the first after 1 s)
  page.off("request", onRequest);
  assertEquals(previews.length, 1, "asked once");
  await check("invitation-gone");
});

Deno.test("staff see the pages they can use and one sentence about the rest", opts, async () => {
  // A browser of their own: one context shares the admin's stored session.
  const staffPage = await openPage(browser, consoleLines);
  await signInAs(staffPage, site.url, STAFF, PASSWORD);
  const nav = staffPage.getByRole("navigation", { name: "Settings" });
  await nav.getByText(/are for the organization's administrators; you are staff here\./).waitFor();
  assertEquals(await nav.getByRole("link").allTextContents(), ["Organization"]);
  const before = page;
  page = staffPage;
  await check("staff-navigation");
  page = before;
  await staffPage.context().close();
});

Deno.test("no console problems", opts, () => {
  assertEquals(consoleProblems(consoleLines), []);
});

Deno.test("no accessibility or layout problem on any screen at either size", opts, () => {
  assertEquals(problems, []);
});

Deno.test("cleanup", opts, async () => {
  await browser?.close();
  await receiver?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
