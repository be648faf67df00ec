// A new church sets itself up, end to end, as its administrator would: in Chromium, against the real dev
// stack (`npm run dev`'s server, its local Supabase Auth with e-mail confirmations on as a hosted project
// runs, its mail catcher, its dispatcher) and the production build, with no SQL and no script in the walk.
//
// 1. From sign-up to the first delivered webhook: create an account (confirmed from the inbox), create
//    the organization, connect the checkout provider (its signed test passes), invite a staff member who
//    has no account (the invitation mail caught locally; the account created on the invitation page;
//    joined; listed on People), add an endpoint at a receiver of the church's own, and see a
//    member.created delivery arrive there, signed, and in Webhook Logs.
// 2. The administrator forgets her password and resets it through the inbox; a platform administrator
//    (made with the documented `npm run platform:superadmin`) suspends the church, saying why, which its
//    administrator reads at once; resumes it; and she reads both in the Audit log.
//
// Every screen the walk passes through is checked with axe (every impact) at 1280x800 and 390x844, and
// where focus lands after each step that moves it. The database is read only to assert, never to act.
//
// WEB_DOCS_IMAGES=1 also writes the guides' screenshots of these screens to docs/images/.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql, testDbUrl } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack } from "../../tests/helpers/dev_stack.ts";
import { type ReceivedRequest, type Receiver, startReceiver } from "../../tests/helpers/receiver.ts";
import { freePort } from "../../tests/helpers/server.ts";
import { hmacSha256Hex } from "../../supabase/functions/_shared/hmac.ts";
import { Webhook } from "standardwebhooks";
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
} from "./helpers/browser.ts";
import { codeOf, inboxMail, linkOf } from "./helpers/inbox.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const CHURCH = `St Brigid's ${run}`;
const FOUNDER = `pastor-${run}@stbrigid.example`;
const STAFF = `office-${run}@stbrigid.example`;
const OPS = `ops-${run}@platform.example`;
const PASSWORD = "a long enough password";
const NEW_PASSWORD = "a new and longer password";
const CHECKOUT_SECRET = `rzp-whsec-${run}-0123456789`;
const REASON = "Card payments disputed; call the office";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let webDir: string;
let inbox: string;
let receiver: Receiver;
let browser: Browser;
/** The founder's browser; the invitee and the platform's staff use their own. */
let page: Page;
let ops: Page;
let organizationId = "";
const problems: string[] = [];
const consoleLines: string[] = [];

/** axe at every impact and sideways scrolling, at 1280x800 and 390x844, of the screen as it is now. */
async function check(on: Page, name: string) {
  problems.push(...await captureAndCheck(on, `journey-${name}`, { everyImpact: true }));
}

type Focus = Awaited<ReturnType<typeof focused>>;

