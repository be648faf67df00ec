// How a rendered mail leaves: over SMTP (nodemailer) or a provider's HTTP API (Resend's POST /emails),
// as the environment configures (_shared/config.ts). Either way the outcome is sent (with the
// provider's id), or an error that says whether trying again can help.
import nodemailer from "nodemailer";
import type { MailConfig } from "../_shared/config.ts";
import type { Rendered } from "./templates.ts";

export interface Envelope extends Rendered {
  /** The outbox row: the HTTP API de-duplicates on it, so a retry after a lost answer sends once. */
  id: string;
  to: string;
}

export class MailError extends Error {
  /** True when retrying cannot help (the recipient or the message was refused). */
  constructor(message: string, readonly permanent: boolean) {
    super(message);
    this.name = "MailError";
  }
}

export interface MailTransport {
  send(mail: Envelope): Promise<{ messageId: string | null }>;
  close(): void;
}

export function createTransport(config: MailConfig): MailTransport {
  return config.transport === "smtp" ? smtp(config.smtpUrl, config.from) : httpApi(config, config.from);
}

function smtp(url: string, from: string): MailTransport {
  const u = new URL(url);
  const secure = u.protocol === "smtps:";
  const transporter = nodemailer.createTransport({
    host: u.hostname,
    port: Number(u.port) || (secure ? 465 : 587),
    // smtps: TLS from the first byte (port 465); smtp: STARTTLS whenever the server offers it.
    secure,
    auth: u.username
      ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) }
      : undefined,
    // A run's mails share a few connections: one TLS handshake each, not one per mail (hosted CPU).
    pool: true,
    maxConnections: 4,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  }, { from });
  return {
    async send(m) {
      try {
        const info = await transporter.sendMail({
          to: m.to,
          subject: m.subject,
          text: m.text,
          html: m.html,
          headers: { "X-Outbox-Id": m.id },
        });
        return { messageId: info.messageId ?? null };
      } catch (err) {
        const e = err as { code?: string; responseCode?: number; message?: string };
        // 5xx for the recipient or the message is a refusal; anything else (no connection, 4xx, a
        // failed login the operator can fix) is tried again.
        const permanent = (e.responseCode ?? 0) >= 500 && (e.code === "EENVELOPE" || e.code === "EMESSAGE");
        throw new MailError(
          `smtp: ${e.code ?? "error"}${e.responseCode ? ` ${e.responseCode}` : ""}: ${e.message}`,
          permanent,
        );
      }
    },
    close: () => transporter.close(),
  };
}

function httpApi(config: { apiKey: string; apiUrl: string }, from: string): MailTransport {
  return {
    async send(m) {
      let res: Response;
      try {
        res = await fetch(`${config.apiUrl}/emails`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${config.apiKey}`,
            "content-type": "application/json",
            "idempotency-key": m.id,
          },
          body: JSON.stringify({ from, to: [m.to], subject: m.subject, text: m.text, html: m.html }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (err) {
        throw new MailError(`http api: ${(err as Error).message}`, false);
      }
      const body = (await res.text()).slice(0, 500);
      if (res.ok) {
        let id: string | null = null;
        try {
          id = (JSON.parse(body) as { id?: string }).id ?? null;
        } catch { /* an answer without an id is still a sent mail */ }
        return { messageId: id };
      }
      // 400/422: the message or an address is refused; 401/403 (a key the operator can fix), 409
      // (the same id still being processed), 429 and 5xx: try again.
      throw new MailError(`http api: ${res.status} ${body}`, res.status === 400 || res.status === 422);
    },
    close() {},
  };
}
