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
  focused,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
  VIEWPORTS,
  watchGets,
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
const PEOPLE = "/settings/people";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let context: BrowserContext;
let page: Page;
let organizationId: string;
let endpointId: string;
const problems: string[] = [];
const focusProblems: string[] = [];
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

// ---------------------------------------------------------------------------------------------------
// Focus after every action: never <body>.

/**
 * Where focus is, in words, and a problem when it is <body>. Unless `now`, once no dialog is open: an
 * action's dialog closes only after the lists it changed are fetched again, so the page can show the new
 * row a moment before focus goes back to it.
 */
async function focusAfter(
  what: string,
  { now = false } = {},
): Promise<{ tag: string; text: string; label: string; id: string }> {
  if (!now) await page.locator("dialog[open]").first().waitFor({ state: "detached" });
  const f = await focused(page);
  if (f.tag === "body" || f.tag === "") focusProblems.push(`${what}: focus fell to <body>`);
  return f;
}

Deno.test(
  "focus after Send invitation, Make admin, Remove and an error inside the Leave dialog (People)",
  opts,
  async () => {
    await page.goto(`${site.url}${PEOPLE}`);
    await page.getByRole("textbox", { name: "E-mail" }).fill(`r4-invitee-${run}@example.org`);
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByText(`Invitation sent to r4-invitee-${run}@example.org as staff.`).waitFor();
    assertEquals((await focusAfter("Send invitation")).text, "Send invitation");

    const row = page.getByRole("region", { name: "Members" }).getByRole("row").filter({ hasText: STAFF });
    await row.getByRole("button", { name: `Make admin: ${STAFF}` }).click();
    await page.getByRole("dialog", { name: `Make ${STAFF} admin?` }).getByRole("button", {
      name: "Make admin",
    })
      .click();
    await row.getByText("Admin", { exact: true }).waitFor();
    const again = await focusAfter("Make admin");
    assertEquals(again.label, `Make staff: ${STAFF}`, `the row's button again, not ${JSON.stringify(again)}`);

    // Two admins on the page; the other is made staff behind its back: Leave is refused inside the dialog.
    await sql()`update public.profiles set role = 'staff' where organization_id = ${organizationId}
                and user_id = (select id from auth.users where email = ${STAFF})`;
    const me = page.getByRole("region", { name: "Members" }).getByRole("row").filter({ hasText: ADMIN });
    await me.getByRole("button", { name: "Leave" }).click();
    const leave = page.getByRole("dialog", { name: "Leave this organization?" });
    await leave.getByRole("button", { name: "Leave" }).click();
    await leave.getByRole("alert").waitFor();
    assertEquals((await focusAfter("an error inside the Leave dialog", { now: true })).text, "Leave");
    await leave.getByRole("button", { name: "Cancel" }).click();

    await row.getByRole("button", { name: `Remove ${STAFF}` }).click();
    await page.getByRole("dialog", { name: "Remove this person?" }).getByRole("button", {
      name: `Remove ${STAFF}`,
    })
      .click();
    await row.waitFor({ state: "detached" });
    const removed = await focusAfter("Remove");
    assertEquals(removed.tag, "p", "the words saying so");
    assertMatch(removed.text, new RegExp(`${STAFF} was removed`));
    await check("people-after-remove");
  },
);

Deno.test("focus after Create key (API keys)", opts, async () => {
  await page.goto(`${site.url}/settings/integrations/api-keys`);
  await page.getByLabel("Name").fill("Zapier");
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByRole("heading", { name: "Key created: Zapier" }).waitFor();
  await page.getByRole("button", { name: "Create key" }).waitFor();
  assertEquals((await focusAfter("Create key")).text, "Create key");
});

