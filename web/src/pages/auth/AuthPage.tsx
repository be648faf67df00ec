// /auth: sign in, create an account (/auth/signup) or ask for a password reset (/auth/forgot), through
// Supabase Auth's own client (signInWithPassword, signUp, resetPasswordForEmail, verifyOtp). On an
// invitation link the same forms show with the link kept in the address bar, below who invited whom to
// which church, so an invitee without an account creates one and joins in one go. It opens on Create
// account with the invited address filled in: whether that address has an account is not asked (it
// would tell anyone who can invite who has one), and "Already have an account? Sign in" is one click.
import { useEffect, useRef, useState } from "react";
import { errorText } from "../../api/queries.ts";
import { navigate, useLocation } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { InvitationSummary, useInvitationPreview, useInvitationToken } from "../invitations/invitation.tsx";
import { ForgotForm } from "./ForgotForm.tsx";
import { SignInForm } from "./SignInForm.tsx";
import { SignUpForm } from "./SignUpForm.tsx";
import "./AuthPage.css";

export type AuthMode = "signin" | "signup" | "forgot";

const PATHS: Record<AuthMode, string> = {
  signin: "/auth",
  signup: "/auth/signup",
  forgot: "/auth/forgot",
};
const TITLES: Record<AuthMode, string> = {
  signin: "Sign in",
  signup: "Create an account",
  forgot: "Reset your password",
};

const modeOf = (path: string): AuthMode =>
  path === "/auth/signup" ? "signup" : path === "/auth/forgot" ? "forgot" : "signin";
export const isAuthPath = (path: string) => path === "/auth" || path.startsWith("/auth/");

/** `invitation`: shown on an invitation link to someone signed out. */
export function AuthPage({ invitation = false }: { invitation?: boolean }) {
  const session = useSession();
  const loc = useLocation();
  const onAuthPath = isAuthPath(loc.pathname);
  const preview = useInvitationPreview(useInvitationToken(), invitation);
  const invited = invitation ? preview.data : undefined;
  // An invitation opens on Create account; a link that no longer works, on Sign in.
  const [own, setOwn] = useState<AuthMode | null>(null);
  const mode = onAuthPath
    ? modeOf(loc.pathname)
    : own ?? (invitation && !preview.error ? "signup" : "signin");
  // The forms wait for the invited address, so nothing typed is replaced when it arrives.
  const ready = !invitation || !preview.isPending;
  const heading = useRef<HTMLHeadingElement>(null);
  const shown = useRef(mode);
  // A new form starts at its heading, for keyboards and screen readers alike.
  useEffect(() => {
    if (shown.current === mode) return;
    shown.current = mode;
    heading.current?.focus();
  }, [mode]);
  useEffect(() => {
    document.title = `${TITLES[mode]} · Settings`;
  }, [mode]);

  const go = (next: AuthMode) => {
    session.setNotice(null);
    if (onAuthPath) navigate(PATHS[next] + loc.search);
    else setOwn(next);
  };

  return (
    <main className="narrow auth" id="main">
      <h1 ref={heading} tabIndex={-1}>{TITLES[mode]}</h1>
      {!invitation
        ? (
          <p className="muted">
            Settings › Integrations for your church: webhooks, their logs, API keys and payments.
          </p>
        )
        : invited
        ? <InvitationSummary invitation={invited} />
        : preview.error
        ? <ErrorBox error={errorText(preview.error)!} />
        : <Loading what="the invitation" />}
      {session.notice && <p className="notice" role="status">{session.notice}</p>}
      {ready && mode === "signin" && <SignInForm email={invited?.email} />}
      {ready && mode === "signup" && (
        <SignUpForm redirectTo={`${location.origin}/auth`} email={invited?.email} />
      )}
      {mode === "forgot" && <ForgotForm redirectTo={`${location.origin}/auth/reset`} />}
      <div className="auth-links" hidden={!ready}>
        {mode !== "signup" && (
          <p>
            New here?{" "}
            <button type="button" className="link" onClick={() => go("signup")}>
              Create an account
            </button>
          </p>
        )}
        {mode !== "signin" && (
          <p>
            Already have an account?{" "}
            <button type="button" className="link" onClick={() => go("signin")}>
              Sign in
            </button>
          </p>
        )}
        {mode === "signin" && (
          <p>
            <button type="button" className="link" onClick={() => go("forgot")}>
              Forgot your password?
            </button>
          </p>
        )}
      </div>
    </main>
  );
}
