// What is wrong with how the service is set up though every function works: said by each function's
// GET /health and by the Platform console (GET /webhooks/platform/me), so an operator sees it where they
// look, before a church finds out.
import type { Config } from "./config.ts";

export interface SetupWarning {
  code: "auth_mail_not_configured";
  message: string;
}

/**
 * On a hosted project, Supabase Auth needs the service's own SMTP server: its default mailer sends only
 * to the project team's addresses, a few an hour, so a church's confirmation and password-reset mails
 * never arrive. The functions cannot read Auth's settings; the deploy steps give them AUTH_SMTP_HOST from
 * the variable config push reads. Locally (npm run dev, tests) Auth's mail goes to the local catcher.
 * @see docs/operations.md#auth-mail
 */
export function setupWarnings(config: Config | undefined): SetupWarning[] {
  if (!config?.hosted || config.authSmtpHost) return [];
  return [{
    code: "auth_mail_not_configured",
    message: "Supabase Auth has no SMTP server of this service's: its default mailer sends only to the " +
      "project team's addresses, so new accounts cannot confirm their address. Set Auth's SMTP server " +
      "([remotes.production.auth.email.smtp], config push) and the AUTH_SMTP_HOST secret " +
      "(docs/operations.md#auth-mail)",
  }];
}
