// One whole task with the keyboard only, as someone who cannot use a mouse does it: sign in, add an
// endpoint, send it a test event, find the delivery in Webhook Logs, redeliver it, close the details.
// Only Tab, Shift+Tab, typing, Space and Enter; after every action, focus is checked: on the control the
// next step needs, or back where the action came from, and never on <body>. Production build, real
// stack, a receiver that counts what arrives.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import { type Receiver, startReceiver } from "../../tests/helpers/receiver.ts";
import type { Browser, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  consoleProblems,
  focused,
  launchBrowser,
  openPage,
  serveStatic,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const ADMIN = `keys-only-${run}@keyboard.example`;
const PASSWORD = "demo-password";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let receiver: Receiver;
const problems: string[] = [];
const consoleLines: string[] = [];
/** Every step, with where focus was after it: what the report shows when a step fails. */
const trail: string[] = [];

type Focus = Awaited<ReturnType<typeof focused>>;
const describe = (f: Focus) => `${f.tag}${f.id ? `#${f.id}` : ""} "${f.label || f.text.slice(0, 60)}"`;

/** Where focus is now; fails when it fell to <body> (or nowhere). */
async function focusAfter(step: string): Promise<Focus> {
  const f = await focused(page);
  trail.push(`${step}: ${describe(f)}`);
  assert(f.tag !== "body" && f.tag !== "", `after ${step}, focus fell to <body>:\n${trail.join("\n")}`);
  return f;
}

/** Presses Tab until `want` holds for the focused element; returns it. */
async function tabTo(what: string, want: (f: Focus) => boolean, max = 60): Promise<Focus> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const f = await focused(page);
    if (want(f)) {
      trail.push(`Tab to ${what} (${i + 1} stops)`);
      return f;
    }
  }
  throw new Error(`${what} not reached in ${max} Tab stops:\n${trail.join("\n")}`);
}

const text = (t: string) => (f: Focus) => f.text === t;

Deno.test("setup: dev stack, an admin, the production build, a receiver, Chromium", opts, async () => {
  await upsertDevUser({
    email: ADMIN,
    password: PASSWORD,
    organization: `Keyboard Church ${run}`,
    role: "admin",
  });
  stack = await startDevStack();
  site = serveStatic(await buildWeb(stack.url, stack.anonKey));
  receiver = await startReceiver();
  browser = await launchBrowser();
  page = await openPage(browser, consoleLines);
});

Deno.test(
  "keyboard only: add an endpoint, send a test, find it in Webhook Logs, redeliver",
  opts,
  async () => {
    await page.goto(`${site.url}/auth`);
    const email = page.getByLabel("E-mail");
    await email.waitFor();
    // The e-mail field, however many stops the page has before it (none when it opens there).
    const emailId = await email.getAttribute("id");
    if ((await focused(page)).id !== emailId) await tabTo("E-mail", (f) => f.id === emailId);
    await page.keyboard.type(ADMIN);
    await page.keyboard.press("Tab");
    assertEquals(
      (await focusAfter("Tab from e-mail")).id,
      await page.getByLabel("Password").getAttribute("id"),
    );
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/settings\/integrations\/webhooks$/);
    await page.getByRole("heading", { name: "No endpoints yet" }).waitFor();
    await focusAfter("sign in");

    // Add an endpoint.
    await tabTo("Add your first endpoint", text("Add your first endpoint"));
    await page.keyboard.press("Enter");
    const url = page.getByLabel("Endpoint URL");
    await url.waitFor();
    assertEquals(
      (await focusAfter("Add your first endpoint")).id,
      await url.getAttribute("id"),
      "on the URL",
    );
    await page.keyboard.type(`${receiver.url}/keyboard`);
    const memberCreated = await page.getByLabel("member.created").getAttribute("id");
    await tabTo("member.created", (f) => f.id === memberCreated);
    await page.keyboard.press("Space");
    assert(await page.getByLabel("member.created").isChecked(), "Space ticks the event");
    assertEquals((await focusAfter("Space on member.created")).id, memberCreated);
    await tabTo("Add endpoint", text("Add endpoint"));
    // The list asked again after the save answers late, as on a slow connection: the new card is not
    // there yet when the secret's panel closes.
    const late = "**/webhooks/endpoints";
    await page.route(late, async (route) => {
      if (route.request().method() === "GET") await new Promise((r) => setTimeout(r, 1500));
      await route.fallback();
    });
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "I have saved the secret" }).waitFor();
    assertMatch((await focusAfter("Add endpoint")).text, /^Endpoint added: /, "on the new secret's panel");
    await tabTo("I have saved the secret", text("I have saved the secret"));
    await page.keyboard.press("Enter");
    const [e] = await sql()<
      { id: string }[]
    >`select id from public.webhook_endpoints where url = ${`${receiver.url}/keyboard`}`;
    // The card is still on its way: focus waits on Add endpoint meanwhile, never on <body>.
    assertEquals((await focusAfter("I have saved the secret, before the card")).text, "Add endpoint");
    await page.locator(`#endpoint-${e!.id}`).waitFor();
    await page.unroute(late);
    assertEquals((await focusAfter("I have saved the secret")).id, `endpoint-${e!.id}`, "on the new card");
    await problemsAt("keyboard-card");

    // Send a test event.
    await tabTo("Send test event", text("Send test event"));
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Send a test event" });
    await dialog.waitFor();
    assertEquals((await focusAfter("Send test event")).tag, "select", "the dialog opens on its choice");
    await tabTo("Send test", text("Send test"));
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "hidden" });
    assertEquals((await focusAfter("Send test")).text, "Send test event", "back on the button it came from");
    await receiver.waitFor(1, 15_000);

    // Find it in Webhook Logs, from the card's own link.
    await tabTo("View logs", text("View logs"));
    await page.keyboard.press("Enter");
    await page.waitForURL(/webhook-logs\?endpoint=/);
    const row = page.locator("table.logs tbody tr").filter({ hasText: "webhook.test" });
    await row.waitFor();
    await focusAfter("View logs");
    const opener = await row.getByRole("button", { name: /show details/ }).getAttribute("aria-label");
    await tabTo("the delivery's row", (f) => f.label === opener);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Delivery details" }).waitFor();
    assertEquals((await focusAfter("open the delivery")).text, "Delivery details");
    await problemsAt("keyboard-delivery");

    // Redeliver: the same webhook-id arrives again; focus stays on the button.
    await tabTo("Redeliver", text("Redeliver"));
    await page.keyboard.press("Enter");
    await page.getByText(/^Sent again/).waitFor();
    assertMatch((await focusAfter("Redeliver")).text, /^Redeliver/);
    const [first, again] = await receiver.waitFor(2, 15_000);
    assertEquals(again!.headers.get("webhook-id"), first!.headers.get("webhook-id"));

    // Close the details: back on the row.
    await tabTo("Close details", text("Close details"));
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Delivery details" }).waitFor({ state: "hidden" });
    assertEquals((await focusAfter("Close details")).label, opener, "back on the row it was opened from");
  },
);

async function problemsAt(name: string) {
  problems.push(...await captureAndCheck(page, name, { everyImpact: true }));
}

Deno.test("no accessibility problem on the screens of the task, nothing in the console", opts, () => {
  assertEquals(problems, []);
  assertEquals(consoleProblems(consoleLines), []);
});

Deno.test("cleanup", opts, async () => {
  await browser?.close();
  await receiver?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