Deno.test("focus after Find, Clear filters and Show older deliveries (Webhook Logs)", opts, async () => {
  // 60 deliveries: more than one page of 50.
  await sql()`with e as (
                insert into public.webhook_events (organization_id, type, payload, created_at)
                select ${organizationId}, 'member.created', jsonb_build_object('n', n), now() - make_interval(mins => n)
                from generate_series(1, 60) n returning id, created_at)
              insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, attempt_count,
                next_attempt_at, last_response_status, created_at)
              select ${organizationId}, e.id, ${endpointId}, 'delivered', 1, null, 200, e.created_at from e`;
  await page.goto(`${site.url}${LOGS}`);
  await page.locator("table.logs tbody tr").nth(49).waitFor();
  await page.getByRole("button", { name: "Show older deliveries" }).click();
  await page.locator("table.logs tbody tr").nth(50).waitFor();
  const f = await focusAfter("Show older deliveries");
  assertMatch(f.label, /show details$/, "the first older delivery");

  await page.getByLabel("Find a message").fill("no-such-text-anywhere");
  await page.getByRole("button", { name: "Find" }).click();
  await page.getByRole("heading", { name: "No delivery's body contains this" }).waitFor();
  assertEquals((await focusAfter("Find")).text, "Find");
  await page.getByRole("button", { name: "Clear filters" }).click();
  await page.locator("table.logs tbody tr").first().waitFor();
  assertEquals((await focusAfter("Clear filters")).text, "Find");
});

