// One payment notification: what it was, what happened to it in words (the stored error kept for
// support), replay when a replay can change something, and the payload when it was kept.
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText, useAction } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge, statusWord } from "../../ui/Badge.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { Time } from "../../ui/Time.tsx";
import { explain, REPLAYABLE, whyNotReplayable } from "./explain.ts";
import { PROVIDERS } from "./providers.ts";
import "./EntryPanel.css";

export function EntryPanel({ id, close }: { id: string; close(): void }) {
  const org = useOrgKey();
  const entry = useQuery({
    queryKey: [org, "inbound-entry", id],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/inbound-log/{id}", { params: { path: { id } } }),
      ),
  });
  const replay = useAction(async () => {
    const r = await unwrap(
      api.POST("/webhooks/inbound-log/{id}/replay", {
        params: { path: { id } },
      }),
    );
    return `Replayed: ${statusWord(r.status).toLowerCase()}${r.reason ? ` (${r.reason})` : ""}.`;
  });
  const heading = useRef<HTMLHeadingElement>(null);
  // Opened from the list: keyboards and screen readers continue here, as in Webhook Logs.
  useEffect(() => heading.current?.focus(), []);
  const e = entry.data;
  const notReplayable = e ? whyNotReplayable(e.status) : null;
  return (
    <section className="panel detail" aria-labelledby={`entry-${id}`}>
      <div className="page-head">
        <h2 id={`entry-${id}`} ref={heading} tabIndex={-1}>
          Notification details
        </h2>
        <button type="button" onClick={close}>Close details</button>
      </div>
      {entry.error && (
        <ErrorBox
          error={`Could not load it: ${errorText(entry.error)}`}
          retry={() => void entry.refetch()}
        />
      )}
      {!e && !entry.error && <Loading what="the notification" />}
      {e && (
        <>
          <dl className="facts">
            <div>
              <dt>Status</dt>
              <dd>
                <Badge status={e.status} />
              </dd>
            </div>
            <div>
              <dt>Provider</dt>
              <dd>{PROVIDERS[e.provider] ?? e.provider}</dd>
            </div>
            <div>
              <dt>Event</dt>
              <dd>
                <code>{e.event ?? "—"}</code>
              </dd>
            </div>
            <div>
              <dt>Idempotency key</dt>
              <dd>
                <code>{e.idempotency_key ?? "—"}</code>
              </dd>
            </div>
            <div>
              <dt>Signature</dt>
              <dd>
                {e.signature_valid === null ? "—" : e.signature_valid ? "Valid" : "Invalid"}
              </dd>
            </div>
            <div>
              <dt>Received</dt>
              <dd>
                <Time iso={e.received_at} /> ({e.deliveries}× from the provider)
              </dd>
            </div>
            <div>
              <dt>Tries to apply</dt>
              <dd>
                {e.attempts}× {e.processed_at && (
                  <>
                    , applied <Time iso={e.processed_at} />
                  </>
                )}
              </dd>
            </div>
            {explain(e.error, e.status) && (
              <div className="wide-fact">
                <dt>
                  {e.error ? "What went wrong" : "Why it was not applied"}
                </dt>
                <dd className={e.error ? "error" : undefined}>
                  {explain(e.error, e.status)}
                </dd>
              </div>
            )}
            {e.error && (
              <div className="wide-fact">
                <dt>For support</dt>
                <dd>
                  <code>{e.error}</code>
                </dd>
              </div>
            )}
          </dl>
          {notReplayable
            ? <p className="note">{notReplayable}</p>
            : REPLAYABLE.has(e.status) && (
              <div className="actions">
                <button
                  type="button"
                  aria-disabled={replay.isPending || undefined}
                  onClick={() => !replay.isPending && replay.mutate()}
                >
                  {replay.isPending ? "Replaying…" : "Replay"}
                </button>
              </div>
            )}
          <ActionResult action={replay} />
          <h3>Payload</h3>
          {e.payload === null || e.payload === undefined
            ? (
              <p className="muted">
                Not kept: {notReplayable ? "see above." : "this notification had no body."}
              </p>
            )
            : (
              <pre
                className="code body"
                tabIndex={0}
                aria-label="Payload"
              >{JSON.stringify(e.payload, null, 2)}</pre>
            )}
        </>
      )}
    </section>
  );
}
