// An endpoint's rate limit in the settings page, in a real browser against the real dev stack (its
// local dispatcher included) and a loopback receiver: set on add, changed and cleared on edit (checked
// in the database), a value out of range refused at the field, by the page and by the API; and the card
// of an endpoint its receiver paused with 429 and Retry-After. axe-core finds no violation of any impact
// on any state shown.
//
// WEB_DOCS_IMAGES=1 also writes the guides' screenshots of these screens to docs/images/.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import { type Receiver, startReceiver } from "../../tests/helpers/receiver.ts";
import type { Browser, Locator, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  consoleProblems,
  docsImage,
  focused,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const ADMIN = `rate-admin-${run}@firstchurch.example`;
const RATE = "Maximum deliveries per second (optional)";
const PAGE_SAYS = "Enter a whole number from 1 to 1000, or leave it empty for no limit.";
const API_SAYS = "must be a whole number from 1 to 1000 (deliveries a second); no value means no limit";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let webDir: string;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let organizationId: string;
const problems: string[] = [];
const consoleLines: string[] = [];

/** Screenshots at both sizes and axe there; and here, as on the Erase a person page, no violation of any impact. */
async function check(name: string) {
  problems.push(...await captureAndCheck(page, `rate-${name}`, { everyImpact: true }));
}

async function storedRate(): Promise<(number | null)[]> {
  const rows = await sql()<{ rate: number | null }[]>`
    select rate_limit_per_second as rate from public.webhook_endpoints where organization_id = ${organizationId}`;
  return rows.map((r) => r.rate);
}

/** The field shows this error, marked invalid, described by it, and has focus. */
async function refusedAt(field: Locator, message: string) {
  const error = page.locator(".field-error");
  await error.getByText(message, { exact: true }).waitFor();
  assertEquals(await field.getAttribute("aria-invalid"), "true");
  assert(
    (await field.getAttribute("aria-describedby"))!.split(" ").includes(
      (await error.getAttribute("id"))!,
    ),
    "the error describes the field",
  );
  assertEquals((await focused(page)).id, await field.getAttribute("id"));
  assertEquals(
    await page.getByRole("alert").filter({ hasText: message }).count(),
    0,
    "said at the field only",
  );
}

Deno.test(
  "setup: dev stack, an admin, the production build, a receiver, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: "demo-password",
      organization: `First Church ${run}`,
      role: "admin",
    });
    organizationId = admin.organizationId!;
    await sql()`insert into public.user_active_organization (user_id, organization_id)
              values (${admin.userId}, ${organizationId})
              on conflict (user_id) do update set organization_id = excluded.organization_id`;
    stack = await startDevStack();
    webDir = await buildWeb(stack.url, stack.anonKey);
    site = serveStatic(webDir);
    receiver = await startReceiver();
    browser = await launchBrowser();
    page = await openPage(browser, consoleLines);

    await signInAs(page, site.url, ADMIN);
  },
);

Deno.test(
  "add: a rate out of range is refused at the field; 5 is stored and shown on the card",
  opts,
  async () => {
    await page.getByRole("button", { name: "Add your first endpoint" }).click();
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/hook`);
    await page.getByLabel("member.created").check();
    const rate = page.getByLabel(RATE);
    // What it is for is said beside it.
    assertMatch(
      (await page.locator(`#${(await rate.getAttribute("aria-describedby"))!}`)
        .textContent())!,
      /Zapier, Make or n8n/,
    );
    await rate.fill("5");
    await docsImage(page.locator("form.panel"), "endpoint-form-rate-limit");
    for (const typed of ["0", "1001", "2.5", "five"]) {
      await rate.fill(typed);
      await page.getByRole("button", { name: "Add endpoint", exact: true })
        .click();
      await refusedAt(rate, PAGE_SAYS);
    }
    assertEquals(await storedRate(), [], "nothing was added");
    await check("add-refused");

    await rate.fill(" 5 ");
    await page.getByRole("button", { name: "Add endpoint", exact: true })
      .click();
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    await page.locator("li.card").getByText("At most 5 deliveries a second.")
      .waitFor();
    assertEquals(await storedRate(), [5]);
  },
);

