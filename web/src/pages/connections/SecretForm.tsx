// Set or replace a payment provider's secret: the one the provider gave (Stripe-like dashboards), or one
// generated here to type into the provider (Razorpay-like dashboards). Never shown again once saved.
import { useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { TextField } from "../../ui/TextField.tsx";
import type { PaymentProvider } from "./types.ts";

const RULE = "16 to 256 characters, no spaces.";
export const secretOk = (s: string) => /^[!-~]{16,256}$/.test(s);

export function SecretForm(
  { provider, replacing, close, onSaved }: {
    provider: PaymentProvider;
    replacing: boolean;
    close(): void;
    /** `value`: the generated secret to show once, or null when the admin typed their own. */
    onSaved(value: string | null, last4: string): void;
  },
) {
  const [mode, setMode] = useState<"own" | "generate">("own");
  const [own, setOwn] = useState("");
  const [error, setError] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const save = useAction(async () => {
    const r = await unwrap(api.POST("/webhooks/connections/{provider}/secret", {
      params: { path: { provider } },
      body: mode === "own" ? { secret: own } : {},
    }));
    onSaved(r.generated_secret ?? null, r.last4 ?? "");
  });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (mode === "own" && !secretOk(own)) {
          setError(`The secret must be ${RULE}`);
          input.current?.focus();
          return;
        }
        setError(undefined);
        save.mutate(undefined, {
          onError: (err) => {
            const f = err instanceof ApiError ? err.fields.find((x) => x.field === "secret") : undefined;
            if (f) {
              setError(`The secret ${f.message}.`);
              input.current?.focus();
            }
          },
        });
      }}
    >
      {replacing && (
        <p>
          The new secret replaces the current one at once. Save it here right after changing it at the
          provider: anything signed with the old one in between is refused, and the provider sends it again.
        </p>
      )}
      <fieldset>
        <legend>Which secret</legend>
        <label className="choice">
          <input
            type="radio"
            name={`${id}-mode`}
            checked={mode === "own"}
            data-autofocus
            onChange={() => setMode("own")}
          />
          <span>The secret my provider shows me</span>
        </label>
        <label className="choice">
          <input
            type="radio"
            name={`${id}-mode`}
            checked={mode === "generate"}
            onChange={() => setMode("generate")}
          />
          <span>Generate one for me to enter at the provider</span>
        </label>
      </fieldset>
      {mode === "own" && (
        <TextField
          id={`${id}-secret`}
          label="Webhook secret"
          help={RULE}
          error={error}
          inputRef={input}
          value={own}
          autoComplete="off"
          spellcheck={false}
          onChange={(e) => setOwn(e.currentTarget.value)}
        />
      )}
      {!error && <ActionResult action={save} />}
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={save.isPending || undefined}>
          {save.isPending ? "Saving…" : "Save secret"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
