// Settings > Privacy > Erase a person, in a real browser against the real dev stack: an admin finds a
// member by e-mail, confirms, watches the erasure finish, and sees its record; nothing of the member
// is left in any table; staff are told the page is for administrators. axe-core finds no violation
// of any impact on the page, its dialog or its result. A development build (preact/debug), whose console
// must stay silent: no warning (a duplicate key once was one).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { rowsMentioning } from "../../tests/helpers/catalogue_search.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, Page } from "playwright-core";
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
const ADMIN = `erase-admin-${run}@firstchurch.example`;
const STAFF = `erase-staff-${run}@firstchurch.example`;
const PERSON = {
  first: `Ada${run}`,
  last: "Lovelace",
  email: `ada.${run}@example.org`,
  phone: "+44 7700 900461",
};
const PAGE = "/settings/privacy/erase-person";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let organizationId: string;
const problems: string[] = [];
const consoleLines: string[] = [];

/** Screenshots, and axe at both sizes with every violation, whatever its impact (none at all on this page). */
async function axeViolations(name: string): Promise<void> {
  problems.push(...await captureAndCheck(page, `erase-${name}`, { everyImpact: true }));
}

const signIn = (email: string) => signInAs(page, site.url, email);

Deno.test(
  "setup: dev stack, an admin, staff and a member with history, the build, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: "demo-password",
      organization: `Erase Church ${run}`,
      role: "admin",
    });
    organizationId = admin.organizationId!;
    await upsertDevUser({
      email: STAFF,
      password: "demo-password",
      organization: `Erase Church ${run}`,
    });
    await sql()`insert into public.webhook_endpoints (organization_id, url, events)
              values (${organizationId}, 'http://127.0.0.1:9/none', array['member.created'])`;
    await sql()`insert into public.members (organization_id, first_name, last_name, email, primary_phone)
              values (${organizationId}, ${PERSON.first}, ${PERSON.last}, ${PERSON.email}, ${PERSON.phone}),
                     (${organizationId}, 'Grace', 'Hopper', ${`grace.${run}@example.org`}, null)`;
    // A receiver's answer to Grace's member.created names Ada: Grace's row, reported after the erasure.
    await sql()`insert into public.webhook_delivery_attempts
                  (organization_id, delivery_id, attempt_number, attempted_at, response_status, response_excerpt)
                select ${organizationId}, d.id, 1, now(), 409, ${`duplicate of ${PERSON.email}`}
                from public.webhook_deliveries d join public.webhook_events e on e.id = d.event_id
                where e.organization_id = ${organizationId} and e.payload #>> '{data,row,first_name}' = 'Grace'`;
    stack = await startDevStack({ env: { WEBHOOKS_DEV_DISPATCH: "false" } });
    site = serveStatic(await buildWeb(stack.url, stack.anonKey, { debug: true }));
    browser = await launchBrowser();
    page = await openPage(browser, consoleLines);
  },
);

Deno.test(
  "an admin finds the member, confirms, and the erasure finishes with its record",
  opts,
  async () => {
    await signIn(ADMIN);
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", {
      name: "Erase a person",
    }).click();
    await page.waitForURL(new RegExp(`${PAGE}$`));
    await page.getByRole("heading", { name: "No one has been erased" })
      .waitFor();
    await axeViolations("empty");

    await page.getByLabel("E-mail, phone or name").fill("x");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("Type at least 2 characters").waitFor();
    await page.getByLabel("E-mail, phone or name").fill(PERSON.email);
    await page.getByRole("button", { name: "Search" }).click();
    const row = page.getByRole("region", { name: "Matching members" })
      .getByRole("row").filter({
        hasText: PERSON.email,
      });
    await row.waitFor();
    assertEquals(
      await page.getByRole("region", { name: "Matching members" }).getByRole(
        "row",
      ).count(),
      2,
    );
    await axeViolations("found");

    await row.getByRole("button", {
      name: `Erase ${PERSON.first} ${PERSON.last}`,
    }).click();
    const dialog = page.getByRole("dialog", { name: "Erase this person?" });
    await dialog.waitFor();
    const erase = dialog.getByRole("button", {
      name: `Erase ${PERSON.first} ${PERSON.last}`,
    });
    assert(
      await erase.isDisabled(),
      "nothing happens before the admin says they understand",
    );
    await axeViolations("confirm");
    await dialog.getByLabel("I understand this cannot be undone").check();
    await erase.click();

    await page.getByRole("heading", { name: "Erased" }).waitFor();
    const result = await page.getByRole("region", { name: "Erasure progress" })
      .textContent();
    assert(
      /1 member record/.test(result!) && /1 webhook event\b/.test(result!),
      result!,
    );
    assert(
      /Kept, but may still hold something of the erased person: 1 in webhook deliveries/.test(result!),
      result!,
    );
    const records = page.getByRole("region", { name: "Erasure records" });
    await records.getByRole("cell", { name: "Done" }).waitFor();
    await records.getByRole("cell", { name: "You" }).waitFor();
    await axeViolations("erased");

    assertEquals(await rowsMentioning(PERSON.email), [
      { table: "public.webhook_delivery_attempts", column: "response_excerpt", rows: 1 },
    ], "Grace's row is reported, not changed");
    assertEquals(await rowsMentioning(PERSON.first), []);
    const [left] =
      await sql()`select count(*)::int as n from public.members where organization_id = ${organizationId}`;
    assertEquals(left!.n, 1, "the other member stays");
  },
);

Deno.test(
  "staff see that erasing people is for administrators",
  opts,
  async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/auth/);
    await signIn(STAFF);
    await page.goto(`${site.url}${PAGE}`);
    await page.getByRole("heading", { name: "Erase a person" }).waitFor();
    await page.getByText("are for administrators").waitFor();
    assertEquals(await page.getByLabel("E-mail, phone or name").count(), 0);
  },
);

Deno.test("no accessibility problem on any state of the page", opts, () => {
  assertEquals(problems, []);
});

Deno.test("nothing wrong in the development console (preact/debug warns of duplicate keys)", opts, () => {
  assertEquals(consoleProblems(consoleLines), []);
});

Deno.test("teardown", opts, async () => {
  // The other member's delivery is still due: the next file's dispatcher must not get it.
  await sql()`update public.webhook_endpoints set enabled = false where organization_id = ${organizationId}`;
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
