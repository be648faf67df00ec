// Accounts and organizations in a real browser against the real dev stack and the production build:
// with e-mail confirmation on (as the hosted project runs), a new account is confirmed from the mail
// catcher's inbox, a forgotten password is reset through it, and an invitee without an account signs up
// on the invitation page with the mail's code and joins; with the local defaults, a new church signs up,
// creates its organization, edits its details and switches between organizations only when it asks to.
// Mails are read from MailDev's REST API (the inbox `npm run dev` starts). axe finds nothing at any
// impact on the new screens, at 1280 and 390 px.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import { freePort } from "../../tests/helpers/server.ts";
import type { Browser, Page } from "playwright-core";
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
import { codeOf, inboxMail, linkOf } from "./helpers/inbox.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const PASSWORD = "a long enough password";

let browser: Browser;
const problems: string[] = [];
const consoleLines: string[] = [];

async function check(page: Page, name: string) {
  problems.push(
    ...await captureAndCheck(page, `accounts-${name}`, { everyImpact: true }),
  );
}

// With confirmations (the hosted project's setting) --------------------------------------------------------
let confirmStack: DevStack;
let confirmSite: { url: string; close(): Promise<void> };
let inbox: string;

Deno.test(
  "setup: a dev stack that confirms e-mail addresses, its mail catcher, the build, Chromium",
  opts,
  async () => {
    const [web, smtp] = [freePort(), freePort()];
    confirmStack = await startDevStack({
      allowRun: true,
      env: {
        WEB_DEV: "false",
        MAIL_WEB_PORT: String(web),
        MAIL_SMTP_PORT: String(smtp),
        GOTRUE_MAILER_AUTOCONFIRM: "false",
        GOTRUE_RATE_LIMIT_OTP: "1000",
      },
    });
    inbox = `http://127.0.0.1:${web}`;
    confirmSite = serveStatic(
      await buildWeb(confirmStack.url, confirmStack.anonKey),
    );
    browser = await launchBrowser();
  },
);

Deno.test(
  "sign-up: the confirmation link from the inbox signs the new person in",
  opts,
  async () => {
    const page = await openPage(browser, consoleLines);
    const email = `new-${run}@grace.example`;
    await page.goto(`${confirmSite.url}/auth`);
    await page.getByRole("button", { name: "Create an account" }).click();
    await page.waitForURL(/\/auth\/signup$/);
    assertEquals(
      (await focused(page)).text,
      "Create an account",
      "focus starts at the new form's heading",
    );
    await check(page, "signup");
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("alert").filter({ hasText: "too short" }).waitFor();
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText(`We sent a confirmation e-mail to ${email}`).waitFor();
    await check(page, "signup-sent");
    await docsImage(page, "account-signup-sent");

    const mail = await inboxMail(inbox, email, /Confirm your e-mail address/);
    const link = linkOf(mail);
    assert(
      link?.startsWith(`${confirmSite.url}/auth#token_hash=`),
      `the link leads back to the site: ${link}`,
    );
    const fresh = await openPage(browser, consoleLines);
    await fresh.goto(link!);
    await fresh.getByText("Your e-mail address is confirmed. Welcome!")
      .waitFor();
    await fresh.getByRole("heading", { name: "You are not in an organization" })
      .waitFor();
    assert(
      !fresh.url().includes("token_hash"),
      "the token left the address bar",
    );
    await fresh.getByRole("link", { name: "Create an organization" }).waitFor();
    await check(fresh, "no-organization");

    // The same link again: used up.
    const again = await openPage(browser, consoleLines);
    await again.goto(link!);
    await again.getByText("not valid any more").waitFor();
    await again.getByRole("heading", { name: "Sign in" }).waitFor();
    await Promise.all([page.close(), fresh.close(), again.close()]);
  },
);

