// Sign-in through Supabase Auth's own client (@supabase/auth-js): the session lives in localStorage and
// is refreshed before it expires. Only Auth is bundled: realtime, storage and the database client of
// supabase-js are never needed here, since every other call goes to the configuration API.
// Only the session lives in storage; signing secrets and API keys are never stored anywhere.
// @see docs/authentication.md#signing-in-frontend
import { AuthClient } from "@supabase/auth-js";
import { SUPABASE_ANON_KEY, SUPABASE_URL } from "../config.ts";

const anonKey = SUPABASE_ANON_KEY || "unset";

export const auth = new AuthClient({
  url: `${SUPABASE_URL || "http://invalid.localhost"}/auth/v1`,
  // What supabase-js sends to Auth: the project's public anon key. "Authorization" spelt as auth-js
  // spells it, so that the session's token replaces it (sign-out, /user); spelt otherwise, both went as
  // one header, "Bearer <anon key>, Bearer <token>", which Auth refuses (401), and a sign-out left the
  // session alive on the server.
  headers: { apikey: anonKey, Authorization: `Bearer ${anonKey}` },
  storageKey: "church-settings-session",
  persistSession: true,
  autoRefreshToken: true,
  detectSessionInUrl: false,
});

/** Supabase Auth's sign-in errors, in words a person understands. */
export function describeAuthError(
  error: { message?: string; code?: string; status?: number },
): string {
  const code = error.code ?? "";
  if (
    code === "invalid_credentials" ||
    /invalid login credentials/i.test(error.message ?? "")
  ) {
    return "That e-mail and password do not match an account. Check both and try again.";
  }
  if (code === "email_not_confirmed") {
    return "This e-mail address has not been confirmed yet.";
  }
  if (code === "user_banned") return "This account has been suspended.";
  if (code === "weak_password") {
    return `That password is too short. ${error.message ?? ""}`.trim();
  }
  if (code === "current_password_required" || code === "current_password_mismatch") {
    return "That is not your current password. Enter the password you sign in with now.";
  }
  if (code === "same_password") {
    return "That is your current password. Choose a new one.";
  }
  if (code === "otp_expired") {
    return "That code or link is not valid any more (wrong, already used, or over an hour old). Ask for a new one.";
  }
  if (code === "over_email_send_rate_limit") {
    return "An e-mail was sent a moment ago. Wait a minute before asking for another.";
  }
  if (code === "user_already_exists") {
    return "An account with this e-mail address exists already. Sign in, or reset its password.";
  }
  if (code === "signup_disabled") {
    return "New accounts cannot be created here. Ask your church's administrator.";
  }
  if (code === "session_not_found" || code === "reauthentication_needed") {
    return "Your session has ended. Ask for a new password link and try again.";
  }
  if (code === "over_request_rate_limit" || error.status === 429) {
    return "Too many attempts. Wait a few minutes and try again.";
  }
  if (error.status === 0 || /fetch|network/i.test(error.message ?? "")) {
    return "Could not reach the sign-in service. Check your connection and try again.";
  }
  return error.message || "Sign-in failed.";
}

/**
 * Asks Supabase Auth whether `password` is the signed-in person's, by signing in with it anew: what
 * needs a recent sign-in (revealing a signing secret) then has one. The session it replaces is ended at
 * Auth too, so no forgotten session stays alive. Returns what to tell the person, or null when it was
 * right.
 */
export async function confirmPassword(email: string, password: string): Promise<string | null> {
  const before = (await auth.getSession()).data.session;
  const { error } = await auth.signInWithPassword({ email, password });
  if (error) {
    return error.code === "invalid_credentials" || /invalid login credentials/i.test(error.message)
      ? "That is not your password. Try again."
      : describeAuthError(error);
  }
  if (before) {
    await fetch(`${SUPABASE_URL}/auth/v1/logout?scope=local`, {
      method: "POST",
      headers: { apikey: anonKey, Authorization: `Bearer ${before.access_token}` },
    }).catch(() => {});
  }
  return null;
}

/** How Supabase Auth tells a session begun by a mail link or code (models.Session.IsRecovery). */
const MAIL_METHODS = new Set(["otp", "magiclink", "recovery"]);

/** Whether the token's session began with a mail link or code (a hint for the form; Auth decides). */
export function beganByMail(accessToken: string): boolean {
  try {
    const part = accessToken.split(".")[1] ?? "";
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
    const amr = (JSON.parse(json) as { amr?: { method?: string }[] }).amr ?? [];
    return amr.some((a) => MAIL_METHODS.has(a.method ?? ""));
  } catch {
    return false;
  }
}
