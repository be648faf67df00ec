// One payment provider: the address to paste into it, its secret (write-only), a signed test through
// the real receiver, the last payload received and what went wrong.
import { useId, useRef, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { Link } from "../../router.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge } from "../../ui/Badge.tsx";
import { CopyButton } from "../../ui/CopyButton.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { OnceSecret } from "../../ui/OnceSecret.tsx";
import { Time } from "../../ui/Time.tsx";
import { Failures } from "./Failures.tsx";
import { ConfirmDialog } from "./ConfirmDialog.tsx";
import { SecretForm } from "./SecretForm.tsx";
import { type PaymentConnection, PROVIDER_NAMES } from "./types.ts";

const PAYMENT_LOG = "/settings/integrations/payment-webhooks";

export function PaymentProviderCard(
  { connection: c }: { connection: PaymentConnection },
) {
  const [dialog, setDialog] = useState<null | "secret" | "remove">(null);
  const [generated, setGenerated] = useState<string | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const id = useId();
  const secretButton = useRef<HTMLButtonElement>(null);
  const name = PROVIDER_NAMES[c.provider];
  const test = useAction(async () => {
    setSaid(null);
    const r = await unwrap(api.POST("/webhooks/connections/{provider}/test", {
      params: { path: { provider: c.provider } },
    }));
    if (r.delivered) {
      return `Test delivered: the receiver verified the signature and logged it (HTTP ${r.status}, ${r.outcome}).`;
    }
    throw new Error(
      `Test not delivered: the receiver answered ${r.status}${
        r.error ? ` (${r.error.code}: ${r.error.message})` : ""
      }.`,
    );
  });
  const remove = useAction(async () => {
    await unwrap(api.DELETE("/webhooks/connections/{provider}/secret", {
      params: { path: { provider: c.provider } },
    }));
    setDialog(null);
    setGenerated(null);
    setSaid(
      c.provider === "payments"
        ? "Secret removed. Card payments are now checked with the checkout secret, if one is set."
        : "Secret removed. This provider's notifications are refused until a new one is set.",
    );
  });
  const secret = c.secret;
  return (
    <section className="card connection" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>{name.title}</h2>
      <p className="muted">{name.what}</p>
      <dl className="facts">
        <div className="whole">
          <dt>Webhook URL to give the provider</dt>
          <dd className="address">
            {c.url ? <code>{c.url}</code> : (
              <span className="warn">
                Not configured on this server (SUPABASE_URL)
              </span>
            )}
            {c.url && <CopyButton text={c.url} label="Copy URL" />}
          </dd>
        </div>
        <div>
          <dt>Signature header</dt>
          <dd>
            <code>{c.signature_header}</code>{" "}
            <span className="muted">(or Razorpay's x-razorpay-signature)</span>
          </dd>
        </div>
        <div>
          <dt>Secret</dt>
          <dd data-testid="secret-state">
            {secret.set
              ? (
                <>
                  <Badge status="processed">Set</Badge> ending in <code>{secret.last4}</code>
                  {secret.set_at && (
                    <>
                      , since <Time iso={secret.set_at} />
                    </>
                  )}
                </>
              )
              : secret.uses_checkout_secret
              ? <>Not set: the checkout provider's secret is used</>
              : <Badge status="unverified">Not set</Badge>}
          </dd>
        </div>
        <div>
          <dt>Last payload received</dt>
          <dd>
            {c.last_received
              ? (
                <>
                  <code>{c.last_received.event ?? "—"}</code> <Badge status={c.last_received.status} />{" "}
                  <Time iso={c.last_received.received_at} />
                </>
              )
              : <span className="muted">None yet</span>}
          </dd>
        </div>
      </dl>
      {generated && (
        <OnceSecret
          label={`New secret for the ${name.title.toLowerCase()}`}
          value={generated}
        >
          <p className="help">
            Enter it as the webhook secret in the provider's dashboard.
          </p>
          <button
            type="button"
            onClick={() => {
              setGenerated(null);
              focusSoon(() => secretButton.current);
            }}
          >
            I have entered it at the provider
          </button>
        </OnceSecret>
      )}
      <div className="actions">
        <button type="button" ref={secretButton} onClick={() => setDialog("secret")}>
          {secret.set ? "Replace secret" : "Set secret"}
        </button>
        <button
          type="button"
          className="primary"
          disabled={!secret.set && !secret.uses_checkout_secret}
          aria-disabled={test.isPending || undefined}
          onClick={() => test.mutate()}
        >
          {test.isPending ? "Sending…" : "Send a signed test"}
        </button>
        {secret.set && (
          <button
            type="button"
            className="danger"
            onClick={() => setDialog("remove")}
          >
            Remove secret
          </button>
        )}
      </div>
      {!secret.set && !secret.uses_checkout_secret && (
        <p className="help">
          Set the secret first: the test is signed with it.
        </p>
      )}
      <ActionResult action={test} />
      {said && <p className="ok" role="status">{said}</p>}
      <h3>Failures</h3>
      <Failures
        failures={c.failures}
        logHref={`${PAYMENT_LOG}?provider=${c.provider}`}
      />
      <p className="help">
        Every notification, with its body and replay:{" "}
        <Link href={`${PAYMENT_LOG}?provider=${c.provider}`}>
          Payment webhooks
        </Link>.
      </p>
      <Dialog
        title={`${secret.set ? "Replace" : "Set"} the ${name.title.toLowerCase()} secret`}
        open={dialog === "secret"}
        onClose={() => setDialog(null)}
      >
        <SecretForm
          provider={c.provider}
          replacing={secret.set}
          close={() => setDialog(null)}
          onSaved={(value, last4) => {
            setDialog(null);
            setGenerated(value);
            setSaid(`Secret saved (ending in ${last4}).`);
          }}
        />
      </Dialog>
      <ConfirmDialog
        title="Remove this secret?"
        open={dialog === "remove"}
        close={() => setDialog(null)}
        action={remove}
        confirm="Remove secret"
        danger
      >
        <p>
          The provider's notifications are refused (401) until a new secret is set; it retries them for about
          a day.
        </p>
      </ConfirmDialog>
    </section>
  );
}
