// A new account (signUp). Where Supabase Auth confirms addresses (hosted: enable_confirmations), no
// session comes back: the person opens the link of the confirmation mail, or types its code here.
import { useId, useRef, useState } from "react";
import { auth, describeAuthError } from "../../api/auth.ts";
import { useSession } from "../../session.tsx";
import { CodeForm } from "./CodeForm.tsx";

export function SignUpForm({ redirectTo }: { redirectTo: string }) {
  const session = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const sent = useRef<HTMLParagraphElement>(null);
  const id = useId();

  if (sentTo) {
    return (
      <>
        <p ref={sent} tabIndex={-1} className="notice" role="status">
          We sent a confirmation e-mail to{" "}
          {sentTo}. Open its link, or type its code below. (If none arrives, the address may have an account
          already: sign in, or reset its password.)
        </p>
        <CodeForm
          email={sentTo}
          type="signup"
          onVerified={() => session.setNotice(null)}
        />
      </>
    );
  }
  return (
    <form
      aria-describedby={error ? `${id}-err` : undefined}
      onSubmit={async (e) => {
        e.preventDefault();
        if (pending) return;
        setPending(true);
        setError(null);
        session.setNotice(null);
        try {
          const address = email.trim();
          const { data, error } = await auth.signUp({
            email: address,
            password,
            options: { emailRedirectTo: redirectTo },
          });
          if (error) setError(describeAuthError(error));
          // With a session the person is signed in (the page moves on by itself); without, a mail went out.
          else if (!data.session) {
            setSentTo(address);
            requestAnimationFrame(() => sent.current?.focus());
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
      <label htmlFor={`${id}-email`}>E-mail</label>
      <input
        id={`${id}-email`}
        type="email"
        autoComplete="email"
        required
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
      />
      <label htmlFor={`${id}-password`}>Password</label>
      <input
        id={`${id}-password`}
        type="password"
        autoComplete="new-password"
        required
        aria-describedby={`${id}-password-help`}
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      <p id={`${id}-password-help`} className="help">
        At least 8 characters. A few words you will remember make a good one.
      </p>
      <button type="submit" className="primary">
        {pending ? "Creating your account…" : "Create account"}
      </button>
      {error && <p id={`${id}-err`} className="error" role="alert">{error}</p>}
    </form>
  );
}