/** Where focus is should satisfy `what`; a problem in words otherwise (the walk goes on to find the rest). */
async function focusOn(on: Page, where: string, what: (f: Focus) => boolean | Promise<boolean>) {
  // Focus moves once the page has rendered what the action changed: on a loaded machine that can be a
  // moment after the text the test waited for. Given 2 s to arrive, it must not be elsewhere then.
  const until = Date.now() + 2_000;
  for (;;) {
    const f = await focused(on);
    if (await what(f)) return;
    if (Date.now() > until) {
      problems.push(`${where}: focus is on <${f.tag}> "${f.text.slice(0, 60)}" (id ${f.id})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const onMain = (f: Focus) => f.tag === "main" && f.id === "main";
const onHeading = (f: Focus) => f.tag === "h1";

/** Focus is inside `within` (a dialog opens on its first control, or on Cancel when it destroys). */
const inside = (within: Locator) => () =>
  within.evaluate((e) =>
    e.contains((e.ownerDocument as unknown as { activeElement: typeof e }).activeElement)
  );

/** Follows a link of Settings' navigation: the new page's content has focus. */
async function goTo(on: Page, link: string, path: RegExp) {
  await on.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: link, exact: true })
    .click();
  await on.waitForURL(path);
  await on.getByRole("heading", { name: link, level: 1 }).waitFor();
  await focusOn(on, `arriving at ${link}`, onMain);
}

/** Both signatures a receiver may check (the hex HMAC and Standard Webhooks'), with the copied secret. */
async function verifies(req: ReceivedRequest, secret: string): Promise<boolean> {
  if (req.headers.get("x-webhook-signature") !== await hmacSha256Hex(secret, req.body)) return false;
  try {
    new Webhook(secret).verify(req.text, Object.fromEntries(req.headers.entries()));
    return true;
  } catch {
    return false;
  }
}

/** From "Create an account" on a sign-in form to "We sent a confirmation e-mail", focus checked on the way. */
async function createAccount(on: Page, email: string, where: string) {
  await on.getByRole("button", { name: "Create an account" }).click();
  await on.getByRole("heading", { name: "Create an account" }).waitFor();
  await focusOn(on, where, onHeading);
  await fillAccount(on, email);
}

async function fillAccount(on: Page, email: string) {
  await on.getByLabel("E-mail").fill(email);
  await on.getByLabel("Password").fill(PASSWORD);
  await on.getByRole("button", { name: "Create account" }).click();
  await on.getByText(`We sent a confirmation e-mail to ${email}`).waitFor();
}

async function signIn(on: Page, email: string, password: string) {
  await on.getByLabel("E-mail").fill(email);
  await on.getByLabel("Password").fill(password);
  await on.getByRole("button", { name: "Sign in" }).click();
}

async function signOut(on: Page) {
  await on.getByRole("button", { name: "Sign out" }).click();
  await on.waitForURL(/\/auth$/);
  // The address changes before the session's state does; the sign-in page is settled once the signed-in
  // header is gone (otherwise a form opened at once may be replaced by the sign-in form as it re-renders).
  await on.getByRole("button", { name: "Sign out" }).waitFor({ state: "detached" });
  await on.getByRole("button", { name: "Sign in" }).waitFor();
}

Deno.test(
  "setup: the dev stack with its mail catcher and confirmations on, the build at its site address, a receiver",
  opts,
  async () => {
    const [sitePort, mailWeb, mailSmtp] = [freePort(), freePort(), freePort()];
    stack = await startDevStack({
      allowRun: true,
      env: {
        WEB_DEV: "false",
        MAIL_WEB_PORT: String(mailWeb),
        MAIL_SMTP_PORT: String(mailSmtp),
        GOTRUE_MAILER_AUTOCONFIRM: "false",
        // Where the invitation mail's link leads: this test's static host of the build.
        SITE_URL: `http://127.0.0.1:${sitePort}`,
      },
    });
    inbox = `http://127.0.0.1:${mailWeb}`;
    webDir = await buildWeb(stack.url, stack.anonKey);
    site = serveStatic(webDir, sitePort);
    receiver = await startReceiver();
    browser = await launchBrowser();
    page = await openPage(browser, consoleLines);
  },
);

// Walk 1: from sign-up to the first delivered webhook ------------------------------------------------------

Deno.test("walk 1: create an account, confirmed from the inbox", opts, async () => {
  await page.goto(site.url);
  await page.waitForURL(/\/auth$/);
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await check(page, "sign-in");
  await createAccount(page, FOUNDER, "the sign-up form");
  await check(page, "sign-up-sent");

  const link = linkOf(await inboxMail(inbox, FOUNDER, /Confirm your e-mail address/));
  assert(link?.startsWith(`${site.url}/auth#token_hash=`), `the link leads to the site: ${link}`);
  await page.goto(link!);
  await page.getByText("Your e-mail address is confirmed. Welcome!").waitFor();
  await page.getByRole("heading", { name: "You are not in an organization" }).waitFor();
  await check(page, "no-organization");
});

Deno.test("walk 1: create the organization, and land in it as its administrator", opts, async () => {
  await page.getByRole("link", { name: "Create an organization" }).click();
  await page.waitForURL(/\/settings\/organization\/new$/);
  await page.getByRole("heading", { name: "New organization", level: 1 }).waitFor();
  await focusOn(page, "arriving at New organization", onMain);
  await page.getByLabel("Name").fill(CHURCH);
  await page.getByLabel("Time zone").selectOption("Europe/Dublin");
  await page.getByLabel("Contact e-mail (optional)").fill(`office@stbrigid-${run}.example`);
  await check(page, "new-organization");
  await page.getByRole("button", { name: "Create organization" }).click();
  await page.getByText(`${CHURCH} is ready, and you are its administrator.`).waitFor();
  await page.waitForURL(/\/settings\/integrations\/webhooks$/);
  await page.getByRole("banner").getByText(`Working in ${CHURCH}`).waitFor();
  await page.getByRole("heading", { name: "No endpoints yet", level: 2 }).waitFor();
  await check(page, "webhooks-empty");
  const [row] = await sql()<{ id: string; role: string }[]>`
    select o.id, p.role from public.organizations o join public.profiles p on p.organization_id = o.id
    join auth.users u on u.id = p.user_id where u.email = ${FOUNDER}`;
  assertEquals(row?.role, "admin");
  organizationId = row!.id;
});

