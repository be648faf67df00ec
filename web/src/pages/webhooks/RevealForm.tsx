// Reveal an endpoint's signing secret: the person's password again, checked by Supabase Auth (a new
// sign-in, since the API reveals only to a sign-in of the last 10 minutes), then the secret in the page's
// secret panel. The organization's audit log records each reveal, and says so here.
import { useId, useRef, useState } from "react";
import { confirmPassword } from "../../api/auth.ts";
import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { TextField } from "../../ui/TextField.tsx";

export function RevealForm(
  { endpoint, email, close, onRevealed }: {
    endpoint: Endpoint;
    email: string;
    close(): void;
    onRevealed(secret: string): void;
  },
) {
  const id = useId();
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string>();
  const field = useRef<HTMLInputElement>(null);
  const reveal = useAction(async () => {
    const wrong = await confirmPassword(email, password);
    if (wrong) {
      setError(wrong);
      field.current?.focus();
      return;
    }
    const r = await unwrap(api.POST("/webhooks/endpoints/{id}/reveal-secret", {
      params: { path: { id: endpoint.id } },
    }));
    onRevealed(r.secret);
  });
  return (
    <form
      noValidate
      onSubmit={(ev) => {
        ev.preventDefault();
        if (reveal.isPending) return;
        if (!password) {
          setError("Enter your password.");
          field.current?.focus();
          return;
        }
        setError(undefined);
        reveal.mutate();
      }}
    >
      <p>
        The secret that signs deliveries to <strong>{endpoint.url}</strong>{" "}
        will be shown on this page. Enter your password to confirm it is you; the organization's audit log
        records that you revealed it.
      </p>
      <TextField
        id={`${id}-pw`}
        label="Your password"
        help={`For ${email}.`}
        error={error}
        inputRef={field}
        type="password"
        autoComplete="current-password"
        value={password}
        data-autofocus
        onChange={(e) => setPassword(e.currentTarget.value)}
      />
      {!error && <ActionResult action={reveal} />}
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={reveal.isPending || undefined}>
          {reveal.isPending ? "Checking…" : "Reveal secret"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
