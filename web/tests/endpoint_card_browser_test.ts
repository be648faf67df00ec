// An endpoint's card in a real browser against the real dev stack, on a development build (preact/debug,
// and the app's own check that no component updates another while rendering): the 7-day activity view
// (bars wide enough to read, the words and the table saying what the bars show); signing out from pages
// with live queries; deleting an endpoint without asking again for anything about it; who added each
// endpoint and API key, and a warning once that person has left. Nothing may appear in the console: not
// even the browser's line for an HTTP error answer.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import { type Receiver, startReceiver } from "../../tests/helpers/receiver.ts";
import type { Browser, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const ADMIN = `card-admin-${run}@firstchurch.example`;
const PASSWORD = "demo-password";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let webDir: string;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let organizationId: string;
let adminId: string;
let endpointId: string;
const problems: string[] = [];
const consoleLines: string[] = [];
/** What the page asked for and when it was answered, in order. */
const traffic: { kind: "request" | "response"; method: string; url: string; status?: number }[] = [];

/** Screenshots at both sizes and axe there: no violation of any impact. */
async function check(name: string) {
  problems.push(...await captureAndCheck(page, `card-${name}`, { everyImpact: true }));
}

const signIn = () => signInAs(page, site.url, ADMIN, PASSWORD);

/** Console lines that say something went wrong (any error or warning, HTTP error answers included). */
const wrong = (lines: string[]) => lines.filter((l) => /^(pageerror|error|warning|assert)/.test(l));

/**
 * Signs out and waits for the sign-in page; returns what the console said meanwhile that is wrong, and
 * every request answered with an error.
 */
async function signOutFromHere(): Promise<string[]> {
  const from = consoleLines.length;
  const fromTraffic = traffic.length;
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/auth/);
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  // Whatever the queries still had in flight settles (and would complain) by now.
  await page.waitForTimeout(1000);
  // Signing out ends the session at Auth too, not only in this browser.
  const [row] = await sql()<{ sessions: number }[]>`
    select count(*)::int as sessions from auth.sessions where user_id = ${adminId}`;
  const sessions = row!.sessions;
  return [
    ...(sessions === 0 ? [] : [`${sessions} session(s) still alive at Auth`]),
    ...wrong(consoleLines.slice(from)),
    ...traffic.slice(fromTraffic).filter((t) => (t.status ?? 0) >= 400).map((t) =>
      `${t.method} ${t.url}: ${t.status}`
    ),
  ];
}

/** A 10-minute health bucket `hoursAgo` whole hours before the current hour (plus 10 minutes). */
async function bucket(hoursAgo: number, attempts: number, delivered: number, durations: number[]) {
  await sql()`insert into public.webhook_endpoint_health_buckets (endpoint_id, bucket_start, organization_id,
                attempts, delivered, timed, duration_ms_sum, duration_histogram)
              values (${endpointId},
                      date_trunc('hour', now()) - make_interval(hours => ${hoursAgo}) + interval '10 minutes',
                      ${organizationId}, ${attempts}, ${delivered}, ${durations.length},
                      ${durations.reduce((a, b) => a + b, 0)},
                      private.webhook_duration_histogram(${durations}::integer[]))`;
}

Deno.test(
  "setup: dev stack, an admin with an endpoint, a development build, a receiver, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: PASSWORD,
      organization: `First Church ${run}`,
      role: "admin",
    });
    organizationId = admin.organizationId!;
    adminId = admin.userId;
    await sql()`insert into public.user_active_organization (user_id, organization_id)
              values (${admin.userId}, ${organizationId})
              on conflict (user_id) do update set organization_id = excluded.organization_id`;
    stack = await startDevStack();
    webDir = await buildWeb(stack.url, stack.anonKey, { debug: true });
    site = serveStatic(webDir);
    receiver = await startReceiver();
    browser = await launchBrowser();
    page = await openPage(browser, consoleLines);
    page.on("request", (r) => traffic.push({ kind: "request", method: r.method(), url: r.url() }));
    page.on(
      "response",
      (r) =>
        traffic.push({ kind: "response", method: r.request().method(), url: r.url(), status: r.status() }),
    );

    await signIn();
    await page.getByRole("button", { name: "Add your first endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/hook`);
    await page.getByLabel("member.created").check();
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    await page.locator("li.card").waitFor();
    const [e] = await sql()<{ id: string }[]>`
      select id from public.webhook_endpoints where organization_id = ${organizationId}`;
    endpointId = e!.id;
  },
);

