// Webhook Logs' Retry matching in a real browser (production build, Chromium) against the real dev
// stack: the button is off where a filter cannot be retried in bulk; the preview's count in the
// confirmation; progress that polls; Stop; and the finished job's link to what it queued. Focus after
// each step is never <body>; axe at every impact at 1280x800 and 390x844.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
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
const ADMIN = `bulk-retry-admin-${run}@firstchurch.example`;
const PASSWORD = "demo-password";
const LOGS = "/settings/integrations/webhook-logs";
// The dev stack's API carries the job on by one batch of 1,000 a request (WEBHOOKS_BULK_RETRY_BUDGET_MS=0)
// and the page polls each second: still running about 10 s after it started, when Stop is pressed.
const MANY = 10_000;

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let browser: Browser;
let page: Page;
let organizationId: string;
let many: string;
let few: string;
const problems: string[] = [];
const consoleLines: string[] = [];

async function check(name: string) {
  problems.push(
    ...await captureAndCheck(page, `bulk-retry-${name}`, { everyImpact: true }),
  );
}

/** `count` deliveries of the endpoint that failed with a 503 and are due again in an hour. */
async function failing(endpointId: string, count: number) {
  await sql()`
    with e as (
      insert into public.webhook_events (organization_id, type, payload)
      select ${organizationId}, 'member.created', jsonb_build_object('n', g) from generate_series(1, ${count}::int) g
      returning id
    )
    insert into public.webhook_deliveries (organization_id, event_id, endpoint_id, status, next_attempt_at,
                                           attempt_count, first_attempt_at, last_attempt_at, last_response_status)
    select ${organizationId}, e.id, ${endpointId}, 'retrying', now() + interval '1 hour', 1, now(), now(), 503 from e`;
}

async function notBody(what: string) {
  const f = await focused(page);
  assert(f.tag !== "body", `focus fell to <body> after ${what}`);
  return f;
}

Deno.test(
  "setup: dev stack, an admin with two paused endpoints and failing deliveries, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: PASSWORD,
      organization: `First Church ${run}`,
      role: "admin",
    });
    organizationId = admin.organizationId!;
    await sql()`insert into public.user_active_organization (user_id, organization_id)
              values (${admin.userId}, ${organizationId})
              on conflict (user_id) do update set organization_id = excluded.organization_id`;
    // Paused by their receivers for a day: the dev stack's dispatcher sends none of what is retried.
    const [a, b] = await sql()<{ id: string }[]>`
    insert into public.webhook_endpoints (organization_id, url, events, paused_until)
    values (${organizationId}, 'https://many.example.org/hook', ${[
      "member.created",
    ]}, now() + interval '1 day'),
           (${organizationId}, 'https://few.example.org/hook', ${[
      "member.created",
    ]}, now() + interval '1 day')
    returning id`;
    many = a!.id;
    few = b!.id;
    await failing(many, MANY);
    await failing(few, 3);
    // The every-minute job carries running retries on as well: held off for this file, so that only the
    // page's request and polls move the large one, and Stop finds it still running.
    await sql()`select cron.alter_job(jobid, schedule => '0 0 31 2 *') from cron.job where jobname = 'webhook-bulk-retry'`;
    stack = await startDevStack({ env: { WEBHOOKS_BULK_RETRY_BUDGET_MS: "0" } });
    site = serveStatic(await buildWeb(stack.url, stack.anonKey));
    browser = await launchBrowser();
    page = await openPage(browser, consoleLines);
    await signInAs(page, site.url, ADMIN, PASSWORD);
  },
);

Deno.test(
  "Retry matching: off where a filter cannot be retried in bulk",
  opts,
  async () => {
    await page.goto(`${site.url}${LOGS}?status=delivered`);
    const button = page.getByRole("button", { name: "Retry matching…" });
    await button.waitFor();
    assert(
      await button.isDisabled(),
      "delivered deliveries are not retried in bulk",
    );
    await page.getByText(
      "Only retrying and permanently failed deliveries are retried in bulk.",
    ).waitFor();
    await check("delivered");
  },
);

Deno.test(
  "Retry matching: preview, confirm, progress, stop",
  opts,
  async () => {
    await page.goto(`${site.url}${LOGS}?endpoint=${many}&status=retrying`);
    const button = page.getByRole("button", { name: "Retry matching…" });
    await button.click();
    const title = `Retry ${MANY.toLocaleString("en-US")} matching deliveries?`;
    const dialog = page.getByRole("dialog", { name: title });
    await dialog.waitFor();
    assertEquals(
      (await focused(page)).text,
      "Cancel",
      "the confirmation opens on Cancel",
    );
    await check("confirm");
    // Cancel sends nothing and gives focus back to the button.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    assertEquals((await notBody("Cancel")).text, "Retry matching…");
    const [none] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.webhook_bulk_retries where organization_id = ${organizationId}`;
    assertEquals(none!.n, 0, "the preview started nothing");

    await button.click();
    await dialog.getByRole("button", {
      name: `Retry ${MANY.toLocaleString("en-US")}`,
    }).click();
    const status = page.locator(".bulk-retry-status");
    await status.getByText(/^Retrying: /).waitFor({ timeout: 60_000 });
    await notBody("confirming");
    await page.getByRole("progressbar", { name: "Bulk retry progress" })
      .waitFor();
    await page.getByRole("button", { name: "Stop retrying" }).click();
    await status.getByText(/^Stopped: /).waitFor();
    const after = await notBody("Stop retrying");
    assertMatch(after.text, /^Stopped: /);
    await check("stopped");
    const [job] = await sql()<{ status: string; retried: number }[]>`
    select status, retried from public.webhook_bulk_retries where organization_id = ${organizationId}`;
    assertEquals(job!.status, "cancelled");
    assert(
      job!.retried > 0 && job!.retried < MANY,
      `stopped part way: ${job!.retried}`,
    );
    const [moved] = await sql()<{ n: number }[]>`
    select count(*)::int as n from public.webhook_deliveries where endpoint_id = ${many} and next_attempt_at <= now()`;
    assertEquals(moved!.n, job!.retried, "nothing more was moved after Stop");
  },
);

Deno.test(
  "Retry matching: a small set is done at once, with a link to what it queued",
  opts,
  async () => {
    // Chosen on the page: the last response's class.
    await page.goto(`${site.url}${LOGS}?endpoint=${few}`);
    await page.getByLabel("Last response").selectOption("5xx");
    await page.waitForURL(/class=5xx/);
    await page.getByRole("button", { name: "Retry matching…" }).click();
    await page.getByRole("dialog", { name: "Retry 3 matching deliveries?" })
      .getByRole("button", { name: "Retry 3" })
      .click();
    const status = page.locator(".bulk-retry-status");
    await status.getByText("Done: 3 of 3 matching sent again now.").waitFor();
    await notBody("a finished retry");
    await check("done");
    await status.getByRole("link", { name: "Show them" }).click();
    await page.getByText(/Showing the deliveries one recovery sent again/)
      .waitFor();
    await page.locator("table.logs tbody tr").nth(2).waitFor();
    assertEquals(await page.locator("table.logs tbody tr").count(), 3);
  },
);

Deno.test(
  "no accessibility problem at either size, nothing in the console",
  opts,
  () => {
    assertEquals(problems, []);
    assertEquals(consoleProblems(consoleLines), []);
  },
);

Deno.test("teardown", opts, async () => {
  await sql()`select cron.alter_job(jobid, schedule => '* * * * *') from cron.job where jobname = 'webhook-bulk-retry'`;
  await browser?.close();
  await site?.close();
  await stack?.stop();
  await closeSql();
});
