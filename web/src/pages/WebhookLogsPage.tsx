// Settings > Integrations > Webhook Logs: every delivery, newest first, with filters, cursor paging, the
// exact body as sent and every attempt. The list refreshes by itself, faster while deliveries are in flight.
import { useEffect, useId, useRef, useState } from "react";
import { api, type Delivery, type DeliveryDetail, type DeliveryStatus, unwrap } from "../api/client.ts";
import { fromLocalInput, prettyJson, timeZoneName, toLocalInput } from "../format.ts";
import { setQuery, useLocation } from "../router.tsx";
import { useAction, useInterval, useLoad, useTick } from "../ui/hooks.ts";
import { ActionResult, Badge, CopyButton, Empty, ErrorBox, Loading, statusWord, Time } from "../ui/parts.tsx";

const STATUSES: DeliveryStatus[] = [
  "pending",
  "retrying",
  "delivered",
  "permanently_failed",
];
const PAGE = 50;
const inFlight = (s: string) => s === "pending" || s === "retrying";

interface Filters {
  endpoint_id?: string;
  event_type?: string;
  status?: DeliveryStatus;
  since?: string;
  until?: string;
}

export function WebhookLogsPage() {
  useTick();
  const loc = useLocation();
  const q = loc.searchParams;
  const filters: Filters = {
    endpoint_id: q.get("endpoint") || undefined,
    event_type: q.get("event") || undefined,
    status: (STATUSES as string[]).includes(q.get("status") ?? "")
      ? (q.get("status") as DeliveryStatus)
      : undefined,
    since: fromLocalInput(q.get("since") ?? ""),
    until: fromLocalInput(q.get("until") ?? ""),
  };
  const filterKey = JSON.stringify(filters);
  const openId = q.get("delivery");

  const endpoints = useLoad(
    () => unwrap(api.GET("/webhooks/endpoints")).then((r) => r.data),
    [],
  );
  const catalogue = useLoad(
    () => unwrap(api.GET("/webhooks/event-types")).then((r) => r.data),
    [],
  );
  const urlOf = (id: string) => endpoints.data?.find((e) => e.id === id)?.url ?? "deleted endpoint";

  const [rows, setRows] = useState<Delivery[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [updatedAt, setUpdatedAt] = useState<number | null>(null);
  const gen = useRef(0);

  const fetchPage = (limit: number, after?: string | null) =>
    unwrap(api.GET("/webhooks/deliveries", {
      params: {
        query: { ...filters, limit, ...(after ? { cursor: after } : {}) },
      },
    }));

  // A new filter starts over.
  useEffect(() => {
    const mine = ++gen.current;
    setRows(null);
    setCursor(null);
    setError(null);
    fetchPage(PAGE).then(
      (r) => {
        if (mine !== gen.current) return;
        setRows(r.data);
        setCursor(r.next_cursor);
        setUpdatedAt(Date.now());
      },
      (e) => mine === gen.current && setError((e as Error).message),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filterKey]);

  // Refresh what is shown (up to 200 rows) in place; older pages the person loaded stay as they are.
  const refresh = async () => {
    const mine = gen.current;
    const shown = rows?.length ?? 0;
    const limit = Math.min(200, Math.max(PAGE, shown));
    try {
      const r = await fetchPage(limit);
      if (mine !== gen.current) return;
      setRows((cur) => {
        const tail = (cur ?? []).slice(limit).filter((d) => !r.data.some((x) => x.id === d.id));
        return [...r.data, ...tail];
      });
      if (shown <= limit) setCursor(r.next_cursor);
      setUpdatedAt(Date.now());
      setError(null);
    } catch (e) {
      if (mine === gen.current) setError((e as Error).message);
    }
  };
  const busy = rows?.some((d) => inFlight(d.status)) ?? false;
  useInterval(
    () => {
      if (document.visibilityState === "visible") void refresh();
    },
    busy ? 2000 : 5000,
    rows !== null,
  );

  const loadMore = async () => {
    if (!cursor) return;
    const mine = gen.current;
    setLoadingMore(true);
    try {
      const r = await fetchPage(PAGE, cursor);
      if (mine !== gen.current) return;
      setRows((
        cur,
      ) => [
        ...(cur ?? []),
        ...r.data.filter((d) => !(cur ?? []).some((x) => x.id === d.id)),
      ]);
      setCursor(r.next_cursor);
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setLoadingMore(false);
    }
  };

  const anyFilter = Object.values(filters).some(Boolean);
  return (
    <>
      <div className="page-head">
        <h1>Webhook Logs</h1>
        <button type="button" onClick={() => void refresh()}>Refresh</button>
      </div>
      <p className="lead">
        Every message we sent to your endpoints, newest first. A failed delivery is retried for 24 hours, then
        marked permanently failed. Times are in your time zone ({timeZoneName()}).
      </p>
      <FilterBar
        endpoints={endpoints.data?.map((e) => ({ id: e.id, url: e.url })) ?? []}
        eventTypes={[
          ...(catalogue.data?.map((c) => c.type) ?? []),
          "webhook.test",
        ]}
      />
      {error && (
        <ErrorBox
          error={`Could not load deliveries: ${error}`}
          retry={() => void refresh()}
        />
      )}
      <p className="muted small" aria-live="off">
        {busy ? "Deliveries in flight: refreshing every 2 seconds." : "Refreshing every 5 seconds."}
        {updatedAt && <>{" "}Last updated {new Date(updatedAt).toLocaleTimeString()}.</>}
      </p>
      {rows === null && !error && <Loading what="deliveries" />}
      {rows && rows.length === 0 && (
        anyFilter
          ? (
            <Empty title="No deliveries match these filters">
              <p>Widen the time range or clear a filter.</p>
              <button
                type="button"
                onClick={() =>
                  setQuery({
                    endpoint: null,
                    event: null,
                    status: null,
                    since: null,
                    until: null,
                  })}
              >
                Clear filters
              </button>
            </Empty>
          )
          : (
            <Empty title="No deliveries yet">
              <p>
                Deliveries appear here when something happens in your records, for example when a member is
                added. To try an endpoint now, use “Send test event” on the Webhooks page.
              </p>
            </Empty>
          )
      )}
      {rows && rows.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Deliveries"
          tabIndex={0}
        >
          <table className="logs">
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col" className="wide">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col" className="wide">Attempts</th>
                <th scope="col" className="wide">Last response</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr
                  key={d.id}
                  className={d.id === openId ? "selected" : undefined}
                  data-delivery-id={d.id}
                >
                  <td>
                    <Time iso={d.created_at} />
                  </td>
                  <td>
                    {/* The event opens the delivery: in reach on a phone, where the table scrolls. */}
                    <button
                      type="button"
                      className="linkish"
                      aria-label={`${d.event_type}, created ${
                        new Date(d.created_at).toLocaleString()
                      }: show details`}
                      onClick={() => setQuery({ delivery: d.id })}
                    >
                      <code>{d.event_type}</code>
                    </button>
                  </td>
                  <td className="wide url">{urlOf(d.endpoint_id)}</td>
                  <td>
                    <Badge status={d.status} />
                    {d.status === "retrying" && d.next_attempt_at && (
                      <div className="muted small">
                        next try <Time iso={d.next_attempt_at} />
                      </div>
                    )}
                  </td>
                  <td className="wide">{d.attempt_count}</td>
                  <td className="wide">
                    {d.last_response_status !== null ? `HTTP ${d.last_response_status}` : ""}
                    {d.last_error && <div className="muted small">{d.last_error}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" onClick={loadMore} disabled={loadingMore}>
          {loadingMore ? "Loading older deliveries…" : "Show older deliveries"}
        </button>
      )}
      {openId && (
        <DeliveryPanel
          key={openId}
          id={openId}
          urlOf={urlOf}
          onChanged={refresh}
          close={() => setQuery({ delivery: null })}
        />
      )}
    </>
  );
}

function FilterBar(
  { endpoints, eventTypes }: {
    endpoints: { id: string; url: string }[];
    eventTypes: string[];
  },
) {
  const loc = useLocation();
  const q = loc.searchParams;
  const id = useId();
  const field = (name: string) => ({
    id: `${id}-${name}`,
    value: q.get(name) ?? "",
    onChange: (e: { target: { value: string } }) => setQuery({ [name]: e.target.value, delivery: null }),
  });
  return (
    <form
      className="filters"
      aria-label="Filter deliveries"
      onSubmit={(e) => e.preventDefault()}
    >
      <div>
        <label htmlFor={`${id}-endpoint`}>Endpoint</label>
        <select {...field("endpoint")}>
          <option value="">All endpoints</option>
          {endpoints.map((e) => <option key={e.id} value={e.id}>{e.url}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-event`}>Event type</label>
        <select {...field("event")}>
          <option value="">All events</option>
          {eventTypes.map((t) => <option key={t} value={t}>{t}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-status`}>Status</label>
        <select {...field("status")}>
          <option value="">Any status</option>
          {STATUSES.map((s) => <option key={s} value={s}>{statusWord(s)}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-since`}>From</label>
        <input
          type="datetime-local"
          {...field("since")}
          max={toLocalInput(new Date(Date.now() + 86400000))}
        />
      </div>
      <div>
        <label htmlFor={`${id}-until`}>Until</label>
        <input type="datetime-local" {...field("until")} />
      </div>
    </form>
  );
}

function DeliveryPanel(
  { id, urlOf, onChanged, close }: {
    id: string;
    urlOf(id: string): string;
    onChanged(): Promise<void>;
    close(): void;
  },
) {
  const detail = useLoad(
    () =>
      unwrap(
        api.GET("/webhooks/deliveries/{id}", { params: { path: { id } } }),
      ),
    [id],
  );
  const action = useAction();
  const [formatted, setFormatted] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const d: DeliveryDetail | undefined = detail.data;
  useEffect(() => {
    headingRef.current?.focus();
  }, []);
  useInterval(() => void detail.reload(), 2000, !!d && inFlight(d.status));

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
          error={`Could not load the delivery: ${detail.error}`}
          retry={detail.reload}
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
              <dt>webhook-id</dt>
              <dd>
                <code>{d.event_id}</code>
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
              disabled={action.pending}
              onClick={() =>
                action.run(async () => {
                  await unwrap(
                    api.POST("/webhooks/deliveries/{id}/redeliver", {
                      params: { path: { id } },
                    }),
                  );
                  await Promise.all([detail.reload(), onChanged()]);
                  return "Sent again: it goes out within seconds with the same webhook-id.";
                })}
            >
              {action.pending ? "Redelivering…" : "Redeliver"}
            </button>
          </div>
          <ActionResult action={action} />

          <h3>Attempts</h3>
          {d.attempts.length === 0 ? <p className="muted">No attempt yet: it is waiting to be sent.</p> : (
            <div
              className="table-wrap"
              role="region"
              aria-label="Attempts"
              tabIndex={0}
            >
              <table className="attempts">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Response</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Error</th>
                    <th scope="col">Response body (start)</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={a.id}>
                      <td>{a.attempt_number}</td>
                      <td>
                        <Time iso={a.attempted_at} />
                      </td>
                      <td
                        className={a.response_status &&
                            a.response_status < 300
                          ? "ok"
                          : "error"}
                      >
                        {a.response_status !== null ? `HTTP ${a.response_status}` : "No response"}
                      </td>
                      <td>
                        {a.duration_ms !== null ? `${a.duration_ms} ms` : ""}
                      </td>
                      <td>{a.error}</td>
                      <td>
                        <code className="excerpt">{a.response_excerpt}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
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