Deno.test(
  "focus after Register a number (both steps), I have entered it in Meta, and I have entered it at the provider",
  opts,
  async () => {
    await page.goto(`${site.url}/settings/integrations/connections`);
    await page.getByRole("button", { name: "Register a number" }).click();
    assertEquals((await focusAfter("Register a number")).tag, "input");
    const form = page.getByRole("form", { name: "Register a number" });
    await form.getByLabel("Phone number ID").fill(`10${Date.now()}`);
    await form.getByLabel("App secret").fill("an-app-secret-of-32-characters!!");
    await form.getByRole("button", { name: "Register number" }).click();
    await page.getByRole("group", { name: /Verify token for/ }).waitFor();
    const token = await focusAfter("Register number");
    assertEquals(token.tag, "input", "the verify token");
    await page.getByRole("button", { name: "I have entered it in Meta" }).click();
    assertEquals((await focusAfter("I have entered it in Meta")).text, "Register a number");

    await page.getByRole("button", { name: "Set secret" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Generate one for me to enter at the provider").check();
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await page.getByRole("button", { name: "I have entered it at the provider" }).click();
    await page.getByRole("button", { name: "Replace secret" }).first().waitFor();
    assertEquals((await focusAfter("I have entered it at the provider")).text, "Replace secret");
  },
);

Deno.test(
  "delivery details: beside the list at 1280, a view of their own at 390, each at its own address; the list keeps its place",
  opts,
  async () => {
    const rows = page.locator("table.logs tbody tr");
    const panel = page.getByRole("region", { name: "Delivery details" });
    const scrollY = () => page.evaluate("scrollY") as Promise<number>;
    await page.goto(`${site.url}${LOGS}`);
    await rows.nth(40).waitFor();

    // 1280: beside the list, in view, the page where it was.
    const row = rows.nth(40);
    const opener = row.getByRole("button", { name: /show details$/ });
    await opener.scrollIntoViewIfNeeded();
    const before = await scrollY();
    assert(before > 1000, `scrolled down the list (${before})`);
    await opener.click();
    await panel.getByRole("heading", { name: "Delivery details" }).waitFor();
    await panel.getByText("Delivery id").waitFor();
    assert(Math.abs((await scrollY()) - before) < 300, `the list stays put (${before} → ${await scrollY()})`);
    const box = (await panel.boundingBox())!;
    const list = (await page.locator(".table-wrap[aria-label=Deliveries]").boundingBox())!;
    assert(box.x > list.x + list.width - 1, "beside the list");
    assert(box.y >= -1 && box.y < 800, `in view (y=${box.y})`);
    const id = await row.getAttribute("data-delivery-id");
    assertMatch(page.url(), new RegExp(`[?&]delivery=${id}`));
    await check("logs-details-beside");
    // Its address opens it again.
    await page.reload();
    await panel.getByText(id!).waitFor();
    await panel.getByRole("button", { name: "Close details" }).click();
    assert(!page.url().includes("delivery="), "closed: the list's own address");

    // 390: a view of its own, then back to the list where it was left.
    await page.setViewportSize(VIEWPORTS[1]);
    await rows.nth(40).waitFor();
    const narrowOpener = rows.nth(40).getByRole("button", { name: /show details$/ });
    await narrowOpener.scrollIntoViewIfNeeded();
    const left = await scrollY();
    await narrowOpener.click();
    await panel.getByText("Delivery id").waitFor();
    assert(
      !await page.locator(".table-wrap[aria-label=Deliveries]").isVisible(),
      "the list is out of the way",
    );
    assert(!await page.getByRole("search").isVisible(), "and the filters");
    assert((await panel.boundingBox())!.y < 844, "the details start on screen");
    await check("logs-details-view");
    await panel.getByRole("button", { name: "Close details" }).click();
    await page.locator(".table-wrap[aria-label=Deliveries]").waitFor();
    const f = await focused(page);
    assertEquals(f.label, await narrowOpener.getAttribute("aria-label"), "the row it was opened from");
    assert(Math.abs((await scrollY()) - left) < 150, `back where it was (${left} → ${await scrollY()})`);
    // Reloading the details' address at 390 shows them as their own view.
    await narrowOpener.click();
    await page.reload();
    await panel.getByText("Delivery id").waitFor();
    assert(!await page.locator(".table-wrap[aria-label=Deliveries]").isVisible(), "still their own view");
    await panel.getByRole("button", { name: "Close details" }).click();
    await page.setViewportSize(VIEWPORTS[0]);
  },
);

Deno.test(
  "changes of standing show without a reload: a promotion, a suspension (its reason, also in the switcher), a resumption",
  opts,
  async () => {
    const CHURCH_B = `Bethel ${run}`;
    const CHURCH_C = `Calvary ${run}`;
    const CHURCH_D = `Dayspring ${run}`;
    const REASON = `Unpaid invoice ${run}`;
    const PROMOTEE = `r4-promotee-${run}@hope.example`;
    const MULTI = `r4-multi-${run}@hope.example`;
    const SOLO = `r4-solo-${run}@hope.example`;
    const promotee = await upsertDevUser({ email: PROMOTEE, password: PASSWORD, organization: CHURCH });
    const multi = await upsertDevUser({
      email: MULTI,
      password: PASSWORD,
      organization: CHURCH_B,
      role: "admin",
    });
    await upsertDevUser({ email: MULTI, password: PASSWORD, organization: CHURCH_C, role: "admin" });
    await sql()`insert into public.user_active_organization (user_id, organization_id)
                values (${multi.userId}, ${multi.organizationId!})
                on conflict (user_id) do update set organization_id = excluded.organization_id`;
    const solo = await upsertDevUser({
      email: SOLO,
      password: PASSWORD,
      organization: CHURCH_D,
      role: "admin",
    });
    await sql()`insert into private.organization_suspensions (organization_id, reason)
                values (${solo.organizationId!}, 'Checking the account')`;
    const open = async (email: string) => {
      const p = await openPage(
        await browser.newContext({ viewport: { width: 1280, height: 800 } }),
        consoleLines,
      );
      await signInAs(p, site.url, email, PASSWORD);
      return p;
    };
    const staffPage = await open(PROMOTEE);
    await staffPage.getByRole("heading", { name: "Webhook settings are for administrators" }).waitFor();
    // Where their own work is: this build knows no church app's address, so it says whom to ask.
    await staffPage.getByText("the administrator who invited you can give you its address", { exact: false })
      .waitFor();
    const multiPage = await open(MULTI);
    await multiPage.getByText(`Working in ${CHURCH_B}`).waitFor();
    const soloPage = await open(SOLO);
    await soloPage.getByRole("heading", { name: `${CHURCH_D} is suspended` }).waitFor();

    // Made elsewhere, all at once, while the three pages are open.
    await sql()`update public.profiles set role = 'admin' where user_id = ${promotee.userId}
                and organization_id = ${organizationId}`;
    await sql()`insert into private.organization_suspensions (organization_id, reason)
                values (${multi.organizationId!}, ${REASON})`;
    await sql()`delete from private.organization_suspensions where organization_id = ${solo.organizationId!}`;
    const poll = { timeout: 25_000 };

    // The promotion: the navigation and the page follow.
    await staffPage.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "API keys" })
      .waitFor(poll);
    await staffPage.getByText(`You are now an administrator of ${CHURCH}.`).waitFor(poll);
    assert(
      !await staffPage.getByText("you are staff here").isVisible(),
      "the staff sentence is gone",
    );
    // The suspension: the reason, and the move to the other church.
    await multiPage.getByText(
      `${CHURCH_B} has been suspended by the platform's administrators. Their reason: “${REASON}”. You are now in ${CHURCH_C}.`,
    ).waitFor(poll);
    await multiPage.getByText(`Working in ${CHURCH_C}`).waitFor();
    const option = multiPage.getByLabel("Organization").locator("option", { hasText: CHURCH_B });
    assertMatch((await option.textContent())!, new RegExp(`suspended: ${REASON}`));
    // The resumption: the page is back, with what the organization has.
    await soloPage.getByText(`${CHURCH_D} has been resumed by the platform's administrators.`).waitFor(poll);
    await soloPage.getByRole("button", { name: "Add your first endpoint" }).waitFor();
    const before = page;
    page = multiPage;
    await check("standing-suspended-elsewhere");
    page = before;

    // And the switcher follows a resumption too.
    await sql()`delete from private.organization_suspensions where organization_id = ${multi
      .organizationId!}`;
    const end = Date.now() + 25_000;
    while (/suspended/.test((await option.textContent())!)) {
      if (Date.now() > end) throw new Error("the switcher still says suspended");
      await multiPage.waitForTimeout(500);
    }
    for (const p of [staffPage, multiPage, soloPage]) await p.context().close();
  },
);

