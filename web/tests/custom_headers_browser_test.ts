// An endpoint's custom headers in the settings page, in a real browser against the real dev stack: added
// with the endpoint (a name the API refuses shown at its row), shown afterwards by name with the value
// masked, a value replaced, a header removed, each checked in the database's storage; a value never
// appears in the page. axe-core finds no violation of any impact on any state shown, at 1280 and 390.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, Page } from "playwright-core";
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
const ADMIN = `headers-admin-${run}@firstchurch.example`;
const GATEWAY = `Bearer gw-${crypto.randomUUID()}`;
const TENANT = `tenant-${crypto.randomUUID()}`;
const REPLACED = `tenant-${crypto.randomUUID()}`;

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let webDir: string;
let browser: Browser;
let page: Page;
let organizationId: string;
const problems: string[] = [];
const consoleLines: string[] = [];

async function check(name: string) {
  problems.push(...await captureAndCheck(page, `headers-${name}`, { everyImpact: true }));
}

/** The stored values, read as the server: the page's only way to them is to send them. */
async function stored(): Promise<{ name: string; value: string }[]> {
  const rows = await sql()<{ headers: { name: string; value: string }[] }[]>`
    select h.headers from private.webhook_endpoint_headers h
    join public.webhook_endpoints e on e.id = h.endpoint_id where e.organization_id = ${organizationId}`;
  return rows[0]?.headers ?? [];
}

/** No value anywhere in the page's markup. */
async function noValueShown() {
  const html = await page.content();
  for (const v of [GATEWAY, TENANT, REPLACED]) assert(!html.includes(v), "a value is in the page");
}

Deno.test("setup: dev stack, an admin, the production build, Chromium", opts, async () => {
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
  browser = await launchBrowser();
  page = await openPage(browser, consoleLines);
  await signInAs(page, site.url, ADMIN);
});

Deno.test("add: two headers with the endpoint; a name the API refuses is said at its row", opts, async () => {
  await page.getByRole("button", { name: "Add your first endpoint" }).click();
  await page.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/hook");
  await page.getByLabel("member.created").check();
  const section = page.getByRole("group", { name: "Custom headers (optional)" });
  await section.getByRole("button", { name: "Add a header" }).click();
  const rows = section.locator("li.header-row");
  // The new row's name has focus, ready to type.
  assertEquals(
    (await focused(page)).id,
    await rows.nth(0).getByLabel("Name", { exact: true }).getAttribute("id"),
  );
  await rows.nth(0).getByLabel("Name", { exact: true }).fill("Authorization");
  await rows.nth(0).getByLabel("Value", { exact: true }).fill(GATEWAY);
  await section.getByRole("button", { name: "Add a header" }).click();
  await rows.nth(1).getByLabel("Name", { exact: true }).fill("Content-Type");
  await rows.nth(1).getByLabel("Value", { exact: true }).fill(TENANT);
  await check("add-form");

  await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
  const name = rows.nth(1).getByLabel("Name", { exact: true });
  const error = rows.nth(1).locator(".field-error");
  await error.getByText('header "Content-Type" is set by the dispatcher on every delivery').waitFor();
  assertEquals(await name.getAttribute("aria-invalid"), "true");
  assert((await name.getAttribute("aria-describedby"))!.includes((await error.getAttribute("id"))!));
  assertEquals((await focused(page)).id, await name.getAttribute("id"), "focus on the refused name");
  assertEquals(await stored(), [], "nothing was added");
  await check("add-refused");

  await name.fill("X-Tenant");
  await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
  await page.getByRole("button", { name: "I have saved the secret" }).click();
  await page.locator("li.card").getByText("Custom headers:").waitFor();
  assertEquals(await stored(), [{ name: "Authorization", value: GATEWAY }, {
    name: "X-Tenant",
    value: TENANT,
  }]);
});

Deno.test(
  "edit: saved values masked; one replaced, one removed, the other kept without retyping",
  opts,
  async () => {
    const card = page.locator("li.card");
    await card.getByRole("button", { name: "Edit" }).click();
    const section = card.getByRole("group", { name: "Custom headers (optional)" });
    const rows = section.locator("li.header-row");
    await rows.nth(0).getByText(`…${GATEWAY.slice(-4)}`).waitFor();
    await rows.nth(1).getByText(`…${TENANT.slice(-4)}`).waitFor();
    assertEquals(await rows.nth(0).getByLabel("Name", { exact: true }).inputValue(), "Authorization");
    assertEquals(
      await section.getByLabel("Value", { exact: true }).count(),
      0,
      "no value field until one is replaced",
    );
    await noValueShown();
    await check("edit-masked");

    await section.getByRole("button", { name: "Replace value of X-Tenant" }).click();
    const value = rows.nth(1).getByLabel("Value", { exact: true });
    assertEquals((await focused(page)).id, await value.getAttribute("id"), "focus on the new value");
    assertEquals(await value.inputValue(), "", "the old value is not put back in the field");
    await value.fill(REPLACED);
    await check("edit-replacing");
    assertEquals(await value.inputValue(), REPLACED, "still typed after the checks at both sizes");
    await card.getByRole("button", { name: "Save changes" }).click();
    await section.waitFor({ state: "detached" }); // the form closes once the API has answered
    assertEquals(await stored(), [{ name: "Authorization", value: GATEWAY }, {
      name: "X-Tenant",
      value: REPLACED,
    }]);

    await card.getByRole("button", { name: "Edit" }).click();
    await section.getByRole("button", { name: "Remove X-Tenant" }).click();
    assertEquals(await rows.count(), 1);
    assertEquals(
      (await focused(page)).text,
      "Add a header",
      "focus goes to the section's button, not the page",
    );
    await card.getByRole("button", { name: "Save changes" }).click();
    await section.waitFor({ state: "detached" }); // the form closes once the API has answered
    assertEquals(await stored(), [{ name: "Authorization", value: GATEWAY }]);
    await noValueShown();
    await check("after-remove");
  },
);

Deno.test("no accessibility problem on any screen; nothing wrong in the console", opts, () => {
  assertEquals(problems, []);
  assertEquals(consoleProblems(consoleLines), []);
});

Deno.test("teardown", opts, async () => {
  await sql()`update public.webhook_endpoints set enabled = false where organization_id = ${organizationId}`;
  await browser?.close();
  await site?.close();
  await stack?.stop();
  if (webDir) await Deno.remove(webDir, { recursive: true });
  await closeSql();
});