Deno.test(
  "Activity, 7 days: 28 bars of 6 hours, wide enough to read; the words and the table say what they show",
  opts,
  async () => {
    // Hours before the current one. The week's 6-hour points end with the current hour, so each of
    // these lands in one point even if the hour turns during the test: 2 and 3 share the last point.
    await bucket(2, 3, 3, [40, 60, 80]);
    await bucket(3, 1, 1, [500]);
    await bucket(32, 5, 2, [100, 2000, 3000]);
    await bucket(80, 2, 2, [30, 35]);
    await bucket(150, 4, 4, [20, 25, 30, 35]);
    await bucket(166, 1, 0, []);
    await page.reload();
    const activity = page.locator("li.card section.activity");
    const summary = activity.locator("p.small").first();
    await summary.filter({ hasText: "Last 24 hours: 4 delivered, 0 failed" }).waitFor();
    assertEquals(await activity.locator("svg.bars g").count(), 24, "24 hourly bars for a day");

    await activity.getByRole("button", { name: "7 days" }).click();
    await summary.filter({ hasText: "Last 7 days" }).waitFor();
    const text = (await summary.textContent())!;
    assertMatch(text, /^Last 7 days: 12 delivered, 4 failed \(most failures in the 6 hours from .+\)\./);
    const bars = activity.locator("svg.bars g");
    assertEquals(await bars.count(), 28, "one bar per 6 hours");
    // A bar is wide enough to see and to tell from its neighbours (168 hourly bars were about 2 px).
    const width = (await bars.first().locator("rect").first().boundingBox())!.width;
    assert(width >= 8, `a bar is ${width.toFixed(1)} px wide`);
    // The points with attempts, as the bars show them: the last, and those 32, 80, 150 and 166 hours back.
    const heights = await bars.evaluateAll((gs) =>
      gs.map((g) => [...g.querySelectorAll("rect")].reduce((h, r) => h + Number(r.getAttribute("height")), 0))
    );
    const drawn = heights.map((h, i) => h > 0 ? i : -1).filter((i) => i >= 0);
    assertEquals(drawn, [0, 2, 14, 22, 27]);
    assertEquals(
      await activity.locator("figcaption").first().textContent().then((t) => t!.replace(/\s+/g, " ")),
      "Attempts per 6 hours (delivered, failed), up to 5",
    );

    await activity.getByText("Activity as a table").click();
    const table = activity.getByRole("region", { name: "Activity per 6 hours" });
    assertEquals(await table.getByRole("columnheader").first().textContent(), "6 hours from");
    const rows = await table.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent))
    );
    // One row per drawn bar, oldest first, with its counts; the busiest failures are the words' period.
    assertEquals(rows.map((r) => [r[1], r[2]]), [["0", "1"], ["4", "0"], ["2", "0"], ["2", "3"], ["4", "0"]]);
    assertEquals(text.match(/from (.+)\)\./)![1], rows[3]![0]);
    // Its median and 95th percentile come from the six hours' own times: 2 and 3 seconds are past the median.
    assertEquals([rows[3]![3], rows[3]![4]].map((t) => /s$/.test(t!) && !/ms$/.test(t!)), [true, true]);
    await check("activity-7d");
  },
);

Deno.test(
  "sign-out from Webhooks with an endpoint, and from Webhook Logs: the sign-in page, nothing in the console",
  opts,
  async () => {
    // Still signed in from the activity test, on Webhooks with the endpoint's card.
    await page.locator("li.card section.activity p.small").first().waitFor();
    assertEquals(await signOutFromHere(), [], "signed out from Webhooks");

    // A delivery, so that Webhook Logs shows a row (and its queries have something to say).
    await sql()`insert into public.members (organization_id, first_name, last_name, primary_phone)
                values (${organizationId}, 'Ada', 'Browser', '+1 555 0100')`;
    await receiver.waitFor(1, 15_000);
    await signIn();
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Webhook Logs" })
      .click();
    await page.waitForURL(/webhook-logs/);
    await page.locator("table.logs tbody tr").filter({ hasText: "member.created" }).first().waitFor();
    assertEquals(await signOutFromHere(), [], "signed out from Webhook Logs");
    await page.getByLabel("E-mail").waitFor();
  },
);

Deno.test(
  "back on Webhooks a second after another page fetched the list: the card shows what changed meanwhile",
  opts,
  async () => {
    await signIn();
    const card = page.locator("li.card");
    await card.locator("section.activity p.small").first().waitFor();
    const nav = page.getByRole("navigation", { name: "Settings" });
    // Webhook Logs fetches the same list (its endpoint filter) ...
    await nav.getByRole("link", { name: "Webhook Logs" }).click();
    await page.waitForURL(/webhook-logs/);
    await page.getByLabel("Endpoint").locator("option", { hasText: `${receiver.url}/hook` }).waitFor({
      state: "attached",
    });
    // ... then the endpoint changes (as a delivery finishing changes its health), and the admin goes back
    // at once, while that list is still fresh for the cache.
    await sql()`update public.webhook_endpoints set description = ${`Changed ${run}`} where id = ${endpointId}`;
    await nav.getByRole("link", { name: "Webhooks", exact: true }).click();
    await card.getByText(`Changed ${run}`).waitFor({ timeout: 5_000 });
    assertEquals(await signOutFromHere(), [], "signed out");
  },
);

