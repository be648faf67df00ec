// Settings > People in a real browser against the real dev stack: an admin sees the members with role,
// joined date and last sign-in; invites (and is told at the field what is wrong: no address, not an
// address, already a member, mailed too recently), resends, withdraws, changes roles and removes (the
// dialog lists the webhook endpoints the person made, disabled unless kept); the
// last admin can neither step down nor leave (said beside the button); a member sees a change at their
// next page load without signing in again. axe-core finds no violation of any impact in any state, at
// 1280 and 390 px.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import type { Browser, Locator, Page } from "playwright-core";
import {
  buildWeb,
  captureAndCheck,
  consoleProblems,
  docsImage,
  launchBrowser,
  openPage,
  serveStatic,
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const CHURCH = `People Church ${run}`;
const ADMIN = `people-admin-${run}@firstchurch.example`;
const STAFF = `people-staff-${run}@firstchurch.example`;
const HELPER = `people-helper-${run}@firstchurch.example`;
const NEWCOMER = `newcomer-${run}@example.org`;
const LATECOMER = `latecomer-${run}@example.org`;
const JOINER = `joiner-${run}@example.org`;
const PAGE = "/settings/people";

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let helperPage: Page;
let organizationId: string;
const problems: string[] = [];
const lines: string[] = [];

async function check(name: string): Promise<void> {
  problems.push(...await captureAndCheck(page, `people-${name}`, { everyImpact: true }));
}

const members = () => page.getByRole("region", { name: "Members" });
const invitations = () => page.getByRole("region", { name: "Invitations" });
const memberRow = (email: string): Locator => members().getByRole("row").filter({ hasText: email });
const invitationRow = (email: string): Locator => invitations().getByRole("row").filter({ hasText: email });
const emailField = () => page.getByRole("textbox", { name: "E-mail" });

async function roleOf(email: string): Promise<string | null> {
  const [row] = await sql()<{ role: string }[]>`
    select p.role from public.profiles p join auth.users u on u.id = p.user_id
    where u.email = ${email} and p.organization_id = ${organizationId}`;
  return row?.role ?? null;
}

async function openInvitations(email: string) {
  return await sql()<{ id: string; role: string }[]>`
    select id, role from public.organization_invitations
    where email = ${email} and accepted_at is null and revoked_at is null`;
}

/** The mails to `email` queued `seconds` earlier than they were (the per-address limit counts from them). */
const age = (email: string, seconds: number) =>
  sql()`update private.mail_outbox set created_at = created_at - make_interval(secs => ${seconds})
        where recipient = ${email}`;

Deno.test("setup: dev stack, an admin, two staff, the build, Chromium", opts, async () => {
  const admin = await upsertDevUser({
    email: ADMIN,
    password: "demo-password",
    organization: CHURCH,
    role: "admin",
  });
  organizationId = admin.organizationId!;
  await upsertDevUser({ email: STAFF, password: "demo-password", organization: CHURCH });
  await upsertDevUser({ email: HELPER, password: "demo-password", organization: CHURCH });
  await sql()`update public.profiles set created_at = now() - interval '30 days' where organization_id = ${organizationId}`;
  stack = await startDevStack({ env: { WEBHOOKS_DEV_DISPATCH: "false" } });
  site = serveStatic(await buildWeb(stack.url, stack.anonKey));
  browser = await launchBrowser();
  page = await openPage(browser, lines);
  helperPage = await openPage(browser, lines);
});

Deno.test("the helper, staff, is told People is for administrators", opts, async () => {
  await signInAs(helperPage, site.url, HELPER);
  await helperPage.goto(`${site.url}${PAGE}`);
  await helperPage.getByRole("heading", { name: "People are managed by administrators" }).waitFor();
  assertEquals(await helperPage.getByRole("region", { name: "Members" }).count(), 0);
});

Deno.test(
  "an admin finds People and sees each member's role, joined date and last sign-in",
  opts,
  async () => {
    await signInAs(page, site.url, ADMIN);
    await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "People" }).click();
    await page.waitForURL(new RegExp(`${PAGE}$`));
    await memberRow(ADMIN).waitFor();
    assertEquals(await members().getByRole("row").count(), 4, "a header and three members");
    const me = await memberRow(ADMIN).textContent();
    assert(/\(you\)/.test(me!) && /Admin/.test(me!) && /just now/.test(me!), me!);
    const staff = await memberRow(STAFF).textContent();
    assert(/Staff/.test(staff!) && /Never/.test(staff!) && /30 days ago/.test(staff!), staff!);
    const helper = await memberRow(HELPER).textContent();
    assert(/just now|minute/.test(helper!), `the helper signed in: ${helper}`);
    await page.getByRole("heading", { name: "No open invitations" }).waitFor();
    await check("members");
  },
);

