// Asked before joining when the invitee's account existed, unconfirmed, before the invitation went out:
// someone else may have signed up with the address and chosen its password (Supabase Auth keeps it when
// the owner confirms), so the invitee sets their own. Supabase Auth ends the account's other sessions
// when the password changes; the current password is asked only where Auth asks for it (a session begun
// with a password, not by a mail's link or code).
import { useId, useRef, useState } from "react";
import { auth, beganByMail, describeAuthError } from "../../api/auth.ts";
import { useSession } from "../../session.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { PASSWORD_RULE } from "../auth/passwordRule.ts";

export function NewPasswordForm({ done }: { done(): void }) {
  const session = useSession();
  const id = useId();
  const first = useRef<HTMLInputElement>(null);
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);
  const token = session.state.kind === "signed_in" ? session.state.session.access_token : "";
  const needsCurrent = !beganByMail(token);
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (pending) return;
        if (!password || password !== again) {
          setError(
            password ? "The two new passwords are not the same." : "Choose a new password.",
          );
          first.current?.focus();
          return;
        }
        setPending(true);
        setError(undefined);
        const { error: failed } = await auth.updateUser(
          needsCurrent ? { password, current_password: current } : { password },
        ).catch((err: Error) => ({
          error: { message: err.message, status: 0 } as { message: string },
        }));
        setPending(false);
        if (failed) {
          setError(describeAuthError(failed));
          first.current?.focus();
        } else done();
      }}
    >
      <h2>Set a new password first</h2>
      <p>
        This account was created before its e-mail address was confirmed, so someone else may have chosen its
        password. Choose your own before you join: every other device signed in to this account will be signed
        out.
      </p>
      {needsCurrent && (
        <TextField
          id={`${id}-current`}
          label="Current password"
          help="The password you signed in with."
          type="password"
          autoComplete="current-password"
          value={current}
          onChange={(e) => setCurrent(e.currentTarget.value)}
        />
      )}
      <TextField
        id={`${id}-new`}
        label="New password"
        help={`${PASSWORD_RULE}, not the one the account has now.`}
        error={error}
        inputRef={first}
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      <TextField
        id={`${id}-again`}
        label="New password again"
        help=""
        type="password"
        autoComplete="new-password"
        value={again}
        onChange={(e) => setAgain(e.currentTarget.value)}
      />
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={pending || undefined}>
          {pending ? "Saving…" : "Save password and join"}
        </button>
      </div>
    </form>
  );
}
