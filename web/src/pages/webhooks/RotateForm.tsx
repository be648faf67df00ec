import { useId, useRef, useState } from "react";
import { api, ApiError, type Endpoint, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { secretChecks, SecretChoice, type SecretMode } from "./SecretChoice.tsx";

const GRACE = [
  { seconds: 0, label: "No grace: the old secret stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "24 hours (recommended)" },
  { seconds: 7 * 86400, label: "7 days" },
];

export function RotateForm(
  { endpoint, close, onRotated }: {
    endpoint: Endpoint;
    close(): void;
    onRotated(secret: string): void;
  },
) {
  const [grace, setGrace] = useState(86400);
  const [mode, setMode] = useState<SecretMode>("generate");
  const [own, setOwn] = useState("");
  const [ownError, setOwnError] = useState<string>();
  const ownRef = useRef<HTMLInputElement>(null);
  const id = useId();
  const rotate = useAction(async () => {
    const r = await unwrap(api.POST("/webhooks/endpoints/{id}/rotate-secret", {
      params: { path: { id: endpoint.id } },
      body: {
        grace_seconds: grace,
        ...(mode === "own" ? { secret: own } : {}),
      },
    }));
    onRotated(r.secret);
  });
  return (
    <form
      noValidate
      onSubmit={(ev) => {
        ev.preventDefault();
        if (mode === "own" && !secretChecks(own).every((c) => c.ok)) {
          setOwnError("This secret does not meet the rule above yet.");
          ownRef.current?.focus();
          return;
        }
        setOwnError(undefined);
        rotate.mutate(undefined, {
          onError: (e) => {
            const f = e instanceof ApiError ? e.fields.find((x) => x.field === "secret") : undefined;
            if (f) {
              setOwnError(f.message);
              ownRef.current?.focus();
            }
          },
        });
      }}
    >
      <p>
        A new secret signs every delivery to{" "}
        <strong>{endpoint.url}</strong>. During the grace period the old secret signs too, so the receiver
        keeps working while you update it.
      </p>
      <label htmlFor={id}>Grace period</label>
      <select
        id={id}
        value={grace}
        data-autofocus
        onChange={(e) => setGrace(Number(e.currentTarget.value))}
      >
        {GRACE.map((g) => <option key={g.seconds} value={g.seconds}>{g.label}</option>)}
      </select>
      <SecretChoice
        mode={mode}
        setMode={setMode}
        value={own}
        setValue={setOwn}
        error={ownError}
        inputRef={ownRef}
      />
      {!ownError && <ActionResult action={rotate} />}
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={rotate.isPending || undefined}>
          {rotate.isPending ? "Rotating…" : "Rotate secret"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