Deno.test(
  "password reset through the mail catcher: a new password works, the old one does not",
  opts,
  async () => {
    const user = await upsertDevUser({
      email: `forgetful-${run}@grace.example`,
      password: PASSWORD,
    });
    const page = await openPage(browser, consoleLines);
    await page.goto(`${confirmSite.url}/auth`);
    await page.getByRole("button", { name: "Forgot your password?" }).click();
    await page.waitForURL(/\/auth\/forgot$/);
    await check(page, "forgot");
    await page.getByLabel("E-mail").fill(user.email);
    await page.getByRole("button", { name: "Send me a link" }).click();
    await page.getByText(
      `If ${user.email} has an account, we sent it an e-mail`,
    ).waitFor();
    await check(page, "forgot-sent");

    const mail = await inboxMail(inbox, user.email, /Reset your password/);
    const link = linkOf(mail);
    assert(
      link?.startsWith(`${confirmSite.url}/auth/reset#token_hash=`),
      `the link: ${link}`,
    );
    await page.goto(link!);
    await page.getByRole("heading", { name: "Choose a new password" })
      .waitFor();
    assert(
      !page.url().includes("token_hash"),
      "the token left the address bar",
    );
    await check(page, "reset");
    await docsImage(page, "account-reset");
    await page.getByLabel("New password", { exact: true }).fill(
      "the new password 1",
    );
    await page.getByLabel("New password again").fill("the new password 2");
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByRole("alert").filter({ hasText: "not the same" }).waitFor();
    await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("New password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByRole("alert").filter({ hasText: "your current password" })
      .waitFor();
    await page.getByLabel("New password", { exact: true }).fill(
      "the new password",
    );
    await page.getByLabel("New password again").fill("the new password");
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByText("Your password has been changed.").waitFor();

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("E-mail").fill(user.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "do not match" }).waitFor();
    await page.getByLabel("Password").fill("the new password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "You are not in an organization" })
      .waitFor();

    // The used link sends the person to ask for a new one.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.goto(link!);
    await page.getByText("not valid any more").waitFor();
    await page.waitForURL(/\/auth\/forgot$/);
    await page.close();
  },
);

Deno.test(
  "an invitee without an account signs up on the invitation page with the mail's code, and joins",
  opts,
  async () => {
    const church = `Hope Church ${run}`;
    const admin = await upsertDevUser({
      email: `hope-admin-${run}@hope.example`,
      password: PASSWORD,
      organization: church,
      role: "admin",
    });
    const signedIn = await (await fetch(
      `${confirmStack.url}/auth/v1/token?grant_type=password`,
      {
        method: "POST",
        headers: {
          apikey: confirmStack.anonKey,
          "content-type": "application/json",
        },
        body: JSON.stringify({ email: admin.email, password: PASSWORD }),
      },
    )).json();
    const invitee = `newhire-${run}@hope.example`;
    const invited = await fetch(
      `${confirmStack.url}/functions/v1/webhooks/invitations`,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${signedIn.access_token}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ email: invitee, role: "staff" }),
      },
    );
    assertEquals(invited.status, 201);
    await invited.body?.cancel();
    const invitation = await inboxMail(inbox, invitee, /invited to join/);
    const token = /#token=(inv_[0-9a-f]{64})/.exec(invitation.text)?.[1];
    assert(token, "the invitation mail carries its link");

    const page = await openPage(browser, consoleLines);
    await page.goto(`${confirmSite.url}/invitations/accept#token=${token}`);
    // It opens on Create account with the invited address filled in.
    await page.getByText(`invited you to join ${church} as staff.`).waitFor();
    await page.getByRole("heading", { name: "Create an account" }).waitFor();
    assertEquals(await page.getByLabel("E-mail").inputValue(), invitee);
    assertEquals(
      new URL(page.url()).pathname,
      "/invitations/accept",
      "the invitation link stays",
    );
    await page.getByLabel("E-mail").fill(invitee);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText(`We sent a confirmation e-mail to ${invitee}`)
      .waitFor();
    const code = codeOf(
      await inboxMail(inbox, invitee, /Confirm your e-mail address/),
    );
    assert(code, "the confirmation mail carries a code");
    await page.getByLabel("Code from the e-mail").fill("000000");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("alert").filter({ hasText: "not valid any more" })
      .waitFor();
    await page.getByLabel("Code from the e-mail").fill(code!);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText(`invited you to join ${church} as staff.`)
      .waitFor();
    await page.getByRole("button", { name: `Join ${church}` }).click();
    await page.getByText(`You have joined ${church}.`).waitFor();
    await page.getByRole("button", { name: `Open ${church}` }).click();
    await page.getByRole("banner").getByText(`Working in ${church}`).waitFor();
    const [row] = await sql()`select p.role from public.profiles p join auth.users u on u.id = p.user_id
                            where u.email = ${invitee} and p.organization_id = ${admin
      .organizationId!}`;
    assertEquals(row?.role, "staff");
    await page.close();
  },
);

