// Settings > Integrations > Webhooks: the organization's endpoints with their health, and everything an
// administrator does with one.
import { useId, useState } from "react";
import { api, ApiError, type Endpoint, type EventTypeInfo, unwrap } from "../api/client.ts";
import { fromLocalInput, percent, timeZoneName, toLocalInput } from "../format.ts";
import { Link } from "../router.tsx";
import { type Action, useAction, useLoad, useTick } from "../ui/hooks.ts";
import { ActionResult, Dialog, Empty, ErrorBox, Loading, OnceSecret, Time } from "../ui/parts.tsx";
import { hexSnippet, standardSnippet } from "./snippets.ts";

type EventType = Endpoint["events"][number];

export function WebhooksPage() {
  useTick();
  const endpoints = useLoad(
    () => unwrap(api.GET("/webhooks/endpoints")).then((r) => r.data),
    [],
  );
  const catalogue = useLoad(
    () => unwrap(api.GET("/webhooks/event-types")).then((r) => r.data),
    [],
  );
  const [adding, setAdding] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ title: string; value: string } | null>(
    null,
  );
  const list = endpoints.data ?? [];

  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
        {!adding && (
          <button
            type="button"
            className="primary"
            onClick={() => setAdding(true)}
          >
            Add endpoint
          </button>
        )}
      </div>
      <p className="lead">
        When something happens in your church's records (a new member, a donation, attendance), we send a
        signed message to the addresses below: your own systems, Zapier, Make or n8n.
      </p>
      <p className="ok" role="status">{notice}</p>

      {secret && (
        <section className="panel" aria-label={secret.title}>
          <h2>{secret.title}</h2>
          <OnceSecret label="Signing secret" value={secret.value}>
            <VerifyHelp />
          </OnceSecret>
          <button type="button" onClick={() => setSecret(null)}>
            I have saved the secret
          </button>
        </section>
      )}

      {adding && (
        <EndpointForm
          catalogue={catalogue.data}
          catalogueError={catalogue.error}
          onCancel={() => setAdding(false)}
          onSaved={(created) => {
            setAdding(false);
            if (created?.secret) {
              setSecret({
                title: `Endpoint added: ${created.url}`,
                value: created.secret,
              });
            }
            void endpoints.reload();
          }}
        />
      )}

      {endpoints.error && (
        <ErrorBox
          error={`Could not load endpoints: ${endpoints.error}`}
          retry={endpoints.reload}
        />
      )}
      {endpoints.loading && !endpoints.data && <Loading what="endpoints" />}
      {endpoints.data && list.length === 0 && !adding && (
        <Empty title="No endpoints yet">
          <p>
            Add the address of the system that should hear about new members, donations and attendance. You
            will choose which events it receives and get a secret to check that messages really come from us.
          </p>
          <button
            type="button"
            className="primary"
            onClick={() => setAdding(true)}
          >
            Add your first endpoint
          </button>
        </Empty>
      )}
      <ul className="cards" aria-label="Endpoints">
        {list.map((e) => (
          <EndpointCard
            key={e.id}
            endpoint={e}
            catalogue={catalogue.data}
            onChanged={endpoints.reload}
            onDeleted={async () => {
              setNotice(`Deleted ${e.url} and its delivery history.`);
              await endpoints.reload();
            }}
            onSecret={(value) => setSecret({ title: `New secret for ${e.url}`, value })}
          />
        ))}
      </ul>
    </>
  );
}

function VerifyHelp() {
  return (
    <details>
      <summary>How your receiver checks a delivery</summary>
      <p>
        Every delivery carries{" "}
        <code>x-webhook-signature</code>: the lowercase hex HMAC-SHA256 of the raw body with this secret.
        Compare it in constant time and answer 401 when it differs. The Standard Webhooks headers (<code>
          webhook-id
        </code>, <code>webhook-timestamp</code>,{" "}
        <code>webhook-signature</code>) are sent too, for the standard libraries.
      </p>
      <pre
        className="code"
        tabIndex={0}
        aria-label="Verification with HMAC"
      >{hexSnippet()}</pre>
      <pre
        className="code"
        tabIndex={0}
        aria-label="Verification with the Standard Webhooks library"
      >{standardSnippet()}</pre>
    </details>
  );
}

