// Recover failed deliveries: a window (since, optionally until) and optionally one event type. The form
// says how many deliveries that is before anything is sent, and the answer links to exactly those
// deliveries in Webhook Logs (by the recovery's id).
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { errorText, useAction } from "../../api/queries.ts";
import { fromLocalInput, timeZoneName, toLocalInput } from "../../format.ts";
import { useOrgKey } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";

export interface Said {
  text: string;
  link?: { href: string; label: string };
}

const plural = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

export function RecoverForm(
  { endpoint, close, onDone }: {
    endpoint: Endpoint;
    close(): void;
    onDone(said: Said): void;
  },
) {
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3600 * 1000)));
  const [until, setUntil] = useState("");
  const [eventType, setEventType] = useState("");
  const id = useId();
  const org = useOrgKey();
  const sinceIso = fromLocalInput(since);
  const untilIso = until ? fromLocalInput(until) : undefined;
  const problem = !sinceIso
    ? "Enter a date and time for “Since”."
    : untilIso && untilIso <= sinceIso
    ? "“Until” is before “Since”: choose an “Until” after “Since”."
    : null;
  const window = {
    since: sinceIso!,
    ...(untilIso ? { until: untilIso } : {}),
    ...(eventType ? { event_type: eventType } : {}),
  };

  // The preview: how many a recovery with these fields would send again, asked again as they change.
  const preview = useQuery({
    queryKey: [org, "recover-preview", endpoint.id, window],
    queryFn: () =>
      unwrap(api.GET("/webhooks/endpoints/{id}/recover/preview", {
        params: { path: { id: endpoint.id }, query: window },
      })),
    enabled: !problem,
    staleTime: 0,
  });
  const count = problem ? null : preview.data?.count ?? null;

  const recover = useAction(async () => {
    if (problem) throw new Error(problem);
    const r = await unwrap(api.POST("/webhooks/endpoints/{id}/recover", {
      params: { path: { id: endpoint.id } },
      body: window,
    }));
    const n = r.recovered;
    onDone(
      n === 0 ? { text: "No permanently failed deliveries in that window: nothing to send again." } : {
        text: `${plural(n, "failed delivery is", "failed deliveries are")} being sent again.`,
        link: {
          href: `/settings/integrations/webhook-logs?recovery=${r.recovery_id}`,
          label: `Follow ${n === 1 ? "it" : "them"} in Webhook Logs`,
        },
      },
    );
  });
  const events = [...endpoint.events, "webhook.test"];
  return (
    <form
      onSubmit={(ev) => {
        ev.preventDefault();
        recover.mutate();
      }}
    >
      <p>
        Every delivery to <strong>{endpoint.url}</strong>{" "}
        that failed permanently in this window is sent again, with the same webhook-id. Times are in{" "}
        {timeZoneName()}.
      </p>
      <label htmlFor={`${id}-since`}>Since</label>
      <input
        id={`${id}-since`}
        type="datetime-local"
        required
        data-autofocus
        value={since}
        onChange={(e) => setSince(e.currentTarget.value)}
      />
      <label htmlFor={`${id}-until`}>Until (optional; empty: now)</label>
      <input
        id={`${id}-until`}
        type="datetime-local"
        value={until}
        aria-invalid={problem && until ? true : undefined}
        aria-describedby={`${id}-preview`}
        onChange={(e) => setUntil(e.currentTarget.value)}
      />
      <label htmlFor={`${id}-event`}>Event type</label>
      <select id={`${id}-event`} value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
        <option value="">All event types</option>
        {events.map((t) => <option key={t} value={t}>{t}</option>)}
      </select>
      <p id={`${id}-preview`} className={problem || preview.error ? "error" : "preview"} aria-live="polite">
        {problem ??
          (preview.error
            ? `Could not count them: ${errorText(preview.error)}`
            : count === null
            ? "Counting the failed deliveries…"
            : count === 0
            ? "No permanently failed deliveries in this window."
            : `${plural(count, "delivery", "deliveries")}${
              preview.data?.more ? " or more" : ""
            } will be sent again.`)}
      </p>
      <ActionResult action={recover} />
      <div className="actions">
        <button
          type="submit"
          className="primary"
          disabled={!!problem || count === 0}
          aria-disabled={recover.isPending || undefined}
        >
          {recover.isPending
            ? "Recovering…"
            : count
            ? `Send ${count === 1 ? "it" : `${count.toLocaleString()}${preview.data?.more ? "+" : ""}`} again`
            : "Send them again"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