/** Signs in at the confirming stack's Auth over HTTP: the status, and the access token when it worked. */
async function passwordGrant(email: string, password: string) {
  const res = await fetch(`${confirmStack.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: confirmStack.anonKey, "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body = await res.json();
  return { status: res.status, token: body.access_token as string | undefined };
}

Deno.test(
  "Change password (in the header) asks for the current password; a wrong one is refused",
  opts,
  async () => {
    const user = await upsertDevUser({
      email: `changer-${run}@grace.example`,
      password: PASSWORD,
      organization: `Changer Church ${run}`,
      role: "admin",
    });
    const page = await openPage(browser, consoleLines);
    await signInAs(page, confirmSite.url, user.email, PASSWORD);
    await page.getByRole("banner").getByRole("link", { name: "Change password" }).click();
    await page.getByRole("heading", { name: "Change your password" }).waitFor();
    await check(page, "change-password");
    await page.getByLabel("Current password").fill("not my password");
    await page.getByLabel("New password", { exact: true }).fill("a changed password");
    await page.getByLabel("New password again").fill("a changed password");
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByRole("alert").filter({ hasText: "not your current password" }).waitFor();
    assertEquals((await passwordGrant(user.email, "a changed password")).status, 400);
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Save new password" }).click();
    await page.getByText("Your password has been changed.").waitFor();
    assertEquals((await passwordGrant(user.email, "a changed password")).status, 200);
    await page.close();
  },
);

Deno.test(
  "an invitee whose address someone else signed up first sets their own password before joining",
  opts,
  async () => {
    const church = `Grace Chapel ${run}`;
    const admin = await upsertDevUser({
      email: `grace-admin-${run}@grace.example`,
      password: PASSWORD,
      organization: church,
      role: "admin",
    });
    const invitee = `pastor-${run}@grace.example`;
    const squatted = await fetch(`${confirmStack.url}/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: confirmStack.anonKey, "content-type": "application/json" },
      body: JSON.stringify({ email: invitee, password: "the squatter's password" }),
    });
    assertEquals(squatted.status, 200);
    await squatted.body?.cancel();
    const { token: adminToken } = await passwordGrant(admin.email, PASSWORD);
    const invited = await fetch(`${confirmStack.url}/functions/v1/webhooks/invitations`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ email: invitee, role: "admin" }),
    });
    assertEquals(invited.status, 201);
    await invited.body?.cancel();
    const token = /#token=(inv_[0-9a-f]{64})/.exec(
      (await inboxMail(inbox, invitee, /invited to join/)).text,
    )?.[1];
    assert(token, "the invitation mail carries its link");
    await new Promise((r) => setTimeout(r, 1_100)); // max_frequency: one confirmation mail a second

    const page = await openPage(browser, consoleLines);
    await page.goto(`${confirmSite.url}/invitations/accept#token=${token}`);
    await page.getByRole("heading", { name: "Create an account" }).waitFor();
    await page.getByLabel("E-mail").fill(invitee);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByText(`We sent a confirmation e-mail to ${invitee}`).waitFor();
    // The second confirmation mail (the first went to the squatter's sign-up).
    let code: string | undefined;
    for (let i = 0; i < 150 && !code; i++) {
      const list = await (await fetch(`${inbox}/api/email`)).json() as {
        subject: string;
        html: string;
        to: { address: string }[];
      }[];
      const mine = list.filter((m) =>
        m.to.some((t) => t.address === invitee) && /Confirm your e-mail address/.test(m.subject)
      );
      if (mine.length >= 2) code = /<strong>(\d{6})<\/strong>/.exec(mine.at(-1)!.html)?.[1];
      else await new Promise((r) => setTimeout(r, 200));
    }
    assert(code, "the owner's confirmation mail");
    await page.getByLabel("Code from the e-mail").fill(code!);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByText(`invited you to join ${church} as an administrator.`).waitFor();
    await page.getByRole("button", { name: `Join ${church}` }).click();
    await page.getByRole("heading", { name: "Set a new password first" }).waitFor();
    await check(page, "invitation-new-password");
    assertEquals(await page.getByLabel("Current password").count(), 0, "the mail's code proved the address");
    await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
    await page.getByLabel("New password again").fill(PASSWORD);
    await page.getByRole("button", { name: "Save password and join" }).click();
    await page.getByText(`You have joined ${church}.`).waitFor();
    assertEquals((await passwordGrant(invitee, "the squatter's password")).status, 400);
    assertEquals((await passwordGrant(invitee, PASSWORD)).status, 200);
    await page.close();
  },
);

