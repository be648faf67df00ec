// Settings > Integrations > Connections in a real browser against the real dev stack: the Payment
// webhooks page's empty state leads here; an admin sets the checkout secret (a bad one refused at the
// field), sends a signed test through the real receiver and sees it delivered and logged; has a
// card-payment secret generated and shown once; registers a WhatsApp number (a bad app secret and a
// number registered twice refused at their fields), gets its verify token once, and sees Meta's
// handshake and the first signed message arrive. No secret reaches the page after it is saved, nor
// localStorage; axe finds nothing serious at 1280 and 390 px on any state shown.
//
// WEB_DOCS_IMAGES=1 also writes the guides' screenshots of these screens to docs/images/.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { closeSql, sql } from "../../tests/helpers/db.ts";
import { type DevStack, startDevStack, upsertDevUser } from "../../tests/helpers/dev_stack.ts";
import {
  change,
  newPhoneNumberId,
  signedPost,
  textMessage,
  webhookBody,
} from "../../tests/helpers/whatsapp.ts";
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
  signInAs,
} from "./helpers/browser.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const run = crypto.randomUUID().slice(0, 8);
const ADMIN = `connections-admin-${run}@firstchurch.example`;
const CHECKOUT_SECRET = `rzp-whsec-${run}-0123456789`;
const APP_SECRET = `meta-app-secret-${run}-abcdef0123`;
const PHONE_NUMBER_ID = newPhoneNumberId();

let stack: DevStack;
let site: { url: string; close(): Promise<void> };
let webDir: string;
let browser: Browser;
let page: Page;
let organizationId: string;
let verifyToken = "";
let generatedSecret = "";
const problems: string[] = [];
const consoleLines: string[] = [];

async function check(name: string) {
  problems.push(...await captureAndCheck(page, `connections-${name}`));
}

const section = (name: string) =>
  page.locator("section.connection").filter({
    has: page.getByRole("heading", { name, level: 2 }),
  });
const checkout = () => section("Checkout provider (subscriptions)");
const cards = () => section("Card payments (payments and refunds)");
const whatsapp = () => section("WhatsApp");

/** The field shows this error, marked invalid and described by it. */
async function refusedAt(field: Locator, message: string | RegExp) {
  await field.and(page.locator("[aria-invalid=true]")).waitFor();
  const describedBy = (await field.getAttribute("aria-describedby"))!.split(
    " ",
  );
  const errorId = describedBy.find((d) => d.endsWith("-err"));
  assert(errorId, "the field is described by an error");
  const error = page.locator(`[id="${errorId}"]`);
  await error.waitFor();
  assertMatch(
    (await error.textContent())!,
    message instanceof RegExp ? message : new RegExp(message),
  );
  assertEquals(await field.getAttribute("aria-invalid"), "true");
}