Deno.test(
  "after a 410: the refusal in words, no stale 'Test event sent'; a revealed secret says it can be revealed again",
  opts,
  async () => {
    // The page's first answers landed (under load a card the list rendered again took its dialog along).
    await page.goto(`${site.url}${WEBHOOKS}`, { waitUntil: "networkidle" });
    await card().getByRole("button", { name: "Send test event" }).click();
    await page.getByRole("dialog").getByRole("button", { name: /^Send/ }).click();
    await card().getByText(/^Test event sent/).waitFor();
    // The list asked again after the test (every 15 s after that): let that answer land first.
    await page.waitForTimeout(1500);
    // The receiver answered 410 Gone meanwhile; this page has not heard yet.
    await sql()`update public.webhook_endpoints set enabled = false, disabled_at = now(),
                  disabled_reason = 'the endpoint answered 410 Gone at 2026-12-07T12:14:34Z'
                where id = ${endpointId}`;
    await card().getByRole("button", { name: "Send test event" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: /^Send/ }).click();
    await dialog.getByRole("alert").getByText(
      "This endpoint is disabled, so nothing is sent to it: its card says why. Enable it there, then try again.",
    ).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await card().getByText(/^Disabled: the endpoint answered 410 Gone at Dec 7, 2026/).waitFor({
      timeout: 25_000,
    });
    assert(!await card().getByText(/^Test event sent/).isVisible(), "no stale 'Test event sent'");
    await check("webhooks-after-410");

    await card().getByRole("button", { name: "Enable" }).click();
    await card().getByRole("button", { name: "Reveal secret" }).click();
    const reveal = page.getByRole("dialog", { name: "Reveal the signing secret" });
    await reveal.getByLabel("Your password").fill(PASSWORD);
    await reveal.getByRole("button", { name: "Reveal secret" }).click();
    const panel = page.getByRole("region", { name: /^Signing secret of/ });
    await panel.getByText("Reveal secret shows it again", { exact: false }).waitFor();
    assert(!await panel.getByText("shown only once").isVisible(), "not 'shown only once'");
    await check("webhooks-revealed");
    await panel.getByRole("button", { name: "I have saved the secret" }).click();
  },
);

