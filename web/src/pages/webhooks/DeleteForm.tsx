import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";

export function DeleteForm(
  { endpoint, close, onDone }: {
    endpoint: Endpoint;
    close(): void;
    onDone(): void;
  },
) {
  const remove = useAction(async () => {
    await unwrap(
      api.DELETE("/webhooks/endpoints/{id}", {
        params: { path: { id: endpoint.id } },
      }),
    );
  });
  return (
    <form
      method="dialog"
      onSubmit={(ev) => {
        ev.preventDefault();
        remove.mutate(undefined, {
          onSuccess: () => {
            close();
            onDone();
          },
        });
      }}
    >
      <p>
        <strong>{endpoint.url}</strong>{" "}
        will stop receiving events, and its delivery history will be deleted.
        This cannot be undone. To pause deliveries instead, disable the
        endpoint.
      </p>
      <ActionResult action={remove} />
      <div className="actions">
        <button type="submit" className="danger" disabled={remove.isPending}>
          {remove.isPending ? "Deleting…" : "Delete endpoint"}
        </button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