Deno.test(
  "inviting: each mistake is said at the e-mail field; a new address gets its invitation",
  opts,
  async () => {
    const send = page.getByRole("button", { name: "Send invitation" });
    await send.click();
    await page.getByText("Enter the e-mail address of the person to invite.").waitFor();
    assertEquals(await emailField().getAttribute("aria-invalid"), "true");

    await emailField().fill("not an address");
    await send.click();
    await page.getByText("This is not an e-mail address.").waitFor();

    await emailField().fill(STAFF);
    await send.click();
    await page.getByText(`${STAFF} is already a member of this organization.`).waitFor();
    await check("invite-error");

    await emailField().fill(NEWCOMER);
    await page.getByLabel("Role").selectOption("admin");
    await send.click();
    await page.getByText(`Invitation sent to ${NEWCOMER} as admin.`).waitFor();
    assertEquals(await emailField().getAttribute("aria-invalid"), null, "the field is fine again");
    assertEquals((await openInvitations(NEWCOMER)).map((i) => i.role), ["admin"]);
    await invitationRow(NEWCOMER).getByText(/Another mail can go in/).waitFor();
    await docsImage(page.locator("main"), "people");
    await page.getByText("Or send the link yourself").click();
    const link = await page.getByRole("textbox", { name: "Invitation link" }).inputValue();
    assert(link.startsWith(`${site.url}/invitations/accept#token=inv_`), link);
    await check("invited");

    // The same address again at once: one mail a minute.
    await emailField().fill(NEWCOMER);
    await send.click();
    await page.getByText(/^This address was sent an invitation recently; another can go in \d+ seconds$/)
      .waitFor();
    const [mails] = await sql()<{ n: number }[]>`
    select count(*)::int as n from private.mail_outbox where recipient = ${NEWCOMER}`;
    assertEquals(mails!.n, 1, "one mail went");
  },
);

Deno.test(
  "resending: too soon is said at the button; a minute later a new link replaces the old",
  opts,
  async () => {
    const resend = invitationRow(NEWCOMER).getByRole("button", {
      name: `Resend the invitation to ${NEWCOMER}`,
    });
    await resend.click();
    await invitationRow(NEWCOMER).getByRole("alert").getByText(/another can go in \d+ seconds/).waitFor();
    assertEquals(await resend.getAttribute("aria-describedby").then((d) => d!.split(" ").length), 2);
    await check("resend-too-soon");

    const [before] = await openInvitations(NEWCOMER);
    await age(NEWCOMER, 61);
    await page.reload();
    await invitationRow(NEWCOMER).waitFor();
    assertEquals(await invitationRow(NEWCOMER).getByText(/Another mail can go/).count(), 0);
    await invitationRow(NEWCOMER).getByRole("button", { name: `Resend the invitation to ${NEWCOMER}` })
      .click();
    await page.getByText(
      `Invitation sent again to ${NEWCOMER}. The link in the earlier mail no longer works.`,
    )
      .waitFor();
    const after = await openInvitations(NEWCOMER);
    assertEquals(after.length, 1);
    assert(after[0]!.id !== before!.id, "a new invitation replaced the old one");
    assertEquals(after[0]!.role, "admin", "with the same role");
  },
);

