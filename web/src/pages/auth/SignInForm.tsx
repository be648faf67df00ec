// E-mail and password sign-in (signInWithPassword).
import { useId, useState } from "react";
import { auth } from "../../api/auth.ts";
import { useSession } from "../../session.tsx";
import { AuthError, AuthField } from "./AuthField.tsx";
import { useAuthCall } from "./useAuthCall.ts";

/** `email`: the address to start with (an invitation's). */
export function SignInForm({ email: invited = "" }: { email?: string }) {
  const session = useSession();
  const [email, setEmail] = useState(invited);
  const [password, setPassword] = useState("");
  const { pending, error, run } = useAuthCall();
  const id = useId();
  return (
    <form
      aria-describedby={error ? `${id}-err` : undefined}
      onSubmit={(e) => {
        e.preventDefault();
        session.setNotice(null);
        void run(() => auth.signInWithPassword({ email: email.trim(), password }));
      }}
    >
      <AuthField
        id={`${id}-email`}
        label="E-mail"
        type="email"
        autoComplete="username"
        value={email}
        onChange={(e) => setEmail(e.currentTarget.value)}
      />
      <AuthField
        id={`${id}-password`}
        label="Password"
        type="password"
        autoComplete="current-password"
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      <button type="submit" className="primary">{pending ? "Signing in…" : "Sign in"}</button>
      <AuthError id={`${id}-err`} error={error} />
    </form>
  );
}
