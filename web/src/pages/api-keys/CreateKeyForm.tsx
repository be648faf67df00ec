import { useId, useRef, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";

export function CreateKeyForm(
  { onCreated }: { onCreated(k: { name: string; key: string }): void },
) {
  const [name, setName] = useState("");
  const [nameError, setNameError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const create = useAction(async () => {
    const r = await unwrap(
      api.POST("/webhooks/api-keys", { body: { name: name.trim() } }),
    );
    onCreated({ name: r.name, key: r.key });
    setName("");
  });
  return (
    <form
      className="panel inline-form"
      aria-labelledby={`${id}-t`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (!name.trim()) {
          setNameError("Give the key a name, so you can tell it apart later.");
          input.current?.focus();
          return;
        }
        setNameError(null);
        create.mutate();
      }}
    >
      <h2 id={`${id}-t`}>Create a key</h2>
      <label htmlFor={`${id}-name`}>Name</label>
      <div className="row">
        <input
          id={`${id}-name`}
          ref={input}
          value={name}
          maxLength={100}
          placeholder="e.g. Zapier"
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? `${id}-err` : undefined}
          onChange={(e) => setName(e.currentTarget.value)}
        />
        <button type="submit" className="primary" aria-disabled={create.isPending || undefined}>
          {create.isPending ? "Creating…" : "Create key"}
        </button>
      </div>
      {nameError && <p id={`${id}-err`} className="field-error">{nameError}</p>}
      <ActionResult action={create} />
    </form>
  );
}