Deno.test(
  "withdrawing: asks first, then the link stops working; one withdrawn or accepted meanwhile is said so",
  opts,
  async () => {
    await invitationRow(NEWCOMER).getByRole("button", { name: `Withdraw the invitation to ${NEWCOMER}` })
      .click();
    const dialog = page.getByRole("dialog", { name: "Withdraw this invitation?" });
    await dialog.waitFor();
    await check("withdraw-confirm");
    await dialog.getByRole("button", { name: "Withdraw invitation" }).click();
    await page.getByText(`The invitation to ${NEWCOMER} was withdrawn; its link no longer works.`).waitFor();
    assertEquals((await openInvitations(NEWCOMER)).length, 0);
    await page.getByRole("heading", { name: "No open invitations" }).waitFor();

    await emailField().fill(LATECOMER);
    await page.getByRole("button", { name: "Send invitation" }).click();
    await invitationRow(LATECOMER).waitFor();
    // Another admin withdraws it while this page still shows it.
    await sql()`update public.organization_invitations set revoked_at = now() where email = ${LATECOMER}`;
    await invitationRow(LATECOMER).getByRole("button", { name: `Withdraw the invitation to ${LATECOMER}` })
      .click();
    await dialog.getByRole("button", { name: "Withdraw invitation" }).click();
    await dialog.getByRole("alert").getByText("This invitation is no longer open").waitFor();
    await check("withdraw-gone");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("heading", { name: "No open invitations" }).waitFor();

    // Accepted while this page still shows it: resending says so above the list.
    await emailField().fill(JOINER);
    await page.getByRole("button", { name: "Send invitation" }).click();
    await invitationRow(JOINER).waitFor();
    await sql()`update public.organization_invitations set accepted_at = now() where email = ${JOINER}`;
    await invitationRow(JOINER).getByRole("button", { name: `Resend the invitation to ${JOINER}` }).click();
    await page.getByText(
      `The invitation to ${JOINER} is no longer open: it was accepted, withdrawn or replaced.`,
    )
      .waitFor();
    await page.getByRole("heading", { name: "No open invitations" }).waitFor();
    assertEquals((await openInvitations(JOINER)).length, 0, "nothing was sent again");
  },
);

/** Presses a row's Make admin/staff, then the confirmation's button. */
async function makeRole(email: string, role: "admin" | "staff") {
  await memberRow(email).getByRole("button", { name: `Make ${role}: ${email}` }).click();
  await page.getByRole("dialog", { name: `Make ${email} ${role}?` }).getByRole("button", {
    name: `Make ${role}`,
  })
    .click();
}

Deno.test(
  "changing roles: asked first, then at once, and the member sees it at their next page load",
  opts,
  async () => {
    // Asked first: Cancel changes nothing.
    await memberRow(HELPER).getByRole("button", { name: `Make admin: ${HELPER}` }).click();
    const ask = page.getByRole("dialog", { name: `Make ${HELPER} admin?` });
    await ask.getByText("will manage").waitFor();
    await check("make-admin-confirm");
    await ask.getByRole("button", { name: "Cancel" }).click();
    assertEquals(await roleOf(HELPER), "staff");
    await makeRole(HELPER, "admin");
    await memberRow(HELPER).getByText("Admin", { exact: true }).waitFor();
    assertEquals(await roleOf(HELPER), "admin");
    await helperPage.reload();
    await helperPage.getByRole("region", { name: "Members" }).waitFor();

    await makeRole(HELPER, "staff");
    await memberRow(HELPER).getByText("Staff", { exact: true }).waitFor();
    assertEquals(await roleOf(HELPER), "staff");
    await helperPage.reload();
    await helperPage.getByRole("heading", { name: "People are managed by administrators" }).waitFor();

    // Removed by another admin while this page shows them: said above the list.
    await sql()`delete from public.profiles where organization_id = ${organizationId}
              and user_id = (select id from auth.users where email = ${STAFF})`;
    await makeRole(STAFF, "admin");
    await page.getByText(`${STAFF} is no longer a member of this organization.`).waitFor();
    await memberRow(STAFF).waitFor({ state: "detached" });
  },
);