Deno.test("stop the confirming stack", opts, async () => {
  await confirmSite.close();
  await confirmStack.stop();
});

// As shipped locally (addresses confirmed at sign-up) ---------------------------------------------------------
let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let page: Page;
const founder = `founder-${run}@newchurch.example`;
const first = `New Life ${run}`;
const second = `Second Site ${run}`;

Deno.test("setup: the dev stack as shipped and the build", opts, async () => {
  stack = await startDevStack({
    env: { GOTRUE_RATE_LIMIT_OTP: "1000", WEBHOOKS_DEV_DISPATCH: "false" },
  });
  site = serveStatic(await buildWeb(stack.url, stack.anonKey));
  page = await openPage(browser, consoleLines);
});

Deno.test(
  "a new church: sign up, create its organization (name checked at the field), and land in it",
  opts,
  async () => {
    await page.goto(`${site.url}/auth/signup`);
    await page.getByLabel("E-mail").fill(founder);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("heading", { name: "You are not in an organization" })
      .waitFor();
    await page.getByRole("link", { name: "Create an organization" }).click();
    await page.waitForURL(/\/settings\/organization\/new$/);
    await page.getByRole("heading", { name: "New organization" }).waitFor();
    await check(page, "new-organization");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByText("Give your organization a name.").waitFor();
    assertEquals((await focused(page)).tag, "input", "focus on the name");
    // A right-to-left override: the API refuses it at the field, in words.
    await page.getByLabel("Name").fill(`Grace\u202eChapel`);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByText(
      "The name contains U+202E, a control, invisible or blank-looking character: remove it.",
    ).waitFor();
    await check(page, "new-organization-error");
    await page.getByLabel("Name").fill(first);
    await page.getByLabel("Time zone").selectOption("Europe/London");
    await page.getByLabel("Contact e-mail (optional)").fill(
      `office-${run}@newchurch.example`,
    );
    await docsImage(page, "organization-new");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByText(`${first} is ready, and you are its administrator.`)
      .waitFor();
    await page.waitForURL(/\/settings\/integrations\/webhooks$/);
    await page.getByRole("banner").getByText(`Working in ${first}`).waitFor();
    await page.getByRole("heading", { name: "No endpoints yet" }).waitFor();
    const [row] = await sql()`select o.time_zone, o.contact_email, p.role from public.organizations o
    join public.profiles p on p.organization_id = o.id join auth.users u on u.id = p.user_id
    where u.email = ${founder}`;
    assertEquals([row?.time_zone, row?.contact_email, row?.role], [
      "Europe/London",
      `office-${run}@newchurch.example`,
      "admin",
    ]);
  },
);

