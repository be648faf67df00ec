// The link an invitation e-mail carries, followed in a real browser: {site}/invitations/accept#token=…
// opens the settings UI, which says who invited whom to which church before anyone signs in, opens on
// Create account with the invited address filled in (an existing account is one click away: Sign in),
// and joins only when they say so; afterwards the token is out of the address bar, and the used link
// says it no longer works. Two invitees: one new, one with an account. axe at every impact at 1280x800
// and 390x844, and where focus lands after each step. Against the real dev stack and the production
// build on a static host that applies the build's _headers (so under the site's Content-Security-Policy).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  docsImage,
  focused,
  launchBrowser,
  openPage,
  serveStatic,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const PASSWORD = "demo-password long enough";

/** Focus is somewhere other than <body> (given a moment to arrive), else a problem in words. */
async function focusMoved(page: Page, step: string, problems: string[]) {
  const until = Date.now() + 2_000;
  for (;;) {
    const f = await focused(page);
    if (f.tag !== "body" && f.tag !== "") return;
    if (Date.now() > until) {
      problems.push(`${step}: focus fell to <body>`);
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test(
  "an invitation link names the church and who invited; a new person creates an account, one with an account signs in; both join",
  opts,
  async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const church = `Hope Church ${run}`;
    const inviter = `Pastor Ruth ${run}`;
    const admin = await upsertDevUser({
      email: `admin-${run}@hope.example`,
      password: PASSWORD,
      organization: church,
      role: "admin",
    });
    await sql()`update public.profiles set display_name = ${inviter}
                where user_id = ${admin.userId} and organization_id = ${admin.organizationId!}`;
    const existing = await upsertDevUser({ email: `deacon-${run}@hope.example`, password: PASSWORD });
    const newcomer = `newhire-${run}@hope.example`;
    const stack = await startDevStack();
    const webDir = await buildWeb(stack.url, stack.anonKey);
    const site = serveStatic(webDir);
    const browser = await launchBrowser();
    const problems: string[] = [];
    const consoleLines: string[] = [];
    try {
      const signedIn = await (await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: stack.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email: admin.email, password: PASSWORD }),
      })).json();
      const inviteLink = async (email: string, role: string) => {
        const invitation = await (await fetch(`${stack.url}/functions/v1/webhooks/invitations`, {
          method: "POST",
          headers: { authorization: `Bearer ${signedIn.access_token}`, "content-type": "application/json" },
          body: JSON.stringify({ email, role }),
        })).json();
        return `${site.url}/invitations/accept#token=${invitation.token}`;
      };
      const memberRole = async (userId: string) =>
        (await sql()<{ role: string }[]>`
          select role from public.profiles where user_id = ${userId} and organization_id = ${admin
          .organizationId!}`)[0]?.role;

      // 1. Someone without an account.
      const link = await inviteLink(newcomer, "staff");
      const page = await openPage(browser, consoleLines);
      await page.goto(link);
      const main = page.getByRole("main");
      await main.getByText(`${inviter} invited you to join ${church} as staff.`).waitFor();
      await main.getByText(`It was sent to ${newcomer}`).waitFor();
      await page.getByRole("heading", { name: "Create an account", level: 1 }).waitFor();
      assertEquals(await page.getByLabel("E-mail").inputValue(), newcomer, "the address is filled in");
      const said = await main.innerText();
      assertEquals(said.split(church).length - 1, 1, `the church is named once: ${said}`);
      assertEquals(said.split("invited you").length - 1, 1, `the invitation is said once: ${said}`);
      assertEquals(
        await main.getByRole("button", { name: "Sign in" }).count(),
        1,
        "Sign in is one click away",
      );
      problems.push(...await captureAndCheck(page, "invitation-new-person", { everyImpact: true }));
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Create account" }).click();
      // The local Supabase Auth confirms at sign-up as config.toml ships (the journey test walks the
      // hosted way, with the code from the inbox): signed in at once, on the same link.
      await main.getByText(`${inviter} invited you to join ${church} as staff.`).waitFor();
      await main.getByText(`You are signed in as ${newcomer}.`).waitFor();
      await focusMoved(page, "after Create account", problems);
      assertEquals(new URL(page.url()).pathname, "/invitations/accept", "the link kept its address");
      problems.push(...await captureAndCheck(page, "invitation", { everyImpact: true }));
      await docsImage(main, "invitation-accept");
      await page.getByRole("button", { name: `Join ${church}` }).click();
      await page.getByText(`You have joined ${church}.`).waitFor();
      await focusMoved(page, "after Join", problems);
      assertEquals(new URL(page.url()).hash, "", "the used token is out of the address bar");
      const [account] = await sql()<{ id: string }[]>`select id from auth.users where email = ${newcomer}`;
      assertEquals(await memberRole(account!.id), "staff");
      problems.push(...await captureAndCheck(page, "invitation-joined", { everyImpact: true }));
      await page.getByRole("button", { name: `Open ${church}` }).click();
      // Staff land on what they may see: the church's details, not an administrators' page.
      await page.waitForURL(/\/settings\/organization$/);
      await page.getByText("Its administrators change these").waitFor();
      await focusMoved(page, `after Open ${church}`, problems);

      await page.goto(link);
      await page.getByText("This invitation link no longer works").waitFor();
      problems.push(...await captureAndCheck(page, "invitation-used", { everyImpact: true }));
      await page.context().close();

      // 2. Someone with an account: Create account is open, Sign in is one click, the address stays.
      const second = await inviteLink(existing.email, "admin");
      const other = await openPage(browser, consoleLines);
      await other.goto(second);
      await other.getByText(`${inviter} invited you to join ${church} as an administrator.`).waitFor();
      await other.getByRole("button", { name: "Sign in" }).click();
      await other.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
      await focusMoved(other, "after switching to Sign in", problems);
      assertEquals(await other.getByLabel("E-mail").inputValue(), existing.email, "the address is kept");
      problems.push(...await captureAndCheck(other, "invitation-sign-in", { everyImpact: true }));
      await other.getByLabel("Password").fill(PASSWORD);
      await other.getByRole("button", { name: "Sign in" }).click();
      await other.getByRole("button", { name: `Join ${church}` }).waitFor();
      await focusMoved(other, "after Sign in", problems);
      await other.getByRole("button", { name: `Join ${church}` }).click();
      await other.getByText(`You have joined ${church}.`).waitFor();
      await focusMoved(other, "after Join (existing account)", problems);
      assertEquals(await memberRole(existing.userId), "admin");
      await other.context().close();

      assertEquals(problems, []);
      assert(
        !consoleLines.some((l) => l.startsWith("pageerror") || /Content Security Policy/i.test(l)),
        consoleLines.join("\n"),
      );
    } finally {
      await browser.close();
      await site.close();
      await stack.stop();
      await Deno.remove(webDir, { recursive: true });
      await closeSql();
    }
  },
);
