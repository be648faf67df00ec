// The link an invitation e-mail carries, followed in a real browser: {site}/invitations/accept#token=…
// opens the settings UI, which asks the invitee to sign in (keeping the link), shows what the invitation
// is for, and joins only when they say so; afterwards the token is out of the address bar, and the used
// link says it no longer works. Against the real dev stack and the production build on a static host
// that applies the build's _headers (so under the site's Content-Security-Policy).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import {
  buildWeb,
  captureAndCheck,
  docsImage,
  launchBrowser,
  openPage,
  serveStatic,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const PASSWORD = "demo-password";

Deno.test(
  "an invitation link: sign in, see the invitation, join; the used link no longer works",
  opts,
  async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const church = `Hope Church ${run}`;
    const admin = await upsertDevUser({
      email: `admin-${run}@hope.example`,
      password: PASSWORD,
      organization: church,
      role: "admin",
    });
    const invitee = await upsertDevUser({ email: `newhire-${run}@hope.example`, password: PASSWORD });
    const stack = await startDevStack();
    const webDir = await buildWeb(stack.url, stack.anonKey);
    const site = serveStatic(webDir);
    const browser = await launchBrowser();
    try {
      const signedIn = await (await fetch(`${stack.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: stack.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email: admin.email, password: PASSWORD }),
      })).json();
      const invitation = await (await fetch(`${stack.url}/functions/v1/webhooks/invitations`, {
        method: "POST",
        headers: { authorization: `Bearer ${signedIn.access_token}`, "content-type": "application/json" },
        body: JSON.stringify({ email: invitee.email, role: "staff" }),
      })).json();
      const link = `${site.url}/invitations/accept#token=${invitation.token}`;

      const consoleLines: string[] = [];
      const page = await openPage(browser, consoleLines);

      await page.goto(link);
      await page.getByText("Sign in to see and accept your invitation.").waitFor();
      await page.getByLabel("E-mail").fill(invitee.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText(`You are invited to join ${church} as staff.`).waitFor();
      assertEquals(new URL(page.url()).pathname, "/invitations/accept", "the link kept its address");
      const problems = await captureAndCheck(page, "invitation");
      await docsImage(page.locator("main"), "invitation-accept");

      await page.getByRole("button", { name: `Join ${church}` }).click();
      await page.getByText(`You have joined ${church}.`).waitFor();
      assertEquals(new URL(page.url()).hash, "", "the used token is out of the address bar");
      const [member] = await sql()<{ role: string }[]>`
      select role from public.profiles where user_id = ${invitee.userId} and organization_id = ${admin
        .organizationId!}`;
      assertEquals(member?.role, "staff");
      await page.getByRole("button", { name: `Open ${church}` }).click();
      // Staff land on what they may see: the church's details, not an administrators' page.
      await page.waitForURL(/\/settings\/organization$/);
      await page.getByText("Its administrators change these").waitFor();

      await page.goto(link);
      await page.getByText("This invitation link no longer works").waitFor();
      problems.push(...await captureAndCheck(page, "invitation-used"));
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