Deno.test("switching organization drops the 'is ready' notice about the previous one", opts, async () => {
  const name = `Ready Chapel ${run}`;
  await page.goto(`${site.url}${ORGANIZATION}/new`);
  await page.getByLabel("Name").fill(name);
  await page.getByRole("button", { name: "Create organization" }).click();
  const ready = page.getByText(`${name} is ready, and you are its administrator.`);
  await ready.waitFor();
  await page.getByLabel("Organization", { exact: true }).selectOption({ label: `${CHURCH} (admin)` });
  await page.getByRole("button", { name: "Switch" }).click();
  await page.getByText(`Working in ${CHURCH}`).waitFor();
  assert(!await ready.isVisible(), "the notice about the other organization is gone");
});

Deno.test(
  "the header: one row at 1280 with the switcher, compact at 390 so the page starts near the top",
  opts,
  async () => {
    await page.goto(`${site.url}${WEBHOOKS}`);
    await page.getByLabel("Organization", { exact: true }).waitFor();
    const header = page.getByRole("banner");
    const wide = (await header.boundingBox())!;
    await page.setViewportSize(VIEWPORTS[1]);
    await page.waitForTimeout(200);
    const narrowHeader = (await header.boundingBox())!;
    const h1 = (await page.locator("main h1").boundingBox())!;
    await page.setViewportSize(VIEWPORTS[0]);
    console.log(
      `header at 1280: ${wide.height} px; at 390: ${narrowHeader.height} px, the page's heading at y=${h1.y}`,
    );
    assert(wide.height < 80, `one row at 1280 (${wide.height} px)`);
    assert(h1.y < 280, `the page starts near the top at 390 (its heading at y=${h1.y})`);
    await check("header");
  },
);

Deno.test(
  "Add endpoint: an 'All events' choice, one stop for the example bodies, Enter on a checkbox sends nothing, the error in view with focus",
  opts,
  async () => {
    await page.goto(`${site.url}${WEBHOOKS}`);
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    const form = page.getByRole("form", { name: "Add an endpoint" });
    await form.getByLabel("Endpoint URL").fill("https://crm.example/all");
    const boxes = form.getByRole("checkbox");
    const n = await boxes.count();
    // Enter on a checkbox: nothing sent, nothing said.
    await boxes.nth(1).focus();
    await page.keyboard.press("Enter");
    await page.waitForTimeout(300);
    assert(!await form.getByText("Choose at least one event.").isVisible(), "Enter did not send the form");
    // The form sent with no event: the error is in view, and focus is on the first choice.
    await form.getByRole("button", { name: "Add endpoint" }).click();
    const error = form.getByText("Choose at least one event.");
    await error.waitFor();
    const box = (await error.boundingBox())!;
    assert(box.y >= 0 && box.y + box.height <= 800, `the error is in view (y=${box.y})`);
    assertEquals((await focused(page)).id, await form.getByLabel("All events").getAttribute("id"));
    // From the first choice to the button: one stop per event, the examples once, the rest of the form.
    let stops = 0;
    while ((await focused(page)).text !== "Add endpoint" && stops < 60) {
      await page.keyboard.press("Tab");
      stops++;
    }
    assert(stops <= n + 8, `${stops} Tabs from the first event to the button, for ${n - 1} events`);
    // All events: every type chosen.
    await form.getByLabel("All events").check();
    assertEquals(await form.getByRole("checkbox", { checked: true }).count(), n);
    await check("webhooks-add-all-events");
    await form.getByText("Example bodies of these events").click();
    await check("webhooks-add-examples");
    await form.getByRole("button", { name: "Cancel" }).click();
  },
);

Deno.test(
  "sign-up: one password rule, the server's, stated the same in the hint and the refusal",
  opts,
  async () => {
    const fresh = await openPage(
      await browser.newContext({ viewport: { width: 1280, height: 800 } }),
      consoleLines,
    );
    await fresh.goto(`${site.url}/auth/signup`);
    await fresh.getByText("At least 8 characters.", { exact: false }).waitFor();
    await fresh.getByLabel("E-mail").fill(`r4-new-${run}@example.org`);
    await fresh.getByLabel("Password").fill("seven77");
    await fresh.getByRole("button", { name: "Create account" }).click();
    const refusal = (await fresh.getByRole("alert").filter({ hasText: "too short" }).textContent())!;
    assertMatch(refusal, /at least 8 characters/);
    assert(!/\b6\b/.test(refusal), refusal);
    await fresh.context().close();
  },
);

