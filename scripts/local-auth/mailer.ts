// The mails the local Supabase Auth sends (sign-up confirmation, password recovery), rendered from the
// same templates Supabase Auth uses: config.toml's [auth.email.template.<type>] (subject and
// content_path), else Supabase Auth's built-in defaults (internal/mailer/templatemailer). They go over
// SMTP to the local mail catcher, as `supabase start` sends its own to Inbucket/Mailpit; without SMTP,
// as Supabase Auth's no-op mailer does, nothing is sent.
//
// Templates are Go html/template text. The local renderer knows the part of it the templates here use,
// `{{ .Name }}` for the fields Supabase Auth hands every mail (SiteURL, ConfirmationURL, Email, Token,
// TokenHash, RedirectTo), escaped as html/template escapes them: query-escaped after a `?` or `#` in an
// href or src attribute, HTML-escaped everywhere. Anything else in a template is refused at start-up,
// so a template that would render differently on a hosted project never goes out here.
import nodemailer from "nodemailer";
import type { AuthSettings } from "./config.ts";

export type MailType = "confirmation" | "recovery";

/** Supabase Auth's defaults (templatemailer.go), for a type config.toml gives no template for. */
const DEFAULTS: Record<MailType, { subject: string; body: string }> = {
  confirmation: {
    subject: "Confirm your email address",
    body: `<h2>Confirm your email address</h2>

<p>Follow the link below to confirm this email address and finish signing up.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm email address</a></p>
`,
  },
  recovery: {
    subject: "Reset your password",
    body: `<h2>Reset your password</h2>

<p>We received a request to reset your password. Follow the link below to choose a new one.</p>
<p><a href="{{ .ConfirmationURL }}">Reset password</a></p>
<p>If you didn't request this, you can safely ignore this email.</p>`,
  },
};

const FIELDS = ["SiteURL", "ConfirmationURL", "Email", "Token", "TokenHash", "RedirectTo"] as const;
export type MailData = Record<(typeof FIELDS)[number], string>;

const ACTION = /\{\{-?\s*([^}]*?)\s*-?\}\}/g;

/** Checks that `template` uses only `{{ .Field }}` of the fields above; throws naming what it does not know. */
export function checkTemplate(template: string, where: string): void {
  for (const m of template.matchAll(ACTION)) {
    const field = m[1]!.match(/^\.([A-Za-z]+)$/)?.[1];
    if (!field || !(FIELDS as readonly string[]).includes(field)) {
      throw new Error(
        `${where}: "${m[0]}" is not served by the local Supabase Auth stand-in (only {{ .${
          FIELDS.join(" }}, {{ .")
        } }})`,
      );
    }
  }
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"'+]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;", "+": "&#43;" })[c]!,
  );

/**
 * Where position `at` of `html` stands: in a URL attribute's query or fragment (html/template's
 * urlPartQueryOrFrag), at the start of one (urlPartNone), or elsewhere.
 */
function urlPart(html: string, at: number): "query" | "start" | undefined {
  const attr = html.slice(0, at).match(/\s(?:href|src|action)\s*=\s*(["'])([^"']*)$/i);
  if (!attr) return undefined;
  return /[?#]/.test(attr[2]!) ? "query" : "start";
}

/** Renders `template` with `data`, escaping each value for where it stands. */
export function renderTemplate(template: string, data: MailData): string {
  return template.replace(ACTION, (_whole, expr: string, offset: number) => {
    const value = data[expr.slice(1) as keyof MailData] ?? "";
    const part = urlPart(template, offset);
    if (part === "query") return escapeHtml(encodeURIComponent(value));
    // html/template's urlFilter: a URL of another scheme (javascript:, data:) never reaches an href.
    if (part === "start" && /^[^/?#]*:/.test(value) && !/^(https?|mailto):/i.test(value)) return "#ZgotmplZ";
    return escapeHtml(value);
  });
}

export interface AuthMail {
  to: string;
  type: MailType;
  subject: string;
  html: string;
}

export interface AuthMailer {
  /** Renders the `type` mail for `data` and sends it to `to`. */
  send(type: MailType, to: string, data: MailData): Promise<AuthMail>;
  close(): void;
}

const root = new URL("../../", import.meta.url);

/**
 * The mailer for `settings`' templates. `smtpUrl`: where mail goes (the dev server's mail catcher);
 * without it mails are rendered and logged as not sent. `from`: the sender (MAIL_FROM).
 */
export async function createAuthMailer(
  settings: AuthSettings,
  opts: { smtpUrl?: string; from?: string } = {},
): Promise<AuthMailer> {
  const templates = {} as Record<MailType, { subject: string; body: string }>;
  for (const type of Object.keys(DEFAULTS) as MailType[]) {
    const configured = settings.templates[type];
    const body = configured?.contentPath
      ? await Deno.readTextFile(new URL(configured.contentPath.replace(/^\.\//, ""), root))
      : DEFAULTS[type].body;
    const subject = configured?.subject ?? DEFAULTS[type].subject;
    checkTemplate(body, `[auth.email.template.${type}] content_path`);
    checkTemplate(subject, `[auth.email.template.${type}] subject`);
    templates[type] = { subject, body };
  }
  const transport = opts.smtpUrl ? smtp(opts.smtpUrl) : undefined;
  const from = opts.from ?? "Church settings <no-reply@localhost>";
  return {
    async send(type, to, data) {
      const t = templates[type];
      // html/template escapes the subject too; mail clients show it as text, so it is rendered plain.
      const subject = t.subject.replace(
        ACTION,
        (_w, expr: string) => data[expr.slice(1) as keyof MailData] ?? "",
      );
      const mail = { to, type, subject, html: renderTemplate(t.body, data) };
      if (!transport) {
        console.log(
          JSON.stringify({ level: "info", component: "local-auth", msg: "no SMTP: mail not sent", type }),
        );
        return mail;
      }
      await transport.sendMail({ from, to, subject, html: mail.html });
      return mail;
    },
    close: () => transport?.close(),
  };
}

function smtp(url: string) {
  const u = new URL(url);
  const secure = u.protocol === "smtps:";
  return nodemailer.createTransport({
    host: u.hostname,
    port: Number(u.port) || (secure ? 465 : 587),
    secure,
    auth: u.username
      ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }
      : undefined,
    connectionTimeout: 5_000,
    greetingTimeout: 5_000,
    socketTimeout: 10_000,
  });
}
