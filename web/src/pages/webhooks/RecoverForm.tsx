import { useId, useState } from "react";
import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { fromLocalInput, timeZoneName, toLocalInput } from "../../format.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";

export function RecoverForm(
  { endpoint, close, onDone }: {
    endpoint: Endpoint;
    close(): void;
    onDone(said: string): void;
  },
) {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3600 * 1000)));
  const id = useId();
  const recover = useAction(async () => {
    const iso = fromLocalInput(since);
    if (!iso) throw new Error("Enter a date and time.");
    const r = await unwrap(api.POST("/webhooks/endpoints/{id}/recover", {
      params: { path: { id: endpoint.id } },
      body: { since: iso },
    }));
    const n = r.recovered;
    onDone(
      n === 0
        ? "No permanently failed deliveries since then: nothing to send again."
        : `${n} failed deliver${n === 1 ? "y is" : "ies are"} being sent again. Follow them in Webhook Logs.`,
    );
  });
  return (
    <form
      onSubmit={(ev) => {
        ev.preventDefault();
        recover.mutate();
      }}
    >
      <p>
        Every delivery to <strong>{endpoint.url}</strong>{" "}
        that failed permanently since this time is sent again.
      </p>
      <label htmlFor={id}>Since ({timeZoneName()})</label>
      <input
        id={id}
        type="datetime-local"
        required
        data-autofocus
        value={since}
        onChange={(e) => setSince(e.currentTarget.value)}
      />
      <ActionResult action={recover} />
      <div className="actions">
        <button type="submit" className="primary" disabled={recover.isPending}>
          {recover.isPending ? "Recovering…" : "Send them again"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
