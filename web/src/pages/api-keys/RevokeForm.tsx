import { api, type ApiKey, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";

/** `onRevoked`: the key is revoked (the dialog closes; the page says so). */
export function RevokeForm({ k, close, onRevoked }: { k: ApiKey; close(): void; onRevoked(): void }) {
  const revoke = useAction(async () => {
    await unwrap(
      api.DELETE("/webhooks/api-keys/{id}", { params: { path: { id: k.id } } }),
    );
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        revoke.mutate(undefined, { onSuccess: onRevoked });
      }}
    >
      <p>
        Anything using <strong>{k.name}</strong>{" "}
        ({k.key_prefix}…) stops working at once. This cannot be undone.
      </p>
      <ActionResult action={revoke} />
      <div className="actions">
        <button type="submit" className="danger" aria-disabled={revoke.isPending || undefined}>
          {revoke.isPending ? "Revoking…" : "Revoke key"}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
