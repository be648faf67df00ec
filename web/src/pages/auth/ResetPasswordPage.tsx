// /auth/reset: a new password (updateUser), for someone signed in by a password mail's link or code.
// Supabase Auth ends every other session of the account when the password changes.
import { useId, useRef, useState } from "react";
import { auth } from "../../api/auth.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import { AuthError, AuthField } from "./AuthField.tsx";
import { useAuthCall } from "./useAuthCall.ts";
import "./AuthPage.css";

export function ResetPasswordPage() {
  const session = useSession();
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const { pending, error, setError, run } = useAuthCall();
  const first = useRef<HTMLInputElement>(null);
  const id = useId();
  const email = session.state.kind === "signed_in" ? session.state.session.user.email : "";
  return (
    <main className="narrow auth" id="main">
      <h1>Choose a new password</h1>
      <p className="muted">For {email}. Other devices signed in to this account will be signed out.</p>
      <form
        aria-describedby={error ? `${id}-err` : undefined}
        onSubmit={async (e) => {
          e.preventDefault();
          if (password !== again) {
            setError("The two passwords are not the same.");
            first.current?.focus();
          } else if (await run(() => auth.updateUser({ password }))) {
            session.setNotice("Your password has been changed.");
            navigate(HOME, { replace: true });
          } else first.current?.focus();
        }}
      >
        <AuthField
          id={`${id}-new`}
          label="New password"
          inputRef={first}
          type="password"
          autoComplete="new-password"
          aria-describedby={`${id}-help`}
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        <p id={`${id}-help`} className="help">At least 8 characters, not the one you had.</p>
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