Deno.test(
  "edit: the rate is changed, a refusal of the API is shown at the field, and clearing it removes the limit",
  opts,
  async () => {
    const card = page.locator("li.card");
    await card.getByRole("button", { name: "Edit" }).click();
    const rate = card.getByLabel(RATE);
    assertEquals(
      await rate.inputValue(),
      "5",
      "the form starts from the stored limit",
    );
    await rate.fill("20");
    await card.getByRole("button", { name: "Save changes" }).click();
    await card.getByText("At most 20 deliveries a second.").waitFor();
    assertEquals(await storedRate(), [20]);

    // A page whose own check let a bad value through (an older build, say): the API's refusal, in its
    // words, lands at the field. The request is altered on its way; the real API answers it.
    await card.getByRole("button", { name: "Edit" }).click();
    await page.route("**/functions/v1/webhooks/endpoints/*", async (route) => {
      const body = route.request().postDataJSON();
      await route.continue({
        postData: JSON.stringify({ ...body, rate_limit_per_second: 5000 }),
      });
    });
    await rate.fill("30");
    await card.getByRole("button", { name: "Save changes" }).click();
    await refusedAt(rate, API_SAYS);
    await page.unrouteAll();
    assertEquals(await storedRate(), [20], "the refused value was not stored");
    await check("edit-refused-by-api");

    await rate.fill("");
    await card.getByRole("button", { name: "Save changes" }).click();
    // The form closes once the API has answered (the earlier save's "Changes saved." is still shown).
    await rate.waitFor({ state: "detached" });
    assertEquals(await storedRate(), [null], "cleared on the page: no limit");
    await card.getByText(/deliveries a second/).waitFor({ state: "detached" });
  },
);

Deno.test(
  "a receiver answering 429 with Retry-After: the card says the endpoint is paused until when",
  opts,
  async () => {
    await sql()`update public.webhook_endpoints set rate_limit_per_second = 5 where organization_id = ${organizationId}`;
    receiver.respond(() =>
      new Response("slow down", {
        status: 429,
        headers: { "retry-after": "3600" },
      })
    );
    const before = receiver.requests.length;
    await sql()`insert into public.members (organization_id, first_name, last_name, primary_phone)
                values (${organizationId}, 'Ada', 'Browser', '+1 555 0100')`;
    await receiver.waitFor(before + 1, 15_000);
    let pausedUntil: Date | null = null;
    for (let i = 0; i < 150 && !pausedUntil; i++) {
      const [row] = await sql()<{ paused_until: Date | null }[]>`
        select paused_until from public.webhook_endpoints where organization_id = ${organizationId}`;
      pausedUntil = row!.paused_until;
      if (!pausedUntil) await new Promise((r) => setTimeout(r, 100));
    }
    assert(pausedUntil, "the dispatcher paused the endpoint");
    // Retry-After: 3600 is honoured (the cap is one hour).
    const ahead = pausedUntil.getTime() - Date.now();
    assert(ahead > 3500_000 && ahead <= 3600_000, `paused for ${ahead} ms`);

    await page.reload();
    const card = page.locator("li.card");
    const paused = card.locator(".warn").filter({
      hasText: "Paused by the receiver until",
    });
    await paused.waitFor();
    assertMatch((await paused.textContent())!, /429 Too Many Requests/);
    assertEquals(
      Date.parse((await paused.locator("time").getAttribute("datetime"))!),
      pausedUntil.getTime(),
      "the time shown is the pause's end",
    );
    await card.getByText("At most 5 deliveries a second.").waitFor();
    await check("paused");
    await docsImage(card, "endpoint-card-paused");
  },
);

Deno.test(
  "no accessibility problem on any screen; nothing wrong in the console",
  opts,
  () => {
    assertEquals(problems, []);
    assertEquals(consoleProblems(consoleLines), []);
  },
);

Deno.test("teardown", opts, async () => {
  // Its deliveries are still due: the next file's dispatcher must not get them.
  await sql()`update public.webhook_endpoints set enabled = false where organization_id = ${organizationId}`;
  await browser?.close();
  await site?.close();
  await receiver?.close();
  await stack?.stop();
  if (webDir) await Deno.remove(webDir, { recursive: true });
  await closeSql();
});
