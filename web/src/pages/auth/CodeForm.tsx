// The code of a confirmation or password mail, typed where it was asked for (verifyOtp with the address
// and the code): the same browser tab carries on, whatever it was doing (an invitation, for one).
import { useId, useRef, useState } from "react";
import { auth, describeAuthError } from "../../api/auth.ts";

export function CodeForm(
  { email, type, onVerified }: {
    email: string;
    type: "signup" | "recovery";
    onVerified(): void;
  },
) {
  const [code, setCode] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (pending) return;
        setPending(true);
        setError(null);
        try {
          const { error } = await auth.verifyOtp({
            email,
            token: code.replace(/\s/g, ""),
            type,
          });
          if (error) {
            setError(describeAuthError(error));
            input.current?.focus();
          } else onVerified();
        } catch (err) {
          setError(
            describeAuthError({ message: (err as Error).message, status: 0 }),
          );
        } finally {
          setPending(false);
        }
      }}
    >
      <label htmlFor={`${id}-code`}>Code from the e-mail</label>
      <input
        id={`${id}-code`}
        ref={input}
        inputMode="numeric"
        autoComplete="one-time-code"
        required
        maxLength={12}
        value={code}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-err` : undefined}
        onChange={(e) => setCode(e.currentTarget.value)}
      />
      <button type="submit" className="primary">
        {pending ? "Checking…" : "Continue"}
      </button>
      {error && <p id={`${id}-err`} className="error" role="alert">{error}</p>}
    </form>
  );
}
