// A test delivery of any event type: webhook.test (a ping), or the type's example body. The body carries
// "test": true, so the receiver can tell it from a real event.
import { useId, useState } from "react";
import { api, type Endpoint, type EventTypeInfo, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";

type TestType = "webhook.test" | Endpoint["events"][number];

export function SendTestForm(
  { endpoint, catalogue, close, onDone }: {
    endpoint: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    close(): void;
    onDone(said: string): void;
  },
) {
  const [type, setType] = useState<TestType>("webhook.test");
  const id = useId();
  const send = useAction(async () => {
    await unwrap(api.POST("/webhooks/endpoints/{id}/test", {
      params: { path: { id: endpoint.id } },
      body: { event_type: type },
    }));
    onDone(
      `Test event sent (${type}). It appears in Webhook Logs within seconds.`,
    );
  });
  const subscribed = (t: string) => endpoint.events.includes(t as Endpoint["events"][number]);
  const example = catalogue?.find((c) => c.type === type)?.example;
  return (
    <form
      onSubmit={(ev) => {
        ev.preventDefault();
        send.mutate();
      }}
    >
      <p>
        Sends one delivery to <strong>{endpoint.url}</strong>. Its body carries <code>"test": true</code>{" "}
        (a real event never does), so your receiver can tell it apart and skip storing it.
      </p>
      <label htmlFor={id}>Event type</label>
      <select
        id={id}
        value={type}
        data-autofocus
        onChange={(e) => setType(e.currentTarget.value as TestType)}
      >
        <option value="webhook.test">webhook.test (a ping)</option>
        {catalogue?.map((c) => (
          <option key={c.type} value={c.type}>
            {c.type} (example body{subscribed(c.type) ? "" : "; not subscribed"})
          </option>
        ))}
      </select>
      {example !== undefined && (
        <details>
          <summary>Example body of {type}</summary>
          <pre
            className="code"
            tabIndex={0}
          >{JSON.stringify(example, null, 2)}</pre>
        </details>
      )}
      <ActionResult action={send} />
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={send.isPending || undefined}>
          {send.isPending ? "Sending…" : "Send test"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