Deno.test(
  "joining by an invitation link asks for the invitation no more once it is used (no 404)",
  opts,
  async () => {
    const INVITEE = `r4-joiner-${run}@example.org`;
    await upsertDevUser({ email: INVITEE, password: PASSWORD });
    await page.goto(`${site.url}${PEOPLE}`);
    await page.getByRole("textbox", { name: "E-mail" }).fill(INVITEE);
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByText("Or send the link yourself").click();
    const link = await page.getByRole("textbox", { name: "Invitation link" }).inputValue();
    const joiner = await openPage(
      await browser.newContext({ viewport: { width: 1280, height: 800 } }),
      consoleLines,
    );
    const previews: number[] = [];
    joiner.on("response", (r) => {
      if (r.url().endsWith("/invitations/preview")) previews.push(r.status());
    });
    await joiner.goto(link);
    // The invitation opens on Create account; this invitee has an account.
    await joiner.getByRole("button", { name: "Sign in" }).click();
    await joiner.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    await joiner.getByLabel("E-mail").fill(INVITEE);
    await joiner.getByLabel("Password").fill(PASSWORD);
    await joiner.getByRole("button", { name: "Sign in" }).click();
    await joiner.getByRole("button", { name: `Join ${CHURCH}` }).click();
    await joiner.getByText(`You have joined ${CHURCH}.`).waitFor();
    await joiner.getByRole("button", { name: `Open ${CHURCH}` }).click();
    await joiner.getByText(`Working in ${CHURCH}`).waitFor();
    await joiner.waitForTimeout(500);
    assert(previews.length > 0 && previews.every((s) => s === 200), `the previews answered ${previews}`);
    await joiner.context().close();
  },
);

// ---------------------------------------------------------------------------------------------------
// The smaller items: the Set secret radios, the Webhook Logs count and its one request, "Test event sent"
// in view, the API's URL and reference, the console first for a platform administrator in no
// organization; a WhatsApp number's signed test and handshake check.

