// One registered WhatsApp number: whether Meta's handshake and a signed message arrived, the last
// message, and its actions (new app secret, new verify token, remove).
import { useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge } from "../../ui/Badge.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { Time } from "../../ui/Time.tsx";
import { ConfirmDialog } from "./ConfirmDialog.tsx";
import { secretOk } from "./SecretForm.tsx";
import type { WhatsAppNumber } from "./types.ts";

export function NumberCard(
  { number: n, onToken }: {
    number: WhatsAppNumber;
    onToken(value: string): void;
  },
) {
  const [dialog, setDialog] = useState<null | "secret" | "token" | "remove">(
    null,
  );
  const [secret, setSecret] = useState("");
  const [secretError, setSecretError] = useState<string>();
  const [said, setSaid] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const path = { params: { path: { id: n.id } } };
  const replaceSecret = useAction(async () => {
    await unwrap(
      api.PATCH("/webhooks/connections/whatsapp/numbers/{id}", {
        ...path,
        body: { app_secret: secret },
      }),
    );
    setDialog(null);
    setSecret("");
    setSaid("App secret replaced.");
  });
  const newToken = useAction(async () => {
    const r = await unwrap(
      api.POST("/webhooks/connections/whatsapp/numbers/{id}/verify-token", {
        ...path,
        body: {},
      }),
    );
    setDialog(null);
    onToken(r.verify_token);
    setSaid(
      "New verify token made: enter it in Meta, which then repeats the handshake.",
    );
  });
  const remove = useAction(async () => {
    await unwrap(
      api.DELETE("/webhooks/connections/whatsapp/numbers/{id}", path),
    );
  });
  // Both checks run on the server, which holds the app secret and the verify token.
  const test = useAction(async () => {
    const r = await unwrap(
      api.POST("/webhooks/connections/whatsapp/numbers/{id}/test", path),
    );
    if (r.delivered) {
      return `Signed test delivered: the receiver verified it with this app secret and logged it (HTTP ${r.status}). It is stored as no message.`;
    }
    throw new Error(
      `Signed test not delivered: the receiver answered ${r.status}${
        r.error ? ` (${r.error.code}: ${r.error.message})` : ""
      }.`,
    );
  });
  const handshake = useAction(async () => {
    const r = await unwrap(
      api.POST("/webhooks/connections/whatsapp/numbers/{id}/handshake", path),
    );
    if (r.echoed) {
      return "Handshake answered: the Callback URL echoed the challenge for this verify token, as Meta expects.";
    }
    throw new Error(
      `Handshake not answered: the Callback URL answered ${r.status}${
        r.error ? ` (${r.error.code}: ${r.error.message})` : ""
      } instead of echoing the challenge.`,
    );
  });
  const label = n.display_phone_number ?? n.phone_number_id;
  return (
    <li aria-labelledby={`${id}-h`}>
      <div className="card-head">
        <h3 id={`${id}-h`}>{label}</h3>
        {n.status === "verified"
          ? <Badge status="processed">Receiving messages</Badge>
          : <Badge status="pending">Waiting for the first message</Badge>}
      </div>
      <dl className="facts">
        <div>
          <dt>Phone number ID</dt>
          <dd>
            <code>{n.phone_number_id}</code>
          </dd>
        </div>
        <div>
          <dt>Meta's handshake</dt>
          <dd>
            {n.handshake_at
              ? (
                <>
                  Succeeded <Time iso={n.handshake_at} />
                </>
              )
              : <span className="muted">Not yet</span>}
          </dd>
        </div>
        <div>
          <dt>App secret</dt>
          <dd>
            {n.app_secret_last4
              ? (
                <>
                  Set, ending in <code>{n.app_secret_last4}</code>
                </>
              )
              : "Not set"}
          </dd>
        </div>
        <div>
          <dt>Last message received</dt>
          <dd>
            {n.last_message
              ? (
                <>
                  {n.last_message.type}
                  {n.last_message.from ? ` from ${n.last_message.from}` : ""},{" "}
                  <Time iso={n.last_message.received_at} />
                </>
              )
              : <span className="muted">None yet</span>}
          </dd>
        </div>
      </dl>
      {n.status === "pending" && (
        <p className="help">
          Messages arrive here once Meta sends them signed with this app secret. If Meta says it delivers and
          nothing arrives, check the app secret (App settings › Basic in your Meta app).
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          aria-disabled={test.isPending || undefined}
          onClick={() => {
            if (test.isPending) return;
            handshake.reset();
            test.mutate();
          }}
        >
          {test.isPending ? "Sending…" : "Send a signed test"}
        </button>
        <button
          type="button"
          aria-disabled={handshake.isPending || undefined}
          onClick={() => {
            if (handshake.isPending) return;
            test.reset();
            handshake.mutate();
          }}
        >
          {handshake.isPending ? "Checking…" : "Check the handshake"}
        </button>
        <button type="button" onClick={() => setDialog("secret")}>
          Replace app secret
        </button>
        <button type="button" onClick={() => setDialog("token")}>
          New verify token
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => setDialog("remove")}
        >
          Remove
        </button>
      </div>
      <ActionResult action={test} />
      <ActionResult action={handshake} />
      {said && <p className="ok" role="status">{said}</p>}
      <Dialog
        title={`Replace the app secret of ${label}`}
        open={dialog === "secret"}
        onClose={() => setDialog(null)}
      >
        <form
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            if (!secretOk(secret)) {
              setSecretError(
                "The app secret must be 16 to 256 characters, no spaces.",
              );
              input.current?.focus();
              return;
            }
            setSecretError(undefined);
            replaceSecret.mutate(undefined, {
              onError: (err) => {
                const f = err instanceof ApiError
                  ? err.fields.find((x) => x.field === "app_secret")
                  : undefined;
                if (f) setSecretError(`The app secret ${f.message}.`);
              },
            });
          }}
        >
          <TextField
            id={`${id}-secret`}
            label="App secret"
            help="From your Meta app: App settings › Basic › App secret."
            error={secretError}
            inputRef={input}
            value={secret}
            autoComplete="off"
            spellcheck={false}
            data-autofocus
            onChange={(e) => setSecret(e.currentTarget.value)}
          />
          {!secretError && <ActionResult action={replaceSecret} />}
          <div className="actions">
            <button
              type="submit"
              className="primary"
              aria-disabled={replaceSecret.isPending || undefined}
            >
              Save app secret
            </button>
            <button type="button" onClick={() => setDialog(null)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>
      <ConfirmDialog
        title="Make a new verify token?"
        open={dialog === "token"}
        close={() => setDialog(null)}
        action={newToken}
        confirm="Make a new token"
      >
        <p>The current token stops working at once: enter the new one in Meta's webhook settings.</p>
      </ConfirmDialog>
      <ConfirmDialog
        title={`Remove ${label}?`}
        open={dialog === "remove"}
        close={() => setDialog(null)}
        action={remove}
        confirm="Remove number"
        danger
      >
        <p>
          Its conversations stay. Messages Meta sends for it from now on are refused, so remove the webhook in
          Meta too.
        </p>
      </ConfirmDialog>
    </li>
  );
}