Deno.test(
  "Settings > Organization: an admin changes name, time zone and contact address",
  opts,
  async () => {
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", {
      name: "Organization",
    }).click();
    await page.waitForURL(/\/settings\/organization$/);
    await page.getByLabel("Name").waitFor();
    assertEquals(await page.getByLabel("Name").inputValue(), first);
    await check(page, "organization");
    await page.getByLabel("Name").fill(`${first} Leeds`);
    await page.getByLabel("Time zone").selectOption("Asia/Tokyo");
    await page.getByLabel("Contact e-mail (optional)").fill("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText(`Saved. ${first} Leeds's settings are up to date.`)
      .waitFor();
    assertEquals(
      (await focused(page)).text,
      "Save changes",
      "focus stays where the action came from",
    );
    await page.getByRole("banner").getByText(`Working in ${first} Leeds`)
      .waitFor();
    await docsImage(page, "organization-settings");
    const [row] = await sql()`select name, time_zone, contact_email from public.organizations
                            where name = ${`${first} Leeds`}`;
    assertEquals([row?.time_zone, row?.contact_email], ["Asia/Tokyo", null]);
  },
);

Deno.test(
  "the switcher offers New organization; a name of one's own again is refused at the field",
  opts,
  async () => {
    await page.getByRole("banner").getByRole("link", {
      name: "New organization",
    }).click();
    await page.waitForURL(/\/settings\/organization\/new$/);
    await page.getByLabel("Name").fill(`${first} LEEDS`);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByText("is the name of another organization you belong to")
      .waitFor();
    await page.getByLabel("Name").fill(second);
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("banner").getByText(`Working in ${second}`).waitFor();
  },
);

Deno.test(
  "the switcher: arrow keys choose, only Switch switches; then 'Working in' says where, and focus is back on it",
  opts,
  async () => {
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Organization" })
      .click();
    await page.getByLabel("Name").waitFor();
    assertEquals(await page.getByLabel("Name").inputValue(), second);
    const switcher = page.getByRole("banner").getByLabel("Organization");
    await switcher.waitFor();
    const requests: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("active-organization")) requests.push(r.url());
    });
    await switcher.focus();
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowUp");
    await page.waitForTimeout(500);
    assertEquals(
      requests.length,
      0,
      "moving through the list switches nothing",
    );
    await page.getByRole("banner").getByText(`Working in ${second}`).waitFor();
    await switcher.selectOption({ label: `${first} Leeds (admin)` });
    await check(page, "switcher-chosen");
    await page.getByRole("button", { name: "Switch", exact: true }).click();
    await page.getByRole("banner").getByText(`Working in ${first} Leeds`)
      .waitFor();
    assertEquals(requests.length, 1, "one explicit choice, one switch");
    await page.getByLabel("Name").waitFor();
    assertEquals(
      await page.getByLabel("Name").inputValue(),
      `${first} Leeds`,
      "the page shows the organization switched to",
    );
    const f = await focused(page);
    assertEquals(
      [f.tag, f.id],
      ["select", await switcher.getAttribute("id")],
      "focus is back on the switcher",
    );
    assert(
      await page.getByRole("button", { name: "Switch", exact: true })
        .isDisabled(),
      "nothing to switch to now",
    );
    await docsImage(page.getByRole("banner"), "organization-switcher");
  },
);

Deno.test(
  "staff see the organization's details but cannot change them",
  opts,
  async () => {
    const staff = await upsertDevUser({
      email: `staff-${run}@newchurch.example`,
      password: PASSWORD,
      organization: `${first} Leeds`,
    });
    assert(staff.organizationId);
    const other = await openPage(browser, consoleLines);
    await signInAs(other, site.url, staff.email, PASSWORD);
    await other.goto(`${site.url}/settings/organization`);
    await other.getByText("Its administrators change these").waitFor();
    assertEquals(
      await other.getByRole("button", { name: "Save changes" }).count(),
      0,
    );
    await other.locator("dl.facts dd").getByText("Asia/Tokyo", { exact: true }).waitFor();
    await check(other, "organization-staff");
    await other.close();
  },
);

Deno.test(
  "no accessibility violation and no console problem on any screen",
  opts,
  () => {
    assertEquals(problems, []);
    assertEquals(consoleProblems(consoleLines), []);
  },
);

Deno.test("cleanup", opts, async () => {
  await page?.close();
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
  assertMatch(run, /^[0-9a-f]{8}$/);
});
