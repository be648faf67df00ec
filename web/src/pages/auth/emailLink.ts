// The links of our sign-up and password mails (supabase/templates/*.html) come back to this site with
// `#token_hash=…&type=signup|recovery`: verified here with verifyOtp once the page runs, so a mail
// scanner that follows links cannot use them up, and the fragment never reaches a server. Supabase
// Auth's default templates go through its /verify first and come back with the session
// (`#access_token=…&refresh_token=…&type=…`) or an error (`#error_code=…`); those are taken too.
// Whatever the fragment held leaves the address bar at once.
// @see docs/authentication.md#accounts
import { auth, describeAuthError } from "../../api/auth.ts";

export type EmailLinkOutcome =
  | { kind: "none" }
  | { kind: "signed_in"; type: string }
  | { kind: "failed"; type: string; message: string };

const TYPES = new Set(["signup", "recovery", "invite", "magiclink", "email"]);

export async function consumeEmailLink(): Promise<EmailLinkOutcome> {
  const params = new URLSearchParams(location.hash.slice(1));
  const tokenHash = params.get("token_hash");
  const accessToken = params.get("access_token");
  const errorCode = params.get("error_code");
  if (!tokenHash && !accessToken && !errorCode) return { kind: "none" };
  const type = params.get("type") ?? "";
  history.replaceState(history.state, "", location.pathname + location.search);
  if (errorCode) {
    return {
      kind: "failed",
      type,
      message: describeAuthError({
        code: errorCode,
        message: params.get("error_description") ?? "",
      }),
    };
  }
  if (!TYPES.has(type)) {
    return {
      kind: "failed",
      type,
      message: "This link is not one this page understands.",
    };
  }
  try {
    const { error } = tokenHash
      ? await auth.verifyOtp({
        token_hash: tokenHash,
        type: type as "signup" | "recovery",
      })
      : await auth.setSession({
        access_token: accessToken!,
        refresh_token: params.get("refresh_token") ?? "",
      });
    if (error) {
      return { kind: "failed", type, message: describeAuthError(error) };
    }
    return { kind: "signed_in", type };
  } catch (err) {
    return {
      kind: "failed",
      type,
      message: describeAuthError({
        message: (err as Error).message,
        status: 0,
      }),
    };
  }
}
