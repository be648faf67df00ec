// /auth: e-mail and password sign-in through Supabase Auth.
import { useId, useState } from "react";
import { auth, describeAuthError } from "../../api/auth.ts";
import { useSession } from "../../session.tsx";
import "./AuthPage.css";

export function AuthPage() {
  const session = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  return (
    <main className="narrow auth" id="main">
      <h1>Sign in</h1>
      <p className="muted">
        Settings › Integrations for your church: webhooks, their logs, API keys and payments.
      </p>
      {session.notice && <p className="notice" role="status">{session.notice}</p>}
      <form
        aria-describedby={error ? `${id}-err` : undefined}
        onSubmit={async (e) => {
          e.preventDefault();
          setPending(true);
          setError(null);
          session.setNotice(null);
          try {
            const { error } = await auth.signInWithPassword({
              email: email.trim(),
              password,
            });
            if (error) setError(describeAuthError(error));
          } catch (err) {
            setError(
              describeAuthError({ message: (err as Error).message, status: 0 }),
            );
          } finally {
            setPending(false);
          }
        }}
      >
        <label htmlFor={`${id}-email`}>E-mail</label>
        <input
          id={`${id}-email`}
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.currentTarget.value)}
        />
        <label htmlFor={`${id}-password`}>Password</label>
        <input
          id={`${id}-password`}
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.currentTarget.value)}
        />
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
        {error && <p id={`${id}-err`} className="error" role="alert">{error}</p>}
      </form>
    </main>
  );
}