Deno.test(
  "delete: nothing about the endpoint is asked for once the DELETE has answered, and nothing in the console",
  opts,
  async () => {
    await signIn();
    const card = page.locator("li.card");
    await card.locator("section.activity p.small").first().waitFor();
    const fromConsole = consoleLines.length;
    const fromTraffic = traffic.length;
    await card.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog", { name: "Delete this endpoint?" })
      .getByRole("button", { name: "Delete endpoint" }).click();
    await page.getByText(`Deleted ${receiver.url}/hook and its delivery history.`).waitFor();
    await page.getByRole("heading", { name: "No endpoints yet" }).waitFor();
    // Refreshes after an action start at once; give them time to be made and answered.
    await page.waitForTimeout(1500);
    const seen = traffic.slice(fromTraffic);
    const answered = seen.findIndex((t) => t.kind === "response" && t.method === "DELETE");
    assert(answered >= 0, JSON.stringify(seen));
    assertEquals(seen[answered]!.status, 204);
    const after = seen.slice(answered + 1).filter((t) => t.kind === "request" && t.url.includes(endpointId));
    assertEquals(after, [], "no request about the deleted endpoint");
    assert(
      seen.slice(answered + 1).some((t) => t.kind === "request" && /\/webhooks\/endpoints(\?|$)/.test(t.url)),
      "the list itself is refreshed",
    );
    assertEquals(wrong(consoleLines.slice(fromConsole)), []);
  },
);

Deno.test(
  "who added each endpoint and key: the admin's address, and a plain warning once that person has left",
  opts,
  async () => {
    // Another admin of the church adds an endpoint and an API key (as the configuration API records
    // them), and this admin a key of their own.
    const other = await upsertDevUser({
      email: `card-other-${run}@firstchurch.example`,
      password: PASSWORD,
      organization: `First Church ${run}`,
      role: "admin",
    });
    const [theirs] = await sql()<{ id: string }[]>`
      insert into public.webhook_endpoints (organization_id, url, events, created_by)
      values (${organizationId}, ${`${receiver.url}/theirs`}, array['member.created'], ${other.userId})
      returning id`;
    await sql()`insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
                values (${organizationId}, 'Their Zapier', 'orgkey_theirs',
                        encode(sha256(${`theirs ${run}`}::bytea), 'hex'), ${other.userId}),
                       (${organizationId}, 'My Make', 'orgkey_mine', encode(sha256(${`mine ${run}`}::bytea), 'hex'),
                        ${adminId})`;
    try {
      await page.reload();
      const card = page.locator("li.card").filter({ hasText: `${receiver.url}/theirs` });
      await card.getByText(`Added by card-other-${run}@firstchurch.example`).waitFor();

      // They are removed from the organization; their endpoint stays, disabled, and says so and why.
      await sql()`delete from public.profiles where user_id = ${other.userId} and organization_id = ${organizationId}`;
      await page.reload();
      await card.getByText("by a member who is no longer in this organization").waitFor();
      await card.getByText(
        `Disabled: its creator, card-other-${run}@firstchurch.example, was removed from the organization`,
      ).waitFor();
      assertEquals(await card.locator("p.warn").count(), 2, "warnings, not muted lines");
      await check("removed-creator");

      const nav = page.getByRole("navigation", { name: "Settings" });
      await nav.getByRole("link", { name: "API keys" }).click();
      await page.waitForURL(/api-keys/);
      const table = page.getByRole("region", { name: "API keys" });
      const row = (name: string) => table.locator("tbody tr").filter({ hasText: name });
      await row("My Make").waitFor();
      const headers = await table.getByRole("columnheader").allTextContents();
      const column = headers.indexOf("Created by");
      assert(column >= 0, JSON.stringify(headers));
      assertEquals(await row("My Make").locator("td").nth(column).textContent(), ADMIN);
      assertEquals(await row("Their Zapier").locator("td").nth(column).textContent(), "removed member");
      // Their key ended with their authority.
      await row("Their Zapier").getByText("its creator was removed from the organization").waitFor();
      await check("key-creators");
    } finally {
      await sql()`delete from public.webhook_endpoints where id = ${theirs!.id}`;
    }
  },
);

Deno.test("no accessibility problem on any screen; nothing wrong in the console", opts, () => {
  assertEquals(problems, []);
  // The wrong password and such are not part of this story: no HTTP error answer at all.
  assertEquals(wrong(consoleLines), []);
});

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await receiver?.close();
  await stack?.stop();
  if (webDir) await Deno.remove(webDir, { recursive: true });
  await closeSql();
});
