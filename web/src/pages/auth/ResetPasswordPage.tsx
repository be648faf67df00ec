// /auth/reset: a new password (updateUser). Signed in by a password mail's link or code, the person just
// chooses one; signed in with a password, they name the current one too, as Supabase Auth demands
// (current_password; a session begun by a mail link or code is exempt), so a stolen session cannot take
// the account. Supabase Auth ends every other session of the account when the password changes.
import { useId, useRef, useState } from "react";
import { auth, beganByMail } from "../../api/auth.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import { AuthError, AuthField } from "./AuthField.tsx";
import { useAuthCall } from "./useAuthCall.ts";
import "./AuthPage.css";
import { PASSWORD_RULE } from "./passwordRule.ts";

export function ResetPasswordPage() {
  const session = useSession();
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const { pending, error, setError, run } = useAuthCall();
  const first = useRef<HTMLInputElement>(null);
  const id = useId();
  const signedIn = session.state.kind === "signed_in" ? session.state.session : null;
  const email = signedIn?.user.email ?? "";
  const needsCurrent = signedIn ? !beganByMail(signedIn.access_token) : true;
  return (
    <main className="narrow auth" id="main">
      <h1>{needsCurrent ? "Change your password" : "Choose a new password"}</h1>
      <p className="muted">For {email}. Other devices signed in to this account will be signed out.</p>
      <form
        aria-describedby={error ? `${id}-err` : undefined}
        onSubmit={async (e) => {
          e.preventDefault();
          if (password !== again) {
            setError("The two new passwords are not the same.");
            first.current?.focus();
          } else if (
            await run(() =>
              auth.updateUser(needsCurrent ? { password, current_password: current } : { password })
            )
          ) {
            session.setNotice("Your password has been changed.");
            navigate(HOME, { replace: true });
          } else first.current?.focus();
        }}
      >
        {needsCurrent && (
          <AuthField
            id={`${id}-current`}
            label="Current password"
            inputRef={first}
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={(e) => setCurrent(e.currentTarget.value)}
          />
        )}
        <AuthField
          id={`${id}-new`}
          label="New password"
          inputRef={needsCurrent ? undefined : first}
          type="password"
          autoComplete="new-password"
          aria-describedby={`${id}-help`}
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        <p id={`${id}-help`} className="help">{PASSWORD_RULE}, not the one you had.</p>
        <AuthField
          id={`${id}-again`}
          label="New password again"
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.currentTarget.value)}
        />
        <button type="submit" className="primary">{pending ? "Saving…" : "Save new password"}</button>
        <AuthError id={`${id}-err`} error={error} />
      </form>
    </main>
  );
}
