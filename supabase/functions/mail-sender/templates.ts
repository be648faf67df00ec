// What each kind of mail says. The outbox row carries the facts (private.mail_outbox.data); the words,
// the links and the HTML live here, in one place.
export interface OutboxMail {
  id: string;
  kind: "invitation" | "endpoint_failing" | "endpoint_disable_soon" | "endpoint_disabled";
  recipient: string;
  data: Record<string, unknown>;
}

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

/**
 * The accept link of an invitation: the settings UI's accept page with the token in the fragment, which
 * browsers never send to a server (so it stays out of access logs and Referer headers).
 */
export function invitationLink(siteUrl: string, token: string): string {
  return `${siteUrl}/invitations/accept#token=${encodeURIComponent(token)}`;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/**
 * A stored value put into a sentence: one line. Organization names, endpoint descriptions and addresses
 * are typed by admins, and a line break in one would let its author add paragraphs of their own to the
 * text part of a mail we send (invitations go to any address). The HTML part escapes them besides.
 */
const oneLine = (value: unknown) => String(value).replace(/[\p{Cc}\u2028\u2029]+/gu, " ");

/** A time as people read it in a mail that may be opened anywhere: UTC, to the minute. */
function when(value: unknown): string {
  const d = new Date(String(value));
  return Number.isNaN(d.getTime())
    ? "an unknown time"
    : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Paragraphs, each a line of text; `link` is shown as its URL in text and as a link in HTML. */
function mail(subject: string, paragraphs: string[], link: { label: string; url: string }): Rendered {
  return {
    subject,
    text: [...paragraphs, `${link.label}: ${link.url}`].join("\n\n") + "\n",
    html: `<!doctype html><html><body>${paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("")}` +
      `<p><a href="${escapeHtml(link.url)}">${escapeHtml(link.label)}</a></p></body></html>`,
  };
}

/**
 * The invitation's last paragraph: who sent it, in a way the invitee can quote (anyone can create an
 * organization with any name, so the name alone does not say who), and where to report it.
 */
function sentFor(d: Record<string, unknown>, org: string, siteUrl: string, abuseAddress?: string): string {
  const reference = d.organization_id ? ` (reference ${oneLine(d.organization_id)})` : "";
  const report = abuseAddress
    ? `forward this e-mail to ${abuseAddress}`
    : `tell the operators of ${siteUrl}, quoting the reference`;
  return `This invitation was sent for the organization ${org}${reference}` +
    `${d.invited_by ? ` by ${oneLine(d.invited_by)}` : ""}. If you do not know it, or you keep receiving ` +
    `invitations you did not ask for, report it: ${report}.`;
}

export function render(m: OutboxMail, siteUrl: string, abuseAddress?: string): Rendered {
  const d = m.data;
  const org = oneLine(d.organization_name ?? "your organization");
  if (m.kind === "invitation") {
    const by = d.invited_by ? `${oneLine(d.invited_by)} invited you` : "You are invited";
    return mail(`You are invited to join ${org}`, [
      `${by} to join ${org} as ${d.role === "admin" ? "an administrator" : "a staff member"}.`,
      `The invitation is valid until ${when(d.expires_at)}. Open the link below, sign in or create an ` +
      `account there, and accept it. If you did not expect it, ignore this e-mail.`,
      sentFor(d, org, siteUrl, abuseAddress),
    ], { label: "Accept the invitation", url: invitationLink(siteUrl, String(d.token)) });
  }
  const endpoint = `${oneLine(d.url)}${d.description ? ` (${oneLine(d.description)})` : ""}`;
  const settings = { label: "Open the webhook settings", url: `${siteUrl}/settings/integrations/webhooks` };
  const failing = `It has failed every delivery attempt since ${when(d.failing_since)} ` +
    `(${d.consecutive_failures} failed attempts in a row).`;
  if (m.kind === "endpoint_failing") {
    return mail(`A webhook endpoint of ${org} has been failing for over an hour`, [
      `The webhook endpoint ${endpoint} of ${org} is not accepting deliveries. ${failing}`,
      `Deliveries are retried for 24 hours each. If it keeps failing, it will be disabled automatically ` +
      `at ${when(d.disable_at)}.`,
    ], settings);
  }
  if (m.kind === "endpoint_disable_soon") {
    return mail(`A webhook endpoint of ${org} will be disabled in a day`, [
      `The webhook endpoint ${endpoint} of ${org} will be disabled at ${when(d.disable_at)}. ${failing}`,
      "Fix the receiver, or change or disable the endpoint yourself, to keep it from being disabled.",
    ], settings);
  }
  return mail(`A webhook endpoint of ${org} was disabled`, [
    `The webhook endpoint ${endpoint} of ${org} was disabled at ${when(d.disabled_at)}: ${
      oneLine(d.disabled_reason)
    }.`,
    "It receives no events until it is enabled again; deliveries that ended can then be recovered.",
  ], settings);
}
