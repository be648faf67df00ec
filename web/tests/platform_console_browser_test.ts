// The platform console and the organization's audit log, in a real browser against the real dev stack:
// a superadmin (made with the operator's command) finds a church, suspends it with a reason, and its
// admin, signing in, is told it is suspended; the superadmin resumes it, and the church's admin reads
// both actions in the Audit log. The superadmin grants and revokes a colleague's platform rights, and
// an ordinary admin sees no console. axe-core finds no violation of any impact, at 1280 and 390 px.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  docsImage,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const OPS = `ops-${run}@platform.example`;
const HELPER = `helper-${run}@platform.example`;
const ADMIN = `admin-${run}@firstchurch.example`;
const CHURCH = `Platform Church ${run}`;
const CONSOLE = "/settings/platform/organizations";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let ops: Page;
let admin: Page;
let organizationId: string;
const problems: string[] = [];

async function axeViolations(page: Page, name: string): Promise<void> {
  problems.push(
    ...await captureAndCheck(page, `platform-${name}`, { everyImpact: true }),
  );
}

const organizationRow = () =>
  ops.getByRole("region", { name: "Organizations" }).getByRole("row").filter({
    hasText: CHURCH,
  });

Deno.test(
  "setup: dev stack, a superadmin, a church and its admin, the build, Chromium",
  opts,
  async () => {
    await upsertDevUser({ email: OPS, password: "demo-password" });
    await upsertDevUser({ email: HELPER, password: "demo-password" });
    const a = await upsertDevUser({
      email: ADMIN,
      password: "demo-password",
      organization: CHURCH,
      role: "admin",
    });
    organizationId = a.organizationId!;
    // What `npm run platform:superadmin -- --email <OPS>` runs (tests/platform_superadmin_cli_test.ts).
    await sql()`select private.operator_set_superadmin(${OPS})`;
    stack = await startDevStack({ env: { WEBHOOKS_DEV_DISPATCH: "false" } });
    site = serveStatic(await buildWeb(stack.url, stack.anonKey));
    browser = await launchBrowser();
    ops = await openPage(browser);
    admin = await openPage(browser);
  },
);

Deno.test("an ordinary admin sees no platform console", opts, async () => {
  await signInAs(admin, site.url, ADMIN);
  const nav = admin.getByRole("navigation", { name: "Settings" });
  await nav.getByRole("link", { name: "Audit log" }).waitFor();
  assertEquals(
    await nav.getByRole("link", { name: "Platform console" }).count(),
    0,
  );
  await admin.goto(`${site.url}${CONSOLE}`);
  await admin.getByText(
    "The platform console is for the platform's administrators",
  ).waitFor();
  await admin.getByRole("button", { name: "Sign out" }).click();
  await admin.waitForURL(/\/auth/);
});

Deno.test(
  "a superadmin finds the church and suspends it, saying why",
  opts,
  async () => {
    await signInAs(ops, site.url, OPS);
    await ops.getByRole("navigation", { name: "Settings" }).getByRole("link", {
      name: "Platform console",
    }).click();
    await ops.waitForURL(new RegExp(`${CONSOLE}$`));
    await ops.getByLabel("Name contains").fill(CHURCH);
    await ops.getByRole("button", { name: "Search" }).click();
    await organizationRow().getByText("Healthy").waitFor();
    // The unfiltered list (every organization of this run's database) may still be shown for a moment:
    // the search's answer replaces it.
    const rows = ops.getByRole("region", { name: "Organizations" }).getByRole("row");
    for (let i = 0; i < 150 && await rows.count() !== 2; i++) await ops.waitForTimeout(100);
    assertEquals(await rows.count(), 2, "the header and the one church the search names");
    await axeViolations(ops, "console");

    await organizationRow().getByRole("button", { name: `Suspend ${CHURCH}` })
      .click();
    const dialog = ops.getByRole("dialog", { name: `Suspend ${CHURCH}?` });
    await dialog.getByRole("button", { name: "Suspend organization" }).click();
    await dialog.getByText("Say why: the organization's administrators read it")
      .waitFor();
    assertEquals(
      await dialog.getByLabel("Reason").getAttribute("aria-invalid"),
      "true",
    );
    await axeViolations(ops, "suspend-dialog");
    await dialog.getByLabel("Reason").fill("Unpaid invoice since October");
    await dialog.getByRole("button", { name: "Suspend organization" }).click();
    await organizationRow().getByText("Unpaid invoice since October").waitFor();
    await organizationRow().getByRole("button", { name: `Resume ${CHURCH}` })
      .waitFor();
    // (other organizations' entries may be listed too: the database is the test run's)
    await ops.getByRole("region", { name: "Recent platform actions" }).getByRole("row").filter({
      hasText: CHURCH,
    })
      .getByText("Suspended the organization").waitFor();
    await axeViolations(ops, "suspended");
    await docsImage(ops, "platform-console");

    const [row] = await sql()<{ n: number }[]>`
    select count(*)::int as n from private.organization_suspensions where organization_id = ${organizationId}`;
    assertEquals(row!.n, 1);
  },
);

