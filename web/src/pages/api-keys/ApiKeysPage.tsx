// Settings > Integrations > API keys: keys for Zapier, Make, n8n and scripts. A key is shown once.
import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { api, type ApiKey, unwrap } from "../../api/client.ts";
import { SUPABASE_URL } from "../../config.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { CopyButton } from "../../ui/CopyButton.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { OnceSecret } from "../../ui/OnceSecret.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { useTick } from "../../ui/useTick.ts";
import { CreateKeyForm } from "./CreateKeyForm.tsx";
import { KeyTable } from "./KeyTable.tsx";
import { RevokeForm } from "./RevokeForm.tsx";

/** Where a key is used: the configuration API, which describes itself at /openapi.json. */
export const API_BASE_URL = `${SUPABASE_URL}/functions/v1/webhooks`;

export function ApiKeysPage() {
  useTick();
  const org = useOrgKey();
  const keys = useQuery({
    queryKey: [org, "api-keys"],
    queryFn: () => unwrap(api.GET("/webhooks/api-keys")).then((r) => r.data),
  });
  const [created, setCreated] = useState<{ name: string; key: string } | null>(
    null,
  );
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  // What the last revocation did, in words; it takes focus, since the row's Revoke button is gone.
  const [revoked, setRevoked] = useState<string | null>(null);
  const revokedRef = useRef<HTMLParagraphElement>(null);
  const list = keys.data ?? [];

  return (
    <>
      <h1>API keys</h1>
      <p className="lead">
        Automation platforms (Zapier, Make, n8n) and your own scripts use an API key to manage this
        organization's webhooks. A key can do nothing else: it cannot read members, donations or payments.
      </p>
      <section className="panel" aria-labelledby="api-where">
        <h2 id="api-where">Using the API</h2>
        <dl className="facts">
          <div>
            <dt>Base URL</dt>
            <dd className="address">
              <code>{API_BASE_URL}</code> <CopyButton text={API_BASE_URL} label="Copy base URL" />
            </dd>
          </div>
          <div>
            <dt>Header</dt>
            <dd>
              <code>X-API-Key: &lt;key&gt;</code>
            </dd>
          </div>
        </dl>
        <p className="help">
          For example{" "}
          <code className="url">GET {API_BASE_URL}/endpoints</code>. Every route, with its fields and
          examples:{" "}
          <a href={`${API_BASE_URL}/openapi.json`} target="_blank" rel="noreferrer">
            the API reference (OpenAPI)
          </a>, which Postman, Insomnia and code generators import; the same reference is in the project as
          docs/api/index.html, with a guide in docs/configuration-api.md.
        </p>
      </section>
      <CreateKeyForm onCreated={setCreated} />
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
          error={`Could not load keys: ${errorText(keys.error)}`}
          retry={() => void keys.refetch()}
        />
      )}
      {keys.isPending && <Loading what="API keys" />}
      {keys.data && list.length === 0 && (
        <Empty level={2} title="No API keys yet">
          <p>
            Create one above when you connect Zapier, Make, n8n or a script.
          </p>
        </Empty>
      )}
      {revoked && (
        <p className="ok" role="status" tabIndex={-1} ref={revokedRef}>
          {revoked}
        </p>
      )}
      {list.length > 0 && (
        <KeyTable
          keys={list}
          onRevoke={(k) => {
            setRevoked(null);
            setRevoking(k);
          }}
        />
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
            onRevoked={() => {
              setRevoking(null);
              setRevoked(
                `Revoked ${revoking.name} (${revoking.key_prefix}…). Anything using it is refused from now on.`,
              );
              focusSoon(() => revokedRef.current);
            }}
          />
        )}
      </Dialog>
    </>
  );
}