Deno.test("Set secret: each radio sits on the first line of its words, at both sizes", opts, async () => {
  await page.goto(`${site.url}/settings/integrations/connections`);
  for (const size of VIEWPORTS) {
    await page.setViewportSize(size);
    await page.getByRole("button", { name: /^(Set|Replace) secret$/ }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("radio").first().waitFor();
    const offsets = await dialog.locator("label.choice").evaluateAll((labels) =>
      labels.map((l) => {
        const box = l.querySelector("input")!.getBoundingClientRect();
        const line = l.querySelector("span")!.getClientRects()[0]!;
        return {
          dy: Math.abs((box.top + box.bottom) / 2 - (line.top + line.bottom) / 2),
          before: box.right <= line.left,
        };
      })
    );
    assertEquals(offsets.length, 2);
    for (const o of offsets) assert(o.dy <= 2 && o.before, `at ${size.width}: ${JSON.stringify(o)}`);
    await check(`set-secret-radios-${size.width}`);
    await dialog.getByRole("button", { name: "Cancel" }).click();
  }
  await page.setViewportSize(VIEWPORTS[0]);
});

Deno.test(
  "WhatsApp number: Send a signed test and Check the handshake say what the receiver answered, and store nothing",
  opts,
  async () => {
    await page.goto(`${site.url}/settings/integrations/connections`);
    const number = page.locator("ul.numbers > li").first();
    await number.getByRole("button", { name: "Send a signed test" }).click();
    await number.getByText(/^Signed test delivered: the receiver verified it with this app secret/).waitFor();
    assertEquals((await focusAfter("Send a signed test")).text, "Send a signed test");
    await number.getByRole("button", { name: "Check the handshake" }).click();
    await number.getByText(/^Handshake answered: the Callback URL echoed the challenge/).waitFor();
    assertEquals((await focusAfter("Check the handshake")).text, "Check the handshake");
    await check("connections-number-checks");
    const [stored] = await sql()<{ n: number }[]>`
      select count(*)::int as n from public.whatsapp_messages where organization_id = ${organizationId}`;
    assertEquals(stored!.n, 0, "the test is no message of the church's");
    await number.getByText("Waiting for the first message").waitFor();
  },
);

Deno.test("Webhook Logs: the total matching the filters, and the list asked once on load", opts, async () => {
  const [all] = await sql()<{ n: number; failed: number }[]>`
    select count(*)::int as n, count(*) filter (where status = 'permanently_failed')::int as failed
    from public.webhook_deliveries where organization_id = ${organizationId}`;
  const { asked: lists, stop } = watchGets(page, "/webhooks/deliveries");
  try {
    await page.goto(`${site.url}${LOGS}`);
    await page.locator("table.logs tbody tr").first().waitFor();
    await page.getByText(`${all!.n.toLocaleString("en-US")} deliveries.`, { exact: true }).waitFor();
    // Well inside the 5-second refresh: one request, not two.
    await page.waitForTimeout(1500);
    assertEquals(lists.length, 1, `the list was asked ${lists.length} times: ${lists.join(" | ")}`);
    // A custom range is wall times in the church's zone (New York; the browser is in UTC): asked once,
    // in that zone, not first in the browser's and again as the church's zone arrives.
    lists.length = 0;
    await page.goto(`${site.url}${LOGS}?range=custom&since=2026-12-07T06:00`);
    await page.locator("table.logs tbody tr").first().waitFor();
    await page.waitForTimeout(1500);
    assertEquals(lists.length, 1, `the list was asked ${lists.length} times: ${lists.join(" | ")}`);
    assertEquals(new URLSearchParams(lists[0]).get("since"), "2026-12-07T11:00:00.000Z", "6:00 in New York");
  } finally {
    stop();
  }
  await page.goto(`${site.url}${LOGS}?status=permanently_failed`);
  await page.getByText(
    `${all!.failed} ${all!.failed === 1 ? "delivery matches" : "deliveries match"} these filters.`,
    { exact: true },
  ).waitFor();
  await check("logs-count");
});

Deno.test(
  "Send test event: 'Test event sent' is brought into view, focus back on the button, at 390 too",
  opts,
  async () => {
    // Loopback only: the test delivery is never sent off this machine.
    await sql()`update public.webhook_endpoints set url = 'http://127.0.0.1:9/hooks' where id = ${endpointId}`;
    try {
      for (const size of VIEWPORTS) {
        await page.setViewportSize(size);
        await page.goto(`${site.url}${WEBHOOKS}`);
        await card().getByRole("button", { name: "Send test event" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Send test" }).click();
        const said = card().getByText(/^Test event sent \(webhook\.test\)/);
        await said.waitFor();
        const f = await focusAfter("Send test");
        assertEquals(f.text, "Send test event", `at ${size.width}: focus back on the button it came from`);
        await page.waitForTimeout(100); // the scroll happens on the frame after the words appear
        const box = (await said.boundingBox())!;
        assert(
          box.y >= 0 && box.y + box.height <= size.height,
          `at ${size.width}: in view (${JSON.stringify(box)})`,
        );
      }
    } finally {
      await page.setViewportSize(VIEWPORTS[0]);
      await sql()`update public.webhook_endpoints set url = 'https://crm.example/hooks' where id = ${endpointId}`;
    }
  },
);

Deno.test("API keys: the API's base URL and a link to its reference, which answers", opts, async () => {
  await page.goto(`${site.url}/settings/integrations/api-keys`);
  const base = `${stack.url}/functions/v1/webhooks`;
  await page.getByRole("region", { name: "Using the API" }).getByText(base, { exact: true }).waitFor();
  const link = page.getByRole("link", { name: "the API reference (OpenAPI)" });
  assertEquals(await link.getAttribute("href"), `${base}/openapi.json`);
  const reference = await fetch(`${base}/openapi.json`);
  assertEquals(reference.status, 200);
  const doc = await reference.json();
  assert(doc.paths["/webhooks/endpoints"], "the reference lists the routes");
  await check("api-keys-where");
});

Deno.test(
  "a platform administrator in no organization finds the console first, in the page and the navigation",
  opts,
  async () => {
    const OPS = `r4-ops-${run}@platform.example`;
    await upsertDevUser({ email: OPS, password: PASSWORD });
    // What `npm run platform:superadmin -- --email <OPS>` runs.
    await sql()`select private.operator_set_superadmin(${OPS})`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const ops = await openPage(context, consoleLines);
    try {
      await signInAs(ops, site.url, OPS, PASSWORD);
      const open = ops.getByRole("main").getByRole("link", { name: "Open the platform console" });
      await open.waitFor();
      const headings = await ops.locator("main h2").allTextContents();
      assertEquals(headings.slice(0, 2), ["The platform console", "You are not in an organization"]);
      const navLinks = await ops.getByRole("navigation", { name: "Settings" }).getByRole("link")
        .allTextContents();
      assertEquals(navLinks[0], "Platform console");
      problems.push(...await captureAndCheck(ops, "r4-platform-admin-no-org", { everyImpact: true }));
      await open.click();
      await ops.waitForURL(/\/settings\/platform\/organizations$/);
    } finally {
      await context.close();
    }
  },
);

/** Buttons of the page's content to leave alone in the walk (they leave the page or end the session). */
const WALK_SKIPS = /^(Sign out|Switch|Dismiss)$/;

Deno.test(
  "the focus walk: every button of every page at 1280 and 390 leaves focus somewhere (never <body>)",
  opts,
  async () => {
    const paths = [
      WEBHOOKS,
      LOGS,
      "/settings/integrations/api-keys",
      "/settings/integrations/connections",
      "/settings/integrations/payment-webhooks",
      PEOPLE,
      "/settings/privacy/erase-person",
      ORGANIZATION,
      "/settings/organization/audit-log",
    ];
    // What a click asked of the API is answered before the page is looked at: a dialog that opens on an
    // answer (Retry matching… asks for its count first) opened after a fixed wait under load, and took
    // the next click.
    let inFlight = 0;
    page.on("request", () => inFlight++);
    page.on("requestfinished", () => inFlight--);
    page.on("requestfailed", () => inFlight--);
    const settled = async () => {
      await page.waitForTimeout(100);
      for (let i = 0; inFlight > 0 && i < 200; i++) await page.waitForTimeout(50);
      await page.evaluate(`new Promise((done) => requestAnimationFrame(() => setTimeout(done)))`);
    };
    for (const size of VIEWPORTS) {
      await page.setViewportSize(size);
      for (const path of paths) {
        await page.goto(`${site.url}${path}`);
        await page.locator("main h1").waitFor();
        await page.waitForTimeout(300);
        const names = await page.locator("main button:visible").evaluateAll((bs) =>
          bs.map((b) => (b.getAttribute("aria-label") || b.textContent || "").trim())
        );
        // At most 25 per page (a list's rows repeat one button).
        for (const name of [...new Set(names)].slice(0, 25)) {
          if (!name || WALK_SKIPS.test(name)) continue;
          const button = page.locator("main").getByRole("button", { name, exact: true }).first();
          if (!await button.isVisible() || !await button.isEnabled()) continue;
          await button.click();
          await settled();
          const dialog = page.getByRole("dialog");
          if (await dialog.isVisible()) {
            await focusAfter(`${path} at ${size.width}: ${name} (its dialog)`, { now: true });
            await page.keyboard.press("Escape");
            await dialog.waitFor({ state: "hidden" });
          }
          // At once: a dialog is closed above, and one opening later would be waited for in vain.
          await focusAfter(`${path} at ${size.width}: ${name}`, { now: true });
        }
      }
    }
    await page.setViewportSize(VIEWPORTS[0]);
    assertEquals(focusProblems, []);
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
