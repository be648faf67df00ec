// The code of a confirmation or password mail, typed where it was asked for (verifyOtp with the address
// and the code): the same browser tab carries on, whatever it was doing (an invitation, for one).
import { useId, useRef, useState } from "react";
import { auth } from "../../api/auth.ts";
import { AuthError, AuthField } from "./AuthField.tsx";
import { useAuthCall } from "./useAuthCall.ts";

export function CodeForm(
  { email, type, onVerified }: { email: string; type: "signup" | "recovery"; onVerified(): void },
) {
  const [code, setCode] = useState("");
  const { pending, error, run } = useAuthCall();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (await run(() => auth.verifyOtp({ email, token: code.replace(/\s/g, ""), type }))) onVerified();
        else input.current?.focus();
      }}
    >
      <AuthField
        id={`${id}-code`}
        label="Code from the e-mail"
        inputRef={input}
        inputMode="numeric"
        autoComplete="one-time-code"
        maxLength={12}
        value={code}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-err` : undefined}
        onChange={(e) => setCode(e.currentTarget.value)}
      />
      <button type="submit" className="primary">{pending ? "Checking…" : "Continue"}</button>
      <AuthError id={`${id}-err`} error={error} />
    </form>
  );
}
