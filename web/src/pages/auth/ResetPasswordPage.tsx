// /auth/reset: a new password (updateUser), for someone signed in by a password mail's link or code.
// Supabase Auth ends every other session of the account when the password changes.
import { useId, useRef, useState } from "react";
import { auth, describeAuthError } from "../../api/auth.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import "./AuthPage.css";

export function ResetPasswordPage() {
  const session = useSession();
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const first = useRef<HTMLInputElement>(null);
  const id = useId();
  const email = session.state.kind === "signed_in" ? session.state.session.user.email : "";
  return (
    <main className="narrow auth" id="main">
      <h1>Choose a new password</h1>
      <p className="muted">
        For {email}. Other devices signed in to this account will be signed out.
      </p>
      <form
        aria-describedby={error ? `${id}-err` : undefined}
        onSubmit={async (e) => {
          e.preventDefault();
          if (pending) return;
          if (password !== again) {
            setError("The two passwords are not the same.");
            first.current?.focus();
            return;
          }
          setPending(true);
          setError(null);
          try {
            const { error } = await auth.updateUser({ password });
            if (error) {
              setError(describeAuthError(error));
              first.current?.focus();
            } else {
              session.setNotice("Your password has been changed.");
              navigate(HOME, { replace: true });
            }
          } catch (err) {
            setError(
              describeAuthError({ message: (err as Error).message, status: 0 }),
            );
          } finally {
            setPending(false);
          }
        }}
      >
        <label htmlFor={`${id}-new`}>New password</label>
        <input
          id={`${id}-new`}
          ref={first}
          type="password"
          autoComplete="new-password"
          required
          value={password}
          aria-describedby={`${id}-help`}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        <p id={`${id}-help`} className="help">
          At least 8 characters, not the one you had.
        </p>
        <label htmlFor={`${id}-again`}>New password again</label>
        <input
          id={`${id}-again`}
          type="password"
          autoComplete="new-password"
          required
          value={again}
          onChange={(e) => setAgain(e.currentTarget.value)}
        />
        <button type="submit" className="primary">
          {pending ? "Saving…" : "Save new password"}
        </button>
        {error && <p id={`${id}-err`} className="error" role="alert">{error}</p>}
      </form>
    </main>
  );
}
