import type { Endpoint } from "../../api/client.ts";

/**
 * The confirmation only: the page deletes (its action outlives this card, which the deletion removes,
 * and says what happened).
 */
export function DeleteForm(
  { endpoint, close, confirm }: {
    endpoint: Endpoint;
    close(): void;
    confirm(): void;
  },
) {
  return (
    <form
      method="dialog"
      onSubmit={(ev) => {
        ev.preventDefault();
        close();
        confirm();
      }}
    >
      <p>
        <strong>{endpoint.url}</strong>{" "}
        will stop receiving events, and its delivery history will be deleted. This cannot be undone. To pause
        deliveries instead, disable the endpoint.
      </p>
      <div className="actions">
        <button type="submit" className="danger">Delete endpoint</button>
        <button type="button" onClick={close} data-autofocus>Cancel</button>
      </div>
    </form>
  );
}
