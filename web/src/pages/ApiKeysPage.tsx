// Settings > Integrations > API keys: keys for Zapier, Make, n8n and scripts. A key is shown once.
import { useId, useState } from "react";
import { api, type ApiKey, unwrap } from "../api/client.ts";
import { useAction, useLoad, useTick } from "../ui/hooks.ts";
import { ActionResult, Dialog, Empty, ErrorBox, Loading, OnceSecret, Time } from "../ui/parts.tsx";

export function ApiKeysPage() {
  useTick();
  const keys = useLoad(
    () => unwrap(api.GET("/webhooks/api-keys")).then((r) => r.data),
    [],
  );
  const [created, setCreated] = useState<{ name: string; key: string } | null>(
    null,
  );
  const [name, setName] = useState("");
  const [nameError, setNameError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const create = useAction();
  const id = useId();
  const list = keys.data ?? [];

  return (
    <>
      <h1>API keys</h1>
      <p className="lead">
        Automation platforms (Zapier, Make, n8n) and your own scripts use an API key to manage this
        organization's webhooks. A key can do nothing else: it cannot read members, donations or payments.
      </p>

      <form
        className="panel inline-form"
        aria-labelledby={`${id}-t`}
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          if (!name.trim()) {
            setNameError(
              "Give the key a name, so you can tell it apart later.",
            );
            return;
          }
          setNameError(null);
          let made: { name: string; key: string } | null = null;
          const ok = await create.run(async () => {
            const r = await unwrap(
              api.POST("/webhooks/api-keys", { body: { name: name.trim() } }),
            );
            made = { name: r.name, key: r.key };
          });
          if (ok && made) {
            setCreated(made);
            setName("");
            await keys.reload();
          }
        }}
      >
        <h2 id={`${id}-t`}>Create a key</h2>
        <label htmlFor={`${id}-name`}>Name</label>
        <div className="row">
          <input
            id={`${id}-name`}
            value={name}
            maxLength={100}
            placeholder="e.g. Zapier"
            aria-invalid={nameError ? true : undefined}
            aria-describedby={nameError ? `${id}-err` : undefined}
            onChange={(e) => setName(e.target.value)}
          />
          <button type="submit" className="primary" disabled={create.pending}>
            {create.pending ? "Creating…" : "Create key"}
          </button>
        </div>
        {nameError && <p id={`${id}-err`} className="field-error">{nameError}</p>}
        <ActionResult action={create} />
      </form>

      {created && (
        <section className="panel" aria-label={`New key ${created.name}`}>
          <h2>Key created: {created.name}</h2>
          <OnceSecret label="API key" value={created.key}>
            <p className="help">
              Send it as <code>X-API-Key: &lt;key&gt;</code> to the webhooks API.
            </p>
          </OnceSecret>
          <button
            type="button"
            onClick={() => setCreated(null)}
          >
            I have saved the key
          </button>
        </section>
      )}

      {keys.error && (
        <ErrorBox
          error={`Could not load keys: ${keys.error}`}
          retry={keys.reload}
        />
      )}
      {keys.loading && !keys.data && <Loading what="API keys" />}
      {keys.data && list.length === 0 && (
        <Empty title="No API keys yet">
          <p>
            Create one above when you connect Zapier, Make, n8n or a script.
          </p>
        </Empty>
      )}
      {list.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="API keys"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" className="wide">Key starts with</th>
                <th scope="col" className="wide">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td className="wide">
                    <code>{k.key_prefix}…</code>
                  </td>
                  <td className="wide">
                    <Time iso={k.created_at} />
                  </td>
                  <td>
                    <Time iso={k.last_used_at} fallback="Never used" />
                  </td>
                  <td>
                    {k.revoked_at
                      ? (
                        <span className="badge badge-disabled">
                          Revoked <Time iso={k.revoked_at} />
                          {k.revoked_reason && `: ${k.revoked_reason}`}
                        </span>
                      )
                      : <span className="badge badge-delivered">Active</span>}
                  </td>
                  <td>
                    {!k.revoked_at && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() => setRevoking(k)}
                        aria-label={`Revoke ${k.name}`}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Dialog
        title="Revoke this key?"
        open={!!revoking}
        onClose={() => setRevoking(null)}
      >
        {revoking && (
          <RevokeForm
            k={revoking}
            close={() => setRevoking(null)}
            onDone={keys.reload}
          />
        )}
      </Dialog>
    </>
  );
}

function RevokeForm(
  { k, close, onDone }: { k: ApiKey; close(): void; onDone(): Promise<void> },
) {
  const action = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        const ok = await action.run(async () => {
          await unwrap(
            api.DELETE("/webhooks/api-keys/{id}", {
              params: { path: { id: k.id } },
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
        Anything using <strong>{k.name}</strong>{" "}
        ({k.key_prefix}…) stops working at once. This cannot be undone.
      </p>
      <ActionResult action={action} />
      <div className="actions">
        <button type="submit" className="danger" disabled={action.pending}>
          {action.pending ? "Revoking…" : "Revoke key"}
        </button>
        <button type="button" onClick={close} autoFocus>Cancel</button>
      </div>
    </form>
  );
}
