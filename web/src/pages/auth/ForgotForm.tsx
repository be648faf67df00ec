// A password reset (resetPasswordForEmail): a mail with a link back to /auth/reset and a code that
// can be typed here instead. Every address gets the same answer, as Supabase Auth gives it.
import { useId, useRef, useState } from "react";
import { auth, describeAuthError } from "../../api/auth.ts";
import { navigate } from "../../router.tsx";
import { CodeForm } from "./CodeForm.tsx";

export function ForgotForm({ redirectTo }: { redirectTo: string }) {
  const [email, setEmail] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const sent = useRef<HTMLParagraphElement>(null);
  const id = useId();

  if (sentTo) {
    return (
      <>
        <p ref={sent} tabIndex={-1} className="notice" role="status">
          If {sentTo}{" "}
          has an account, we sent it an e-mail with a link to choose a new password. Open the link, or type
          the e-mail's code below.
        </p>
        <CodeForm
          email={sentTo}
          type="recovery"
          onVerified={() => navigate("/auth/reset", { replace: true })}
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
        try {
          const address = email.trim();
          const { error } = await auth.resetPasswordForEmail(address, {
            redirectTo,
          });
          if (error) setError(describeAuthError(error));
          else {
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
      <button type="submit" className="primary">
        {pending ? "Sending…" : "Send me a link"}
      </button>
      {error && <p id={`${id}-err`} className="error" role="alert">{error}</p>}
    </form>
  );
}