Deno.test(
  "setup: dev stack, an admin, the production build, Chromium",
  opts,
  async () => {
    const admin = await upsertDevUser({
      email: ADMIN,
      password: "demo-password",
      organization: `Connections Church ${run}`,
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
  },
);

Deno.test(
  "the Payment webhooks page's empty state leads to Connections",
  opts,
  async () => {
    await page.getByRole("link", { name: "Payment webhooks" }).click();
    await page.getByText("No payment notifications yet").waitFor();
    await page.getByRole("main").getByRole("link", { name: "Connections" })
      .click();
    await page.waitForURL(/\/settings\/integrations\/connections$/);
    await page.getByRole("heading", { name: "Connections", level: 1 })
      .waitFor();
    const url = `${stack.url}/functions/v1/checkout-webhook/${organizationId}`;
    await checkout().getByText(url, { exact: true }).waitFor();
    await whatsapp().getByText(
      `${stack.url}/functions/v1/messaging-webhook/${organizationId}`,
      {
        exact: true,
      },
    ).waitFor();
    await checkout().getByText("Not set").waitFor();
    assert(
      await checkout().getByRole("button", { name: "Send a signed test" })
        .isDisabled(),
      "nothing to sign with yet",
    );
    await check("empty");
  },
);

Deno.test(
  "checkout: a bad secret is refused at the field; the saved one shows only its last four characters; the signed test is delivered and logged",
  opts,
  async () => {
    await checkout().getByRole("button", { name: "Set secret" }).click();
    const dialog = page.getByRole("dialog");
    const field = dialog.getByLabel("Webhook secret");
    await field.fill("too short");
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await refusedAt(field, "16 to 256 characters, no spaces");
    assertEquals((await focused(page)).id, await field.getAttribute("id"));
    await check("secret-refused");
    await docsImage(dialog, "connections-secret-dialog");
    // A refusal of the API, in its words, lands at the field too (the request is altered on its way).
    await page.route(
      "**/functions/v1/webhooks/connections/checkout/secret",
      (route) => route.continue({ postData: JSON.stringify({ secret: "x y" }) }),
    );
    await field.fill(CHECKOUT_SECRET);
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await refusedAt(
      field,
      "must be 16 to 256 printable characters without spaces",
    );
    await page.unrouteAll();
    await dialog.getByRole("button", { name: "Save secret" }).click();
    await dialog.waitFor({ state: "hidden" });
    await checkout().getByTestId("secret-state").getByText(
      CHECKOUT_SECRET.slice(-4),
    ).waitFor();
    assert(
      !(await page.content()).includes(CHECKOUT_SECRET),
      "the secret is not on the page once saved",
    );
    const [stored] = await sql()<{ webhook_secret: string }[]>`
    select webhook_secret from public.organization_settings where organization_id = ${organizationId}`;
    assertEquals(stored!.webhook_secret, CHECKOUT_SECRET);

    await checkout().getByRole("button", { name: "Send a signed test" })
      .click();
    await checkout().getByText(
      /Test delivered: the receiver verified the signature and logged it \(HTTP 200, processed\)/,
    )
      .waitFor();
    const [logged] = await sql()<{ event: string; status: string }[]>`
    select event, status from public.inbound_webhook_log
    where organization_id = ${organizationId} and provider = 'checkout' and signature_valid`;
    assertEquals(logged, { event: "connection.test", status: "processed" });
    await checkout().locator("code", { hasText: "connection.test" }).waitFor();
    // Card payments use the checkout secret until they have their own.
    await cards().getByText("Not set: the checkout provider's secret is used")
      .waitFor();
    await check("checkout-set");
    await docsImage(checkout(), "connections-checkout");
  },
);

Deno.test(
  "card payments: a generated secret is shown once, then only its last four characters",
  opts,
  async () => {
    await cards().getByRole("button", { name: "Set secret" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Generate one for me to enter at the provider")
      .check();
    await dialog.getByRole("button", { name: "Save secret" }).click();
    const once = cards().getByRole("group", {
      name: /New secret for the card payments/,
    });
    await once.waitFor();
    generatedSecret = await once.getByRole("textbox").inputValue();
    assertMatch(generatedSecret, /^whsec_[A-Za-z0-9_-]{43}$/);
    await check("generated-secret");
    await cards().getByRole("button", {
      name: "I have entered it at the provider",
    }).click();
    await once.waitFor({ state: "detached" });
    await cards().getByTestId("secret-state").getByText(
      generatedSecret.slice(-4),
    ).waitFor();
    assert(
      !(await page.content()).includes(generatedSecret),
      "gone from the page",
    );
    await cards().getByRole("button", { name: "Send a signed test" }).click();
    await cards().getByText(/Test delivered/).waitFor();
    // Following the failures link lands on the payment log filtered to this provider.
    await cards().getByRole("link", { name: "Payment webhooks" }).click();
    await page.waitForURL(/payment-webhooks\?provider=payments$/);
    assertEquals(await page.getByLabel("Provider").inputValue(), "payments");
    await page.getByRole("row").filter({ hasText: "connection.test" }).first()
      .waitFor();
    await page.goBack();
    await page.getByRole("heading", { name: "Connections", level: 1 })
      .waitFor();
  },
);

Deno.test(
  "WhatsApp: a bad app secret and a number registered twice are refused at their fields; the verify token is shown once",
  opts,
  async () => {
    await whatsapp().getByText("No WhatsApp number yet").waitFor();
    await whatsapp().getByRole("button", { name: "Register a number" }).click();
    const form = whatsapp().getByRole("form", { name: "Register a number" });
    await form.getByLabel("Phone number ID").fill(PHONE_NUMBER_ID);
    await form.getByLabel("Phone number (optional)").fill("+1 555 010 2000");
    await form.getByLabel("App secret").fill("short");
    await form.getByRole("button", { name: "Register number" }).click();
    await refusedAt(form.getByLabel("App secret"), "16 to 256 characters");
    await check("register-refused");
    await form.getByLabel("App secret").fill(APP_SECRET);
    await docsImage(form, "connections-register-number");
    await form.getByRole("button", { name: "Register number" }).click();
    const once = whatsapp().getByRole("group", {
      name: /Verify token for \+1 555 010 2000/,
    });
    await once.waitFor();
    verifyToken = await once.getByRole("textbox").inputValue();
    assertMatch(verifyToken, /^vt_[A-Za-z0-9_-]{43}$/);
    const number = whatsapp().getByRole("listitem").filter({
      hasText: "+1 555 010 2000",
    });
    await number.getByText("Waiting for the first message").waitFor();
    await check("registered");
    await docsImage(whatsapp(), "connections-whatsapp-registered");
    await whatsapp().getByRole("button", { name: "I have entered it in Meta" })
      .click();
    assert(
      !(await page.content()).includes(verifyToken) &&
        !(await page.content()).includes(APP_SECRET),
    );

    // The same id again in this organization: the API's 409 lands at the field.
    await whatsapp().getByRole("button", { name: "Register a number" }).click();
    await form.getByLabel("Phone number ID").fill(PHONE_NUMBER_ID);
    await form.getByLabel("App secret").fill(APP_SECRET);
    await form.getByRole("button", { name: "Register number" }).click();
    await refusedAt(
      form.getByLabel("Phone number ID"),
      "This organization has registered this number already",
    );
    await form.getByRole("button", { name: "Cancel" }).click();
  },
);

Deno.test(
  "WhatsApp: Meta's handshake and the first signed message show on the number",
  opts,
  async () => {
    // The callback URL the page shows: the organization's own.
    const messaging = `${stack.url}/functions/v1/messaging-webhook/${organizationId}`;
    const handshake = await fetch(
      `${messaging}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=99`,
    );
    assertEquals(await handshake.text(), "99");
    const account = {
      id: "",
      organizationId,
      phoneNumberId: PHONE_NUMBER_ID,
      displayPhoneNumber: "15550102000",
      appSecret: APP_SECRET,
      verifyToken,
    };
    const sent = await signedPost(
      messaging,
      webhookBody([
        change(account, {
          messages: [textMessage("16505551234", "Is there a youth group?")],
        }),
      ]),
      APP_SECRET,
    );
    assertEquals(sent.status, 200);
    await sent.body?.cancel();
    await page.reload();
    const number = whatsapp().getByRole("listitem").filter({
      hasText: "+1 555 010 2000",
    });
    await number.getByText("Receiving messages").waitFor();
    await number.getByText(/^Succeeded/).waitFor();
    await number.getByText(/text from …1234/).waitFor();
    await check("whatsapp-live");
    await docsImage(number, "connections-whatsapp-number");
    await page.evaluate("scrollTo(0, 0)");
    await docsImage(page, "connections-page");
  },
);

Deno.test(
  "no secret or token in localStorage; no accessibility problem on any screen; nothing wrong in the console",
  opts,
  async () => {
    const stored = await page.evaluate(() =>
      JSON.stringify({
        ...globalThis.localStorage,
        ...globalThis.sessionStorage,
      })
    );
    assert(generatedSecret && verifyToken, "the tests before ran");
    for (
      const secret of [
        CHECKOUT_SECRET,
        generatedSecret,
        APP_SECRET,
        verifyToken,
      ]
    ) {
      assert(!stored.includes(secret), "a secret in the browser's storage");
    }
    assertEquals(problems, []);
    assertEquals(consoleProblems(consoleLines), []);
  },
);

Deno.test("teardown", opts, async () => {
  await browser?.close();
  await site?.close();
  await stack?.stop();
  if (webDir) await Deno.remove(webDir, { recursive: true });
  await closeSql();
});