Deno.test(
  "the suspended church's admin is told, and can do nothing for it",
  opts,
  async () => {
    await signInAs(admin, site.url, ADMIN);
    await admin.getByRole("heading", { name: `${CHURCH} is suspended` })
      .waitFor();
    assertEquals(
      await admin.getByRole("button", { name: "Add endpoint" }).count(),
      0,
    );
    await axeViolations(admin, "admin-suspended");
    await admin.getByRole("button", { name: "Sign out" }).click();
    await admin.waitForURL(/\/auth/);
  },
);

Deno.test(
  "the superadmin resumes it, and its admin reads both actions in the Audit log",
  opts,
  async () => {
    await organizationRow().getByRole("button", { name: `Resume ${CHURCH}` })
      .click();
    const dialog = ops.getByRole("dialog", { name: `Resume ${CHURCH}?` });
    await dialog.getByLabel("Note (optional)").fill("Invoice paid");
    await dialog.getByRole("button", { name: "Resume organization" }).click();
    await organizationRow().getByText("Healthy").waitFor();

    await signInAs(admin, site.url, ADMIN);
    await admin.getByRole("navigation", { name: "Settings" }).getByRole(
      "link",
      { name: "Audit log" },
    ).click();
    const log = admin.getByRole("region", { name: "Audit log" });
    await log.getByText("Resumed the organization").waitFor();
    // What the platform's administrators did, among the church's own changes.
    await admin.getByLabel("Kind of actor").selectOption("platform_admin");
    await admin.waitForURL(/by=platform_admin/);
    await log.getByText("Suspended the organization").waitFor();
    const rows = await log.getByRole("row").allTextContents();
    assertEquals(rows.length, 3, rows.join(" | "));
    assert(
      /Resumed the organization.*Platform administrator.*ops-.*Invoice paid/
        .test(rows[1]!),
      rows[1],
    );
    assert(
      /Suspended the organization.*Unpaid invoice since October/.test(rows[2]!),
      rows[2],
    );
    await axeViolations(admin, "audit-log");
    await docsImage(admin, "audit-log");
  },
);

Deno.test(
  "the superadmin grants a colleague platform admin, and revokes it",
  opts,
  async () => {
    await ops.reload();
    const admins = ops.getByRole("region", { name: "Platform administrators" });
    await admins.getByText(OPS).waitFor();
    await ops.getByLabel("E-mail of their account").fill(
      `nobody-${run}@platform.example`,
    );
    await ops.getByRole("button", { name: "Make platform administrator" })
      .click();
    await ops.getByText("This address no account has this e-mail address")
      .waitFor();
    await axeViolations(ops, "grant-error");
    await ops.getByLabel("E-mail of their account").fill(HELPER);
    await ops.getByRole("button", { name: "Make platform administrator" })
      .click();
    await ops.getByText(`${HELPER} is now a platform administrator.`).waitFor();
    await admins.getByRole("row").filter({ hasText: HELPER }).waitFor();
    await admins.getByRole("button", { name: `Revoke ${HELPER}` }).click();
    await ops.getByText(`${HELPER} is no longer a platform administrator.`)
      .waitFor();
    assertEquals(
      await admins.getByRole("row").filter({ hasText: HELPER }).count(),
      0,
    );
    assertEquals(
      await admins.getByRole("button", { name: `Revoke ${OPS}` }).count(),
      0,
      "superadmins stay",
    );
  },
);

Deno.test(
  "no accessibility problem on any state of the console or the audit log",
  opts,
  () => {
    assertEquals(problems, []);
  },
);

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