function Health({ e }: { e: Endpoint }) {
  const h = e.health;
  return (
    <dl className="health">
      <div>
        <dt>Last delivery</dt>
        <dd>
          {h.last_attempt_at
            ? (
              <>
                <span
                  className={h.last_outcome === "delivered" ? "ok" : "error"}
                >
                  {h.last_outcome === "delivered" ? "Delivered" : "Failed"}
                  {h.last_response_status !== null ? ` (HTTP ${h.last_response_status})` : " (no response)"}
                </span>{" "}
                <Time iso={h.last_attempt_at} />
              </>
            )
            : <span className="muted">Nothing sent yet</span>}
        </dd>
      </div>
      <div>
        <dt>Failures in a row</dt>
        <dd className={h.consecutive_failures > 0 ? "error" : undefined}>
          {h.consecutive_failures}
          {h.failing_since !== null && (
            <>
              {" since "}
              <Time iso={h.failing_since} />
            </>
          )}
        </dd>
      </div>
      <div>
        <dt>Mean response time (24 h)</dt>
        <dd>
          {h.mean_response_ms_24h === null
            ? <span className="muted">No attempts</span>
            : `${h.mean_response_ms_24h} ms`}
        </dd>
      </div>
      <div>
        <dt>Success rate (24 h)</dt>
        <dd>
          {h.success_rate_24h === null
            ? <span className="muted">No attempts</span>
            : `${percent(h.success_rate_24h)} of ${h.attempts_24h} attempt${h.attempts_24h === 1 ? "" : "s"}`}
        </dd>
      </div>
    </dl>
  );
}

function EndpointCard(
  { endpoint: e, catalogue, onChanged, onDeleted, onSecret }: {
    endpoint: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    onChanged(): Promise<void>;
    onDeleted(): Promise<void>;
    onSecret(value: string): void;
  },
) {
  const action = useAction();
  const [editing, setEditing] = useState(false);
  const [dialog, setDialog] = useState<null | "delete" | "rotate" | "recover">(
    null,
  );
  const headingId = useId();

  return (
    <li className="card" aria-labelledby={headingId}>
      <div className="card-head">
        <h2 id={headingId} className="url">{e.url}</h2>
        <span
          className={`badge ${e.enabled ? "badge-delivered" : "badge-disabled"}`}
        >
          {e.enabled ? "Enabled" : "Disabled"}
        </span>
      </div>
      {e.description && <p>{e.description}</p>}
      {!e.enabled && e.disabled_reason && (
        <p className="warn">
          Disabled: {e.disabled_reason}
          {e.disabled_at && (
            <>
              · <Time iso={e.disabled_at} />
            </>
          )}
        </p>
      )}
      {e.paused_until && (
        <p className="warn">
          Paused by the receiver until <Time iso={e.paused_until} /> (it answered 429 Too Many Requests).
        </p>
      )}
      <p>
        <span className="muted">Events:</span>
        {e.events.map((t) => <code key={t} className="chip">{t}</code>)}
      </p>
      {e.rate_limit_per_second !== null && (
        <p className="muted">At most {e.rate_limit_per_second} deliveries a second.</p>
      )}
      {e.previous_secret_expires_at &&
        new Date(e.previous_secret_expires_at).getTime() > Date.now() && (
        <p className="muted">
          The previous secret also signs until <Time iso={e.previous_secret_expires_at} />.
        </p>
      )}
      <Health e={e} />

      {editing
        ? (
          <EndpointForm
            endpoint={e}
            catalogue={catalogue}
            catalogueError={null}
            onCancel={() => setEditing(false)}
            onSaved={() => {
              setEditing(false);
              void action.run(async () => {
                await onChanged();
                return "Changes saved.";
              });
            }}
          />
        )
        : (
          <div
            className="actions"
            role="group"
            aria-label={`Actions for ${e.url}`}
          >
            <button type="button" onClick={() => setEditing(true)}>Edit</button>
            <button
              type="button"
              disabled={action.pending}
              onClick={() =>
                action.run(async () => {
                  await unwrap(api.PATCH("/webhooks/endpoints/{id}", {
                    params: { path: { id: e.id } },
                    body: { enabled: !e.enabled },
                  }));
                  await onChanged();
                  return e.enabled
                    ? "Endpoint disabled. Its waiting deliveries were stopped; recover them after enabling it again."
                    : "Endpoint enabled.";
                })}
            >
              {e.enabled ? "Disable" : "Enable"}
            </button>
            <button
              type="button"
              disabled={action.pending || !e.enabled}
              onClick={() =>
                action.run(async () => {
                  await unwrap(
                    api.POST("/webhooks/endpoints/{id}/test", {
                      params: { path: { id: e.id } },
                    }),
                  );
                  return "Test event sent. It appears in Webhook Logs within seconds.";
                })}
            >
              Send test event
            </button>
            <button type="button" onClick={() => setDialog("rotate")}>
              Rotate secret
            </button>
            <button
              type="button"
              disabled={!e.enabled}
              onClick={() => setDialog("recover")}
            >
              Recover failed
            </button>
            <Link
              className="button"
              href={`/settings/integrations/webhook-logs?endpoint=${e.id}`}
            >
              View logs
            </Link>
            <button
              type="button"
              className="danger"
              onClick={() => setDialog("delete")}
            >
              Delete
            </button>
          </div>
        )}
      <ActionResult action={action} />

      <Dialog
        title="Delete this endpoint?"
        open={dialog === "delete"}
        onClose={() => setDialog(null)}
      >
        <DeleteForm
          endpoint={e}
          onDone={onDeleted}
          close={() => setDialog(null)}
        />
      </Dialog>
      <Dialog
        title="Rotate the signing secret"
        open={dialog === "rotate"}
        onClose={() => setDialog(null)}
      >
        <RotateForm
          endpoint={e}
          close={() => setDialog(null)}
          onRotated={(secret) => {
            setDialog(null);
            onSecret(secret);
            void onChanged();
          }}
        />
      </Dialog>
      <Dialog
        title="Recover failed deliveries"
        open={dialog === "recover"}
        onClose={() => setDialog(null)}
      >
        <RecoverForm
          endpoint={e}
          close={() => setDialog(null)}
          parent={action}
          onDone={onChanged}
        />
      </Dialog>
    </li>
  );
}

