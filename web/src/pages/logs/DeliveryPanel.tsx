// One delivery opened from the list: its facts, Redeliver, every attempt, and the body exactly as sent.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText, useAction } from "../../api/queries.ts";
import { prettyJson } from "../../format.ts";
import { useOrgKey } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge } from "../../ui/Badge.tsx";
import { CopyButton } from "../../ui/CopyButton.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { Time } from "../../ui/Time.tsx";
import { AttemptItem } from "./AttemptItem.tsx";
import { NARROW } from "./detailView.ts";

const inFlight = (s: string) => s === "pending" || s === "retrying";

export function DeliveryPanel(
  { id, urlOf, close }: {
    id: string;
    urlOf(id: string): string;
    close(): void;
  },
) {
  const org = useOrgKey();
  const detail = useQuery({
    queryKey: [org, "delivery", id],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/deliveries/{id}", { params: { path: { id } } }),
      ),
    refetchInterval: (
      q,
    ) => (q.state.data && inFlight(q.state.data.status) ? 2000 : false),
  });
  const redeliver = useAction(async () => {
    await unwrap(
      api.POST("/webhooks/deliveries/{id}/redeliver", {
        params: { path: { id } },
      }),
    );
    return "Sent again: it goes out within seconds with the same webhook-id.";
  });
  const [formatted, setFormatted] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const d = detail.data;
  // Beside the list, the heading takes focus where it is (the list stays put); in a view of its own
  // (narrow), the view starts at its top.
  useEffect(() => {
    if (matchMedia(NARROW).matches) globalThis.scrollTo(0, 0);
    headingRef.current?.focus({ preventScroll: true });
  }, []);

  return (
    <section className="panel detail" aria-labelledby={`detail-${id}`}>
      <div className="page-head">
        <h2 id={`detail-${id}`} ref={headingRef} tabIndex={-1}>
          Delivery details
        </h2>
        <button type="button" onClick={close}>Close details</button>
      </div>
      {detail.error && (
        <ErrorBox
          error={`Could not load the delivery: ${errorText(detail.error)}`}
          retry={() => void detail.refetch()}
        />
      )}
      {!d && !detail.error && <Loading what="the delivery" />}
      {d && (
        <>
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <Badge status={d.status} />
              </dd>
            </div>
            <div>
              <dt>Event</dt>
              <dd>
                <code>{d.event_type}</code>
              </dd>
            </div>
            <div>
              <dt>Endpoint</dt>
              <dd className="url">{urlOf(d.endpoint_id)}</dd>
            </div>
            <div>
              <dt>webhook-id (event id)</dt>
              <dd>
                <code>{d.event_id}</code>
              </dd>
            </div>
            <div>
              <dt>Delivery id</dt>
              <dd>
                <code>{d.id}</code>
              </dd>
            </div>
            <div>
              <dt>Created</dt>
              <dd>
                <Time iso={d.created_at} />
              </dd>
            </div>
            {d.delivered_at && (
              <div>
                <dt>Delivered</dt>
                <dd>
                  <Time iso={d.delivered_at} />
                </dd>
              </div>
            )}
            {d.next_attempt_at && (
              <div>
                <dt>Next attempt</dt>
                <dd>
                  <Time iso={d.next_attempt_at} />
                </dd>
              </div>
            )}
          </dl>
          <div className="actions">
            <button
              type="button"
              aria-disabled={redeliver.isPending || undefined}
              onClick={() => !redeliver.isPending && redeliver.mutate()}
            >
              {redeliver.isPending ? "Redelivering…" : "Redeliver"}
            </button>
          </div>
          <ActionResult action={redeliver} />

          <h3>Attempts</h3>
          {d.attempts.length === 0
            ? <p className="muted">No attempt yet: it is waiting to be sent.</p>
            : (
              <ol className="attempts" aria-label="Attempts">
                {d.attempts.map((a) => <AttemptItem key={a.id} a={a} />)}
              </ol>
            )}

          <div className="page-head">
            <h3>Body as sent</h3>
            <div className="actions">
              <button
                type="button"
                aria-pressed={formatted}
                onClick={() => setFormatted((f) => !f)}
              >
                {formatted ? "Show exact bytes" : "Format for reading"}
              </button>
              <CopyButton text={d.body} label="Copy body" />
            </div>
          </div>
          <p className="help">
            {formatted
              ? "Formatted for reading. The signature is over the exact bytes, not this view."
              : `Exactly the ${new TextEncoder().encode(d.body).length} bytes that were signed and sent.`}
          </p>
          <pre
            className="code body"
            tabIndex={0}
            aria-label="Body"
            data-exact={!formatted}
          >
            {formatted ? prettyJson(d.body) : d.body}
          </pre>
        </>
      )}
    </section>
  );
}