Deno.test(
  "the last admin is offered neither Step down nor Leave; a page that still shows a second admin gets the refusal beside the button",
  opts,
  async () => {
    const row = memberRow(ADMIN);
    await row.getByText("The only admin: make someone else admin before you step down or leave.").waitFor();
    assertEquals(await row.getByRole("button").count(), 0, "nothing the server would refuse");
    await check("last-admin");
    // The helper is admin on this page, then made staff behind its back: the server refuses all the same.
    await makeRole(HELPER, "admin");
    await row.getByRole("button", { name: "Step down to staff" }).waitFor();
    await sql()`update public.profiles set role = 'staff' where organization_id = ${organizationId}
                and user_id = (select id from auth.users where email = ${HELPER})`;
    await row.getByRole("button", { name: "Step down to staff" }).click();
    const stepDown = page.getByRole("dialog", { name: "Step down to staff?" });
    await stepDown.getByRole("button", { name: "Step down" }).click();
    await stepDown.getByRole("alert").getByText(
      /The last admin of an organization cannot be removed or stop being admin/,
    )
      .waitFor();
    await stepDown.getByRole("button", { name: "Cancel" }).click();
    assertEquals(await roleOf(ADMIN), "admin");
  },
);

Deno.test(
  "removing a member: asks first, listing the endpoints they made; they lose access at their next page load",
  opts,
  async () => {
    // An endpoint the helper made while they were admin, sending the church's data to their own URL.
    const url = `https://hooks.helper-${run}.example/members`;
    const [made] = await sql()<{ id: string }[]>`
    insert into public.webhook_endpoints (organization_id, url, events, created_by)
    select ${organizationId}, ${url}, '{member.created}', id from auth.users where email = ${HELPER}
    returning id`;
    await memberRow(HELPER).getByRole("button", { name: `Remove ${HELPER}` }).click();
    const dialog = page.getByRole("dialog", { name: "Remove this person?" });
    await dialog.getByText("loses access to").waitFor();
    await dialog.getByRole("list").getByText(url).waitFor();
    const disable = dialog.getByRole("radio", { name: /Disable them \(recommended\)/ });
    assert(await disable.isChecked(), "disabling them is the default");
    assert(!await dialog.getByRole("radio", { name: "Keep them sending" }).isChecked());
    await check("remove-confirm");
    await dialog.getByRole("button", { name: `Remove ${HELPER}` }).click();
    await page.getByText(`${HELPER} was removed from ${CHURCH}. 1 webhook endpoint they made was disabled.`)
      .waitFor();
    await memberRow(HELPER).waitFor({ state: "detached" });
    assertEquals(await roleOf(HELPER), null);
    const [endpoint] = await sql()<{ enabled: boolean; disabled_reason: string }[]>`
    select enabled, disabled_reason from public.webhook_endpoints where id = ${made!.id}`;
    assertEquals(endpoint, {
      enabled: false,
      disabled_reason: `its creator, ${HELPER}, was removed from the organization by ${ADMIN}`,
    });
    await helperPage.reload();
    await helperPage.getByText(/Your account is not a member of any organization/).waitFor();
  },
);

Deno.test("an admin steps down once there is another admin, and the page follows", opts, async () => {
  const other = await upsertDevUser({
    email: STAFF,
    password: "demo-password",
    organization: CHURCH,
    role: "admin",
  });
  assertEquals(other.organizationId, organizationId);
  await page.reload();
  await memberRow(ADMIN).getByRole("button", { name: "Step down to staff" }).click();
  await page.getByRole("dialog", { name: "Step down to staff?" }).getByRole("button", { name: "Step down" })
    .click();
  await page.getByRole("heading", { name: "People are managed by administrators" }).waitFor();
  assertEquals(await roleOf(ADMIN), "staff");
});

Deno.test("no accessibility problem in any state of the page, and nothing wrong in the console", opts, () => {
  assertEquals(problems, []);
  assertEquals(consoleProblems(lines), []);
});

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
