// A new account (signUp). Where Supabase Auth confirms addresses (hosted: enable_confirmations), no
// session comes back: the person opens the link of the confirmation mail, or types its code here.
import { useId, useRef, useState } from "react";
import { auth } from "../../api/auth.ts";
import { useSession } from "../../session.tsx";
import { AuthError, AuthField } from "./AuthField.tsx";
import { CodeForm } from "./CodeForm.tsx";
import { PASSWORD_RULE } from "./passwordRule.ts";
import { useAuthCall } from "./useAuthCall.ts";

/** `email`: the address to start with (an invitation's). */
export function SignUpForm({ redirectTo, email: invited = "" }: { redirectTo: string; email?: string }) {
  const session = useSession();
  const [email, setEmail] = useState(invited);
  const [password, setPassword] = useState("");
  const { pending, error, run } = useAuthCall();
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
        <CodeForm email={sentTo} type="signup" onVerified={() => session.setNotice(null)} />
      </>
    );
  }
  return (
    <form
      aria-describedby={error ? `${id}-err` : undefined}
      onSubmit={async (e) => {
        e.preventDefault();
        session.setNotice(null);
        const address = email.trim();
        let signedIn = false;
        const ok = await run(async () => {
          const answer = await auth.signUp({
            email: address,
            password,
            options: { emailRedirectTo: redirectTo },
          });
          signedIn = !!answer.data.session;
          return answer;
        });
        // With a session the person is signed in (the page moves on by itself); without, a mail went out.
        if (ok && !signedIn) {
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
      <AuthField
        id={`${id}-password`}
        label="Password"
        type="password"
        autoComplete="new-password"
        aria-describedby={`${id}-password-help`}
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      <p id={`${id}-password-help`} className="help">
        {PASSWORD_RULE}. A few words you will remember make a good one.
      </p>
      <button type="submit" className="primary">
        {pending ? "Creating your account…" : "Create account"}
      </button>
      <AuthError id={`${id}-err`} error={error} />
    </form>
  );
}
