// What every form of /auth does with a call to Supabase Auth: one at a time, its error in words
// (describeAuthError), whether it threw or answered with an error.
import { useState } from "react";
import { describeAuthError } from "../../api/auth.ts";

type Answer = { error: { message?: string; code?: string; status?: number } | null } | void;

export function useAuthCall() {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** Runs `call`; true when it succeeded, false when it failed (the error is set) or one is running. */
  async function run(call: () => Promise<Answer>): Promise<boolean> {
    if (pending) return false;
    setPending(true);
    setError(null);
    try {
      const answer = await call();
      if (answer?.error) {
        setError(describeAuthError(answer.error));
        return false;
      }
      return true;
    } catch (err) {
      setError(describeAuthError({ message: (err as Error).message, status: 0 }));
      return false;
    } finally {
      setPending(false);
    }
  }
  return { pending, error, setError, run };
}
