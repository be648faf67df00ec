// The session: supabase-js keeps it in localStorage and refreshes it before it expires (SPEC 4.1).
// Only the session lives there; signing secrets and API keys are never stored anywhere.
import { createClient } from "@supabase/supabase-js";
import { SUPABASE_ANON_KEY, SUPABASE_URL } from "../config.ts";

export const supabase = createClient(
  SUPABASE_URL || "http://invalid.localhost",
  SUPABASE_ANON_KEY || "unset",
  {
    auth: {
      persistSession: true,
      autoRefreshToken: true,
      detectSessionInUrl: false,
      storageKey: "church-settings-session",
    },
  },
);

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
  if (code === "over_request_rate_limit" || error.status === 429) {
    return "Too many sign-in attempts. Wait a minute and try again.";
  }
  if (error.status === 0 || /fetch|network/i.test(error.message ?? "")) {
    return "Could not reach the sign-in service. Check your connection and try again.";
  }
  return error.message || "Sign-in failed.";
}