Deno.test("walk 1: connect the checkout provider; its signed test passes", opts, async () => {
  await goTo(page, "Connections", /\/settings\/integrations\/connections$/);
  assertEquals(
    await page.getByText(`${CHURCH} is ready`).count(),
    0,
    "the notice of what just happened stays on the page it was said on",
  );
  const checkout = page.locator("section.connection").filter({
    has: page.getByRole("heading", { name: "Checkout provider (subscriptions)", level: 2 }),
  });
  await checkout.getByText(`${stack.url}/functions/v1/checkout-webhook/${organizationId}`, { exact: true })
    .waitFor();
  await check(page, "connections");
  await checkout.getByRole("button", { name: "Set secret" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Webhook secret").waitFor();
  await focusOn(page, "the secret dialog", inside(dialog));
  await dialog.getByLabel("Webhook secret").fill(CHECKOUT_SECRET);
  await check(page, "connections-secret");
  await dialog.getByRole("button", { name: "Save secret" }).click();
  await dialog.waitFor({ state: "hidden" });
  await checkout.getByTestId("secret-state").getByText(CHECKOUT_SECRET.slice(-4)).waitFor();
  await checkout.getByRole("button", { name: "Send a signed test" }).click();
  await checkout.getByText(/Test delivered: the receiver verified the signature and logged it/).waitFor();
  await check(page, "connections-tested");
});

Deno.test(
  "walk 1: invite a staff member who has no account; they sign up on the invitation page and join",
  opts,
  async () => {
    await goTo(page, "People", /\/settings\/people$/);
    const members = page.getByRole("region", { name: "Members" });
    await members.getByRole("row").filter({ hasText: FOUNDER }).waitFor();
    await check(page, "people");
    await page.getByRole("textbox", { name: "E-mail" }).fill(STAFF);
    await page.getByLabel("Role").selectOption("staff");
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByText(`Invitation sent to ${STAFF} as staff.`).waitFor();
    await check(page, "people-invited");

    const mail = await inboxMail(inbox, STAFF, /invited to join/);
    const link = new RegExp(`${site.url}/invitations/accept#token=inv_[0-9a-f]{64}`).exec(mail.text)?.[0];
    assert(link, `the invitation mail links to the site: ${mail.text}`);

    const invitee = await openPage(browser, consoleLines);
    await invitee.goto(link);
    // Before signing in: who invited whom to which church, on Create account with the address filled in.
    await invitee.getByText(`invited you to join ${CHURCH} as staff.`).waitFor();
    await invitee.getByRole("heading", { name: "Create an account", level: 1 }).waitFor();
    assertEquals(await invitee.getByLabel("E-mail").inputValue(), STAFF, "the invited address is filled in");
    await check(invitee, "invitation-signed-out");
    await fillAccount(invitee, STAFF);
    await focusOn(invitee, "the invitation's sign-up form, sent", (f) => f.tag !== "body");
    await check(invitee, "invitation-code");
    const code = codeOf(await inboxMail(inbox, STAFF, /Confirm your e-mail address/));
    assert(code, "the confirmation mail carries a code");
    await invitee.getByLabel("Code from the e-mail").fill(code!);
    await invitee.getByRole("button", { name: "Continue" }).click();
    await invitee.getByRole("button", { name: `Join ${CHURCH}` }).waitFor();
    await focusOn(invitee, "the invitation, signed in", (f) => f.tag !== "body");
    await check(invitee, "invitation");
    await invitee.getByRole("button", { name: `Join ${CHURCH}` }).click();
    await invitee.getByText(`You have joined ${CHURCH}.`).waitFor();
    await invitee.getByRole("button", { name: `Open ${CHURCH}` }).click();
    await invitee.getByRole("banner").getByText(`Working in ${CHURCH}`).waitFor();
    // Staff land on what they may see: the church's details, not a page for administrators.
    await invitee.waitForURL(/\/settings\/organization$/);
    await invitee.getByText("Its administrators change these").waitFor();
    await check(invitee, "invitee-joined");
    await invitee.close();

    // The administrator sees them on People the next time she opens it.
    await goTo(page, "Webhooks", /\/settings\/integrations\/webhooks$/);
    await goTo(page, "People", /\/settings\/people$/);
    await members.getByRole("row").filter({ hasText: STAFF }).getByText("Staff").waitFor();
    await page.getByRole("heading", { name: "No open invitations" }).waitFor();
    await check(page, "people-joined");
  },
);

Deno.test(
  "walk 1: add an endpoint at the church's receiver; a member.created delivery arrives signed and shows in the logs",
  opts,
  async () => {
    await goTo(page, "Webhooks", /\/settings\/integrations\/webhooks$/);
    await page.getByRole("button", { name: "Add your first endpoint" }).click();
    const url = page.getByLabel("Endpoint URL");
    await url.waitFor();
    await focusOn(page, "the new endpoint form", async (f) => f.id === await url.getAttribute("id"));
    await url.fill(`${receiver.url}/church-crm`);
    await page.getByLabel("member.created").check();
    await page.getByLabel("Description (optional)").fill("Church CRM");
    await check(page, "endpoint-form");
    await page.getByRole("button", { name: "Add endpoint", exact: true }).click();
    const secretField = page.getByRole("textbox", { name: "Signing secret" });
    await secretField.waitFor();
    await focusOn(page, "the new secret", (f) => /^Endpoint added: /.test(f.text));
    const secret = await secretField.inputValue();
    assertMatch(secret, /^whsec_/);
    await check(page, "endpoint-secret");
    await page.getByRole("button", { name: "I have saved the secret" }).click();
    const card = page.locator("li.card").filter({ hasText: "Church CRM" });
    await card.getByText("Nothing sent yet").waitFor();

    // A real member.created comes from the church's records (the wider app's members table), which the
    // settings area does not edit. Without SQL, the Webhooks page's test event of that type is the way:
    // the example body of member.created, signed and delivered exactly as a real one, marked "test".
    await card.getByRole("button", { name: "Send test event" }).click();
    const dialog = page.getByRole("dialog", { name: "Send a test event" });
    await dialog.getByLabel("Event type").selectOption("member.created");
    await focusOn(page, "the test event dialog", inside(dialog));
    await check(page, "test-event");
    await dialog.getByRole("button", { name: "Send test" }).click();
    await card.getByText("Test event sent (member.created)").waitFor();
    const [delivered] = await receiver.waitFor(1, 15_000);
    assertEquals(delivered!.path, "/church-crm");
    assertEquals(delivered!.headers.get("x-webhook-event"), "member.created");
    assert(await verifies(delivered!, secret), "the receiver verifies it with the secret from the page");
    const body = JSON.parse(delivered!.text);
    assertEquals([body.type, body.organization_id, body.test], ["member.created", organizationId, true]);
    // The card says how it went within seconds, not at the list's next refresh (every 15 s).
    await card.getByText("Delivered (HTTP 200)").waitFor({ timeout: 5_000 });
    await check(page, "webhooks");
    await docsImage(page.locator("main"), "webhooks-page");

    await goTo(page, "Webhook Logs", /\/settings\/integrations\/webhook-logs$/);
    const logRow = page.locator("table.logs tbody tr").filter({ hasText: "member.created" }).first();
    await logRow.getByText("Delivered").waitFor();
    await check(page, "webhook-logs");
    await logRow.getByRole("button", { name: /show details/ }).click();
    const shown = page.getByLabel("Body", { exact: true });
    await shown.waitFor();
    assertEquals(await shown.textContent(), delivered!.text, "the log shows the bytes that were sent");
    await page.locator("ol.attempts").getByText("HTTP 200").waitFor();
    await check(page, "webhook-logs-detail");
    await docsImage(page.locator("main"), "webhook-logs-delivery");
  },
);

// Walk 2: a password reset; a suspension and its audit trail -----------------------------------------------

Deno.test(
  "walk 2: the administrator forgets her password and resets it through the inbox",
  opts,
  async () => {
    await signOut(page);
    await page.getByRole("button", { name: "Forgot your password?" }).click();
    await page.getByRole("heading", { name: "Reset your password" }).waitFor();
    await focusOn(page, "the reset form", onHeading);
    await page.getByLabel("E-mail").fill(FOUNDER);
    await page.getByRole("button", { name: "Send me a link" }).click();
    await page.getByText(`If ${FOUNDER} has an account, we sent it an e-mail`).waitFor();
    await check(page, "forgot-sent");
    const link = linkOf(await inboxMail(inbox, FOUNDER, /Reset your password/));
    assert(link?.startsWith(`${site.url}/auth/reset#token_hash=`), `the link: ${link}`);
    await page.goto(link!);
    await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await check(page, "new-password");
    await page.getByLabel("New password", { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel("New password again").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByText("Your password has been changed.").waitFor();
    await check(page, "password-changed");

    await signOut(page);
    await signIn(page, FOUNDER, PASSWORD);
    await page.getByRole("alert").filter({ hasText: "do not match" }).waitFor();
    await signIn(page, FOUNDER, NEW_PASSWORD);
    await page.waitForURL(/\/settings\/integrations\/webhooks$/);
    await page.getByRole("banner").getByText(`Working in ${CHURCH}`).waitFor();
  },
);

const organizationRow = () =>
  ops.getByRole("region", { name: "Organizations" }).getByRole("row").filter({ hasText: CHURCH });

Deno.test(
  "walk 2: a colleague of the platform signs up and is made its administrator with npm run platform:superadmin",
  opts,
  async () => {
    ops = await openPage(browser, consoleLines);
    await ops.goto(`${site.url}/auth/signup`);
    await fillAccount(ops, OPS);
    await ops.goto(linkOf(await inboxMail(inbox, OPS, /Confirm your e-mail address/))!);
    await ops.getByRole("heading", { name: "You are not in an organization" }).waitFor();

    // The operator's documented command (docs/operations.md), as written, on this run's database.
    const made = await new Deno.Command("npm", {
      args: ["run", "-s", "platform:superadmin", "--", "--email", OPS],
      cwd: new URL("../../", import.meta.url).pathname,
      env: { SUPABASE_DB_URL: testDbUrl() },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(made.stdout) + new TextDecoder().decode(made.stderr);
    assert(made.success, said);
    assertMatch(said, /is a platform superadmin: sign in again/);

    await signOut(ops);
    await signIn(ops, OPS, PASSWORD);
    await ops.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Platform console" })
      .waitFor();
  },
);

Deno.test(
  "walk 2: the platform administrator suspends the church, saying why; its administrator reads why at once",
  opts,
  async () => {
    await goTo(ops, "Platform console", /\/settings\/platform\/organizations$/);
    await ops.getByLabel("Name contains").fill(CHURCH);
    await ops.getByRole("button", { name: "Search" }).click();
    await organizationRow().getByText("Healthy").waitFor();
    await check(ops, "platform-console");
    await organizationRow().getByRole("button", { name: `Suspend ${CHURCH}` }).click();
    const dialog = ops.getByRole("dialog", { name: `Suspend ${CHURCH}?` });
    await dialog.getByLabel("Reason").waitFor();
    await focusOn(ops, "the suspend dialog", inside(dialog));
    await dialog.getByLabel("Reason").fill(REASON);
    await check(ops, "suspend-dialog");
    await dialog.getByRole("button", { name: "Suspend organization" }).click();
    await organizationRow().getByText(REASON).waitFor();
    await focusOn(
      ops,
      "after suspending: on the organization's next action",
      (f) => f.label === `Resume ${CHURCH}`,
    );

    await page.reload();
    const note = page.getByRole("note").filter({ hasText: `${CHURCH} is suspended` });
    await note.waitFor();
    // The reason was written for her: she reads it while it lasts, not only in the log afterwards.
    await note.getByText(REASON).waitFor();
    await check(page, "suspended");
  },
);

Deno.test(
  "walk 2: the platform administrator resumes it; the church's administrator reads both in the Audit log",
  opts,
  async () => {
    await organizationRow().getByRole("button", { name: `Resume ${CHURCH}` }).click();
    const dialog = ops.getByRole("dialog", { name: `Resume ${CHURCH}?` });
    await dialog.getByLabel("Note (optional)").fill("Resolved with the card provider");
    await dialog.getByRole("button", { name: "Resume organization" }).click();
    await organizationRow().getByText("Healthy").waitFor();

    await page.reload();
    await page.locator("li.card").filter({ hasText: "Church CRM" }).waitFor();
    await goTo(page, "Audit log", /\/settings\/organization\/audit-log$/);
    const log = page.getByRole("region", { name: "Audit log" });
    await log.getByText("Resumed the organization").waitFor();
    // What the platform's administrators did, among the church's own changes.
    await page.getByLabel("Kind of actor").selectOption("platform_admin");
    await page.waitForURL(/by=platform_admin/);
    await log.getByText("Suspended the organization").waitFor();
    const rows = await log.getByRole("row").allTextContents();
    assertEquals(rows.length, 3, rows.join(" | "));
    assertMatch(rows[1]!, /Resumed the organization.*Resolved with the card provider/);
    assertMatch(rows[2]!, new RegExp(`Suspended the organization.*${REASON}`));
    await check(page, "audit-log");
  },
);

Deno.test(
  "no accessibility or focus problem on any screen of the walks; nothing wrong in the console",
  opts,
  () => {
    assertEquals(problems, []);
    assertEquals(consoleProblems(consoleLines), []);
  },
);

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await receiver?.close();
  await stack?.stop();
  if (webDir) await Deno.remove(webDir, { recursive: true });
  await closeSql();
});
