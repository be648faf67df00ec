// Settings > Integrations > Payment webhooks: what the checkout and card-payment providers sent us,
// whether it was applied, and replay for the ones that failed.
import { useId, useState } from "react";
import { api, type InboundEntry, type paths, unwrap } from "../api/client.ts";
import { useAction, useLoad, useTick } from "../ui/hooks.ts";
import { ActionResult, Badge, Dialog, Empty, ErrorBox, Loading, statusWord, Time } from "../ui/parts.tsx";

const STATES = [
  "received",
  "processed",
  "unmatched",
  "failed",
  "rejected",
  "unverified",
] as const;
type State = (typeof STATES)[number];
type Provider = NonNullable<
  NonNullable<paths["/webhooks/inbound-log"]["get"]["parameters"]["query"]>["provider"]
>;
// The providers this page is about (the filter offers them); labels also for others the log may hold.
const PAYMENT_PROVIDERS = ["checkout", "payments"] as const satisfies readonly Provider[];
const PROVIDERS: Record<string, string | undefined> = {
  checkout: "Checkout (subscriptions)",
  payments: "Card payments",
  whatsapp: "WhatsApp",
};

export function PaymentWebhooksPage() {
  useTick();
  const [status, setStatus] = useState<State | "">("");
  const [provider, setProvider] = useState<Provider | "">("");
  const filter = { ...(status ? { status } : {}), ...(provider ? { provider } : {}) };
  const [rows, setRows] = useState<InboundEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const replayAll = useAction();
  const id = useId();

  const page = useLoad(async () => {
    const r = await unwrap(api.GET("/webhooks/inbound-log", {
      params: { query: { limit: 50, ...filter } },
    }));
    setRows(r.data);
    setCursor(r.next_cursor);
    return r;
  }, [status, provider]);
  const more = useAction();

  return (
    <>
      <div className="page-head">
        <h1>Payment webhooks</h1>
        <button
          type="button"
          className="primary"
          onClick={() => setConfirmAll(true)}
          disabled={replayAll.pending}
        >
          {replayAll.pending ? "Replaying…" : "Replay all failed"}
        </button>
      </div>
      <p className="lead">
        Every notification your payment providers sent (subscriptions and card payments), logged before it was
        applied. When one could not be applied, fix the cause and replay it: an entry that was already applied
        changes nothing.
      </p>
      <ActionResult action={replayAll} />
      <div className="filters">
        <div>
          <label htmlFor={`${id}-provider`}>Provider</label>
          <select
            id={`${id}-provider`}
            value={provider}
            onChange={(e) => setProvider(e.target.value as Provider | "")}
          >
            <option value="">All providers</option>
            {PAYMENT_PROVIDERS.map((p) => <option key={p} value={p}>{PROVIDERS[p]}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-status`}>Status</label>
          <select
            id={`${id}-status`}
            value={status}
            onChange={(e) => setStatus(e.target.value as State | "")}
          >
            <option value="">Any status</option>
            {STATES.map((s) => <option key={s} value={s}>{statusWord(s)}</option>)}
          </select>
        </div>
      </div>
      {page.error && (
        <ErrorBox
          error={`Could not load the payment log: ${page.error}`}
          retry={page.reload}
        />
      )}
      {page.loading && !page.data && <Loading what="the payment log" />}
      {page.data && rows.length === 0 && (
        <Empty
          title={status || provider ? "No notifications match these filters" : "No payment notifications yet"}
        >
          <p>
            {status || provider
              ? "Choose another provider or status to see other notifications."
              : "They appear here when your checkout or card-payment provider sends one. Point the provider at this service's payment webhook addresses (see the README)."}
          </p>
        </Empty>
      )}
      {rows.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Payment notifications"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col" className="wide">Provider</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" className="wide">Error</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr
                  key={r.id}
                  className={open === r.id ? "selected" : undefined}
                  data-log-id={r.id}
                >
                  <td>
                    <Time iso={r.received_at} />
                  </td>
                  <td className="wide">{PROVIDERS[r.provider] ?? r.provider}</td>
                  <td>
                    <button
                      type="button"
                      className="linkish"
                      onClick={() => setOpen(r.id)}
                      aria-label={`${r.event ?? "—"}, received ${
                        new Date(r.received_at).toLocaleString()
                      }: show details`}
                    >
                      <code>{r.event ?? "—"}</code>
                    </button>
                  </td>
                  <td>
                    <Badge status={r.status} />
                  </td>
                  <td className="wide">{r.error}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button
          type="button"
          disabled={more.pending}
          onClick={() =>
            more.run(async () => {
              const r = await unwrap(api.GET("/webhooks/inbound-log", {
                params: {
                  query: { limit: 50, cursor, ...filter },
                },
              }));
              setRows((cur) => [...cur, ...r.data]);
              setCursor(r.next_cursor);
            })}
        >
          {more.pending ? "Loading older notifications…" : "Show older notifications"}
        </button>
      )}
      {open && (
        <EntryPanel
          key={open}
          id={open}
          close={() => setOpen(null)}
          onChanged={page.reload}
        />
      )}

      <Dialog
        title="Replay all failed notifications?"
        open={confirmAll}
        onClose={() => setConfirmAll(false)}
      >
        <p>
          Every failed or unmatched notification of this organization is applied again, oldest first. Ones
          that were already applied change nothing.
        </p>
        <div className="actions">
          <button
            type="button"
            className="primary"
            onClick={async () => {
              setConfirmAll(false);
              await replayAll.run(async () => {
                const r = await unwrap(
                  api.POST("/webhooks/inbound-log/replay-failed"),
                );
                await page.reload();
                if (
                  r.data.length === 0
                ) return "Nothing to replay: no failed notifications.";
                const counts = new Map<string, number>();
                for (const o of r.data) {
                  counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
                }
                return `Replayed ${r.data.length}: ` +
                  [...counts].map(([s, n]) => `${n} ${statusWord(s).toLowerCase()}`).join(", ") + ".";
              });
            }}
          >
            Replay all failed
          </button>
          <button type="button" onClick={() => setConfirmAll(false)} autoFocus>
            Cancel
          </button>
        </div>
      </Dialog>
    </>
  );
}

function EntryPanel(
  { id, close, onChanged }: {
    id: string;
    close(): void;
    onChanged(): Promise<void>;
  },
) {
  const entry = useLoad(
    () =>
      unwrap(
        api.GET("/webhooks/inbound-log/{id}", { params: { path: { id } } }),
      ),
    [id],
  );
  const replay = useAction();
  const e = entry.data;
  return (
    <section className="panel detail" aria-labelledby={`entry-${id}`}>
      <div className="page-head">
        <h2 id={`entry-${id}`}>Notification details</h2>
        <button type="button" onClick={close}>Close details</button>
      </div>
      {entry.error && (
        <ErrorBox
          error={`Could not load it: ${entry.error}`}
          retry={entry.reload}
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
            {e.error && (
              <div>
                <dt>Error</dt>
                <dd className="error">{e.error}</dd>
              </div>
            )}
          </dl>
          <div className="actions">
            <button
              type="button"
              disabled={replay.pending}
              onClick={() =>
                replay.run(async () => {
                  const r = await unwrap(
                    api.POST("/webhooks/inbound-log/{id}/replay", {
                      params: { path: { id } },
                    }),
                  );
                  await Promise.all([entry.reload(), onChanged()]);
                  return `Replayed: ${statusWord(r.status).toLowerCase()}${
                    r.reason ? ` (${r.reason})` : ""
                  }.`;
                })}
            >
              {replay.pending ? "Replaying…" : "Replay"}
            </button>
          </div>
          <ActionResult action={replay} />
          <h3>Payload</h3>
          <pre
            className="code body"
            tabIndex={0}
            aria-label="Payload"
          >{JSON.stringify(e.payload, null, 2)}</pre>
        </>
      )}
    </section>
  );
}
