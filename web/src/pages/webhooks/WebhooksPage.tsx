// Settings > Integrations > Webhooks: the organization's endpoints with their health and activity, and
// everything an administrator does with one.
import { useRef, useState } from "react";
import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { errorText, useAction, useCatalogue, useEndpoints } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { focusSoon } from "../../ui/focusSoon.ts";
import { EndpointCard, endpointCard } from "./EndpointCard.tsx";
import { EndpointForm } from "./EndpointForm.tsx";
import { SecretPanel } from "./SecretPanel.tsx";
import "./EndpointCard.css";

export function WebhooksPage() {
  useTick();
  const endpoints = useEndpoints({ live: true });
  const catalogue = useCatalogue();
  const [adding, setAdding] = useState(false);
  // A secret just made or revealed, and where focus goes once it is saved: the new endpoint's card, or the
  // Rotate secret or Reveal secret button it came from.
  const [secret, setSecret] = useState<
    { title: string; value: string; returnTo(): HTMLElement | null | undefined; again?: boolean } | null
  >(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const noticeRef = useRef<HTMLDivElement>(null);
  const remove = useAction(async (e: Endpoint) => {
    await unwrap(
      api.DELETE("/webhooks/endpoints/{id}", {
        params: { path: { id: e.id } },
      }),
    );
    return `Deleted ${e.url} and its delivery history.`;
  }, { deletesEndpoint: (e) => e.id });
  const list = endpoints.data?.data ?? [];

  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
        {!adding && (
          <button
            ref={addButton}
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
      {/* After a delete the card and its buttons are gone: focus goes to what happened. */}
      <div tabIndex={-1} ref={noticeRef} className="notice-target">
        <ActionResult action={remove} />
      </div>

      {secret && (
        <SecretPanel
          title={secret.title}
          value={secret.value}
          again={secret.again}
          onDone={() => {
            focusSoon(secret.returnTo, () => addButton.current);
            setSecret(null);
          }}
        />
      )}

      {adding && (
        <EndpointForm
          catalogue={catalogue.data}
          catalogueError={errorText(catalogue.error)}
          targetPolicy={endpoints.data?.target_policy}
          onCancel={() => {
            focusSoon(() => addButton.current);
            setAdding(false);
          }}
          onSaved={(created) => {
            setAdding(false);
            if (created) {
              setSecret({
                title: `Endpoint added: ${created.url}`,
                value: created.secret,
                returnTo: () => endpointCard(created.id),
              });
            }
          }}
        />
      )}

      {endpoints.error && (
        <ErrorBox
          error={`Could not load endpoints: ${errorText(endpoints.error)}`}
          retry={() => void endpoints.refetch()}
        />
      )}
      {endpoints.isPending && <Loading what="endpoints" />}
      {endpoints.data && list.length === 0 && !adding && (
        <Empty level={2} title="No endpoints yet">
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
            targetPolicy={endpoints.data?.target_policy}
            onDelete={() => remove.mutate(e, { onSettled: () => noticeRef.current?.focus() })}
            onSecret={(value, returnTo, title, again) => setSecret({ title, value, returnTo, again })}
          />
        ))}
      </ul>
    </>
  );
}
