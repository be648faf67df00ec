// A password reset (resetPasswordForEmail): a mail with a link back to /auth/reset and a code that
// can be typed here instead. Every address gets the same answer, as Supabase Auth gives it.
import { useId, useRef, useState } from "react";
import { auth } from "../../api/auth.ts";
import { navigate } from "../../router.tsx";
import { AuthError, AuthField } from "./AuthField.tsx";
import { CodeForm } from "./CodeForm.tsx";
import { useAuthCall } from "./useAuthCall.ts";

export function ForgotForm({ redirectTo }: { redirectTo: string }) {
  const [email, setEmail] = useState("");
  const { pending, error, run } = useAuthCall();
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
        const address = email.trim();
        if (await run(() => auth.resetPasswordForEmail(address, { redirectTo }))) {
          setSentTo(address);
          requestAnimationFrame(() => sent.current?.focus());
        }
      }}
    >
      <AuthField
        id={`${id}-email`}
        label="E-mail"
        type="email"
        autoComplete="email"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
      />
      <button type="submit" className="primary">{pending ? "Sending…" : "Send me a link"}</button>
      <AuthError id={`${id}-err`} error={error} />
    </form>
  );
}
