// The local mail catcher's inbox (MailDev, which `npm run dev` starts on MAIL_WEB_PORT) as the browser
// tests read it: its REST API lists every mail it caught.

export interface InboxMail {
  subject: string;
  html: string;
  text: string;
  to: { address: string }[];
}

/** The newest mail to `to` in MailDev at `inbox` whose subject matches, waiting up to 30 s for it. */
export async function inboxMail(
  inbox: string,
  to: string,
  subject: RegExp,
): Promise<InboxMail> {
  for (let i = 0; i < 150; i++) {
    const list = await (await fetch(`${inbox}/api/email`))
      .json() as InboxMail[];
    const found = list.filter((m) => m.to.some((t) => t.address === to) && subject.test(m.subject)).at(-1);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no mail to ${to} matching ${subject}`);
}

/** The confirmation or recovery link of a Supabase Auth mail (its token rides in the fragment). */
export const linkOf = (m: InboxMail): string | undefined =>
  /href="([^"]+#token_hash=[^"]+)"/.exec(m.html)?.[1]?.replaceAll("&amp;", "&");

/** The six-digit code of a Supabase Auth mail. */
export const codeOf = (m: InboxMail): string | undefined => /<strong>(\d{6})<\/strong>/.exec(m.html)?.[1];