function DeleteForm(
  { endpoint, onDone, close }: {
    endpoint: Endpoint;
    onDone(): Promise<void>;
    close(): void;
  },
) {
  const action = useAction();
  return (
    <form
      method="dialog"
      onSubmit={async (ev) => {
        ev.preventDefault();
        const ok = await action.run(async () => {
          await unwrap(
            api.DELETE("/webhooks/endpoints/{id}", {
              params: { path: { id: endpoint.id } },
            }),
          );
        });
        if (ok) {
          close();
          await onDone();
        }
      }}
    >
      <p>
        <strong>{endpoint.url}</strong>{" "}
        will stop receiving events, and its delivery history will be deleted. This cannot be undone. To pause
        deliveries instead, disable the endpoint.
      </p>
      <ActionResult action={action} />
      <div className="actions">
        <button type="submit" className="danger" disabled={action.pending}>
          {action.pending ? "Deleting…" : "Delete endpoint"}
        </button>
        <button type="button" onClick={close} autoFocus>Cancel</button>
      </div>
    </form>
  );
}

const GRACE = [
  { seconds: 0, label: "No grace: the old secret stops now" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 86400, label: "24 hours (recommended)" },
  { seconds: 7 * 86400, label: "7 days" },
];

function RotateForm(
  { endpoint, close, onRotated }: {
    endpoint: Endpoint;
    close(): void;
    onRotated(secret: string): void;
  },
) {
  const action = useAction();
  const [grace, setGrace] = useState(86400);
  const id = useId();
  return (
    <form
      onSubmit={async (ev) => {
        ev.preventDefault();
        let secret = "";
        const ok = await action.run(async () => {
          const r = await unwrap(
            api.POST("/webhooks/endpoints/{id}/rotate-secret", {
              params: { path: { id: endpoint.id } },
              body: { grace_seconds: grace },
            }),
          );
          secret = r.secret;
        });
        if (ok) onRotated(secret);
      }}
    >
      <p>
        A new secret signs every delivery to{" "}
        <strong>{endpoint.url}</strong>. During the grace period the old secret signs too, so the receiver
        keeps working while you update it.
      </p>
      <label htmlFor={id}>Grace period</label>
      <select
        id={id}
        value={grace}
        onChange={(e) => setGrace(Number(e.target.value))}
      >
        {GRACE.map((g) => <option key={g.seconds} value={g.seconds}>{g.label}</option>)}
      </select>
      <ActionResult action={action} />
      <div className="actions">
        <button type="submit" className="primary" disabled={action.pending}>
          {action.pending ? "Rotating…" : "Rotate secret"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}

function RecoverForm(
  { endpoint, close, parent, onDone }: {
    endpoint: Endpoint;
    close(): void;
    parent: Action;
    onDone(): Promise<void>;
  },
) {
  const action = useAction();
  const [since, setSince] = useState(() => toLocalInput(new Date(Date.now() - 24 * 3600 * 1000)));
  const id = useId();
  return (
    <form
      onSubmit={async (ev) => {
        ev.preventDefault();
        const iso = fromLocalInput(since);
        if (!iso) {
          action.clear();
          await action.run(() => Promise.reject(new Error("Enter a date and time.")));
          return;
        }
        let n = 0;
        const ok = await action.run(async () => {
          const r = await unwrap(api.POST("/webhooks/endpoints/{id}/recover", {
            params: { path: { id: endpoint.id } },
            body: { since: iso },
          }));
          n = r.recovered;
        });
        if (ok) {
          close();
          await parent.run(async () => {
            await onDone();
            return n === 0
              ? "No permanently failed deliveries since then: nothing to send again."
              : `${n} failed deliver${
                n === 1 ? "y is" : "ies are"
              } being sent again. Follow them in Webhook Logs.`;
          });
        }
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
        value={since}
        onChange={(e) => setSince(e.target.value)}
      />
      <ActionResult action={action} />
      <div className="actions">
        <button type="submit" className="primary" disabled={action.pending}>
          {action.pending ? "Recovering…" : "Send them again"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}

function EndpointForm(
  { endpoint, catalogue, catalogueError, onCancel, onSaved }: {
    endpoint?: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    catalogueError: string | null;
    onCancel(): void;
    onSaved(created?: { url: string; secret: string }): void;
  },
) {
  const id = useId();
  const [url, setUrl] = useState(endpoint?.url ?? "");
  const [description, setDescription] = useState(endpoint?.description ?? "");
  const [events, setEvents] = useState<EventType[]>(endpoint?.events ?? []);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const action = useAction();
  const editing = !!endpoint;

  return (
    <form
      className="panel"
      aria-labelledby={`${id}-title`}
      noValidate
      onSubmit={async (ev) => {
        ev.preventDefault();
        const local: Record<string, string> = {};
        if (!url.trim()) local.url = "Enter the address that should receive the events.";
        if (events.length === 0) local.events = "Choose at least one event.";
        setFieldErrors(local);
        if (Object.keys(local).length) return;
        let created: { url: string; secret: string } | undefined;
        const ok = await action.run(async () => {
          try {
            if (endpoint) {
              await unwrap(api.PATCH("/webhooks/endpoints/{id}", {
                params: { path: { id: endpoint.id } },
                body: {
                  url: url.trim(),
                  events,
                  description: description.trim() || null,
                },
              }));
            } else {
              created = await unwrap(api.POST("/webhooks/endpoints", {
                body: {
                  url: url.trim(),
                  events,
                  ...(description.trim() ? { description: description.trim() } : {}),
                },
              }));
            }
          } catch (e) {
            if (e instanceof ApiError && e.fields.length) {
              setFieldErrors(
                Object.fromEntries(
                  e.fields.map((f) => [f.field.split(".")[0]!, f.message]),
                ),
              );
            }
            throw e;
          }
        });
        if (ok) onSaved(created);
      }}
    >
      <h2 id={`${id}-title`}>
        {editing ? "Edit endpoint" : "Add an endpoint"}
      </h2>
      <label htmlFor={`${id}-url`}>Endpoint URL</label>
      <input
        id={`${id}-url`}
        type="url"
        inputMode="url"
        placeholder="https://example.org/webhooks/church"
        value={url}
        autoFocus
        aria-invalid={fieldErrors.url ? true : undefined}
        aria-describedby={`${id}-url-help${fieldErrors.url ? ` ${id}-url-err` : ""}`}
        onChange={(e) => setUrl(e.target.value)}
      />
      <p id={`${id}-url-help`} className="help">
        An https address that can be reached from the internet.
      </p>
      {fieldErrors.url && <p id={`${id}-url-err`} className="field-error">{fieldErrors.url}</p>}

      <label htmlFor={`${id}-desc`}>Description (optional)</label>
      <input
        id={`${id}-desc`}
        value={description}
        maxLength={500}
        placeholder="e.g. Our CRM, Zapier – new members"
        onChange={(e) => setDescription(e.target.value)}
      />

      <fieldset
        aria-describedby={fieldErrors.events ? `${id}-ev-err` : undefined}
      >
        <legend>Events to send</legend>
        {catalogueError && (
          <p className="error">
            Could not load the event list: {catalogueError}
          </p>
        )}
        {!catalogue && !catalogueError && <Loading what="events" />}
        {catalogue?.map((t) => {
          const type = t.type as EventType;
          return (
            <div key={t.type} className="event-choice">
              <input
                type="checkbox"
                id={`${id}-${t.type}`}
                checked={events.includes(type)}
                aria-describedby={`${id}-${t.type}-d`}
                onChange={(e) =>
                  setEvents((cur) => e.target.checked ? [...cur, type] : cur.filter((x) => x !== type))}
              />
              <label htmlFor={`${id}-${t.type}`}>
                <code>{t.type}</code>
              </label>
              <p id={`${id}-${t.type}-d`} className="help">{t.description}</p>
              <details>
                <summary>Example body of {t.type}</summary>
                <pre
                  className="code"
                  tabIndex={0}
                >{JSON.stringify(t.example, null, 2)}</pre>
              </details>
            </div>
          );
        })}
        {fieldErrors.events && (
          <p id={`${id}-ev-err`} className="field-error">
            {fieldErrors.events}
          </p>
        )}
      </fieldset>
      <ActionResult action={action} />
      <div className="actions">
        <button type="submit" className="primary" disabled={action.pending}>
          {action.pending ? "Saving…" : editing ? "Save changes" : "Add endpoint"}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
