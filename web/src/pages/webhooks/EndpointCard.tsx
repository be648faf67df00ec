// One endpoint: what it receives, its state and health, its activity, and its actions.
import { useEffect, useId, useRef, useState } from "react";
import { api, type Endpoint, type EventTypeInfo, type TargetPolicy, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { humanTimes } from "../../format.ts";
import { Link } from "../../router.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge } from "../../ui/Badge.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { Time } from "../../ui/Time.tsx";
import { useSession } from "../../session.tsx";
import { ActivityChart, useActivity, type Window } from "./ActivityChart.tsx";
import { DeleteForm } from "./DeleteForm.tsx";
import { EndpointForm } from "./EndpointForm.tsx";
import { Health } from "./Health.tsx";
import { RecoverForm, type Said } from "./RecoverForm.tsx";
import { RevealForm } from "./RevealForm.tsx";
import { AlertsNote } from "./AlertsNote.tsx";
import { RotateForm } from "./RotateForm.tsx";
import { SendTestForm } from "./SendTestForm.tsx";
import { useAttemptWatch } from "./useAttemptWatch.ts";

type Open = null | "delete" | "rotate" | "recover" | "test" | "reveal";

/** An endpoint's card on the page (it takes focus when what led to it, a new secret's panel, is gone). */
export const endpointCard = (endpointId: string) => document.getElementById(`endpoint-${endpointId}`);

export function EndpointCard(
  { endpoint: e, catalogue, targetPolicy, onDelete, onSecret }: {
    endpoint: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    targetPolicy: TargetPolicy | undefined;
    onDelete(): void;
    /** A new secret to show; `returnTo` is where focus goes once it is saved. */
    /** `again`: a secret revealed (it can be revealed again), not one just made. */
    onSecret(value: string, returnTo: () => HTMLElement | null, title: string, again?: boolean): void;
  },
) {
  const [editing, setEditing] = useState(false);
  const [dialog, setDialog] = useState<Open>(null);
  // What the last action did, in words (the forms in dialogs report here once they close).
  const [said, setSaid] = useState<Said | null>(null);
  const headingId = useId();
  // One answer for the health tiles and the chart: the same numbers, period and moment.
  const [window, setWindow] = useState<Window>("24h");
  const activity = useActivity(e.id, window);
  const watchAttempt = useAttemptWatch(e.id, activity.data?.latest.last_attempt_at);
  const editButton = useRef<HTMLButtonElement>(null);
  const rotateButton = useRef<HTMLButtonElement>(null);
  const revealButton = useRef<HTMLButtonElement>(null);
  const saidRef = useRef<HTMLParagraphElement>(null);
  // After a test event: the card may be taller than the screen, so its news is brought into view once
  // shown (and read out: role=status), while focus goes back to the button, as a dialog leaves it.
  const scrollToSaid = useRef(false);
  useEffect(() => {
    if (!said || !scrollToSaid.current) return;
    scrollToSaid.current = false;
    requestAnimationFrame(() => saidRef.current?.scrollIntoView({ block: "center" }));
  }, [said]);
  const session = useSession();
  const email = session.state.kind === "signed_in" ? session.state.session.user.email ?? "" : "";
  const closeEditor = () => {
    focusSoon(() => editButton.current);
    setEditing(false);
  };
  const toggle = useAction(async () => {
    await unwrap(api.PATCH("/webhooks/endpoints/{id}", {
      params: { path: { id: e.id } },
      body: { enabled: !e.enabled },
    }));
    return e.enabled
      ? "Endpoint disabled. Its waiting deliveries were stopped; recover them after enabling it again."
      : "Endpoint enabled.";
  });
  // Disabled meanwhile (a 410 Gone, the failure rule, another admin): what the last action said ("Test
  // event sent") is no longer the news; the card's warning is.
  const wasEnabled = useRef(e.enabled);
  useEffect(() => {
    if (wasEnabled.current && !e.enabled) setSaid(null);
    wasEnabled.current = e.enabled;
  }, [e.enabled]);
  const close = () => setDialog(null);
  const done = (text: string | Said) => {
    setDialog(null);
    toggle.reset();
    setSaid(typeof text === "string" ? { text } : text);
  };

  return (
    <li className="card" id={`endpoint-${e.id}`} tabIndex={-1} aria-labelledby={headingId}>
      <div className="card-head">
        <h2 id={headingId} className="url">{e.url}</h2>
        <Badge
          status={e.enabled ? "enabled" : "disabled"}
          kind={e.enabled ? "delivered" : "disabled"}
        >
          {e.enabled ? "Enabled" : "Disabled"}
        </Badge>
      </div>
      {e.description && <p>{e.description}</p>}
      {!e.enabled && e.disabled_reason && (
        <p className="warn">
          Disabled: {humanTimes(e.disabled_reason)}
          {e.disabled_at && (
            <>
              {" · "}
              <Time iso={e.disabled_at} />
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
      <Creator e={e} />
      {e.rate_limit_per_second !== null && (
        <p className="muted">At most {e.rate_limit_per_second} deliveries a second.</p>
      )}
      {e.custom_headers.length > 0 && (
        <p className="muted">
          Custom headers: {e.custom_headers.map((h, i) => (
            <span key={h.name}>
              {i > 0 && ", "}
              <code>{h.name}</code>
            </span>
          ))}
        </p>
      )}
      {e.previous_secret_expires_at &&
        new Date(e.previous_secret_expires_at).getTime() > Date.now() && (
        <p className="muted">
          The previous secret also signs until <Time iso={e.previous_secret_expires_at} />.
        </p>
      )}
      <Health a={activity.data} />
      <AlertsNote endpoint={e} />
      <ActivityChart url={e.url} window={window} setWindow={setWindow} activity={activity} />

      {editing
        ? (
          <EndpointForm
            endpoint={e}
            catalogue={catalogue}
            catalogueError={null}
            targetPolicy={targetPolicy}
            onCancel={closeEditor}
            onSaved={() => {
              closeEditor();
              done("Changes saved.");
            }}
          />
        )
        : (
          <div
            className="actions"
            role="group"
            aria-label={`Actions for ${e.url}`}
          >
            <button ref={editButton} type="button" onClick={() => setEditing(true)}>Edit</button>
            <button
              type="button"
              aria-disabled={toggle.isPending || undefined}
              onClick={() => {
                if (toggle.isPending) return;
                setSaid(null);
                toggle.mutate();
              }}
            >
              {e.enabled ? "Disable" : "Enable"}
            </button>
            <button
              type="button"
              disabled={!e.enabled}
              onClick={() => setDialog("test")}
            >
              Send test event
            </button>
            <button ref={revealButton} type="button" onClick={() => setDialog("reveal")}>
              Reveal secret
            </button>
            <button ref={rotateButton} type="button" onClick={() => setDialog("rotate")}>
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
      {said && !toggle.isPending && !toggle.error && !toggle.data
        ? (
          <p className="ok" role="status" tabIndex={-1} ref={saidRef}>
            {said.text}
            {said.link && (
              <>
                {" "}
                <Link href={said.link.href}>{said.link.label}</Link>
              </>
            )}
          </p>
        )
        : <ActionResult action={toggle} />}

      <Dialog
        title="Delete this endpoint?"
        open={dialog === "delete"}
        onClose={close}
      >
        <DeleteForm endpoint={e} close={close} confirm={onDelete} />
      </Dialog>
      <Dialog
        title="Rotate the signing secret"
        open={dialog === "rotate"}
        onClose={close}
      >
        <RotateForm
          endpoint={e}
          close={close}
          onRotated={(secret) => {
            setDialog(null);
            onSecret(secret, () => rotateButton.current, `New secret for ${e.url}`);
          }}
        />
      </Dialog>
      <Dialog
        title="Reveal the signing secret"
        open={dialog === "reveal"}
        onClose={close}
      >
        <RevealForm
          endpoint={e}
          email={email}
          close={close}
          onRevealed={(secret) => {
            setDialog(null);
            onSecret(secret, () => revealButton.current, `Signing secret of ${e.url}`, true);
          }}
        />
      </Dialog>
      <Dialog
        title="Recover failed deliveries"
        open={dialog === "recover"}
        onClose={close}
      >
        <RecoverForm endpoint={e} close={close} onDone={done} />
      </Dialog>
      <Dialog
        title="Send a test event"
        open={dialog === "test"}
        onClose={close}
      >
        <SendTestForm
          endpoint={e}
          catalogue={catalogue}
          close={close}
          onDone={(text) => {
            done(text);
            watchAttempt();
            scrollToSaid.current = true;
          }}
        />
      </Dialog>
    </li>
  );
}

/**
 * Who added the endpoint. One added by someone who has since left the organization keeps receiving what
 * it subscribed to (new members' details, say): that is said plainly, for the admins who remain.
 */
function Creator({ e }: { e: Endpoint }) {
  if (e.created_by_display === "removed member") {
    return (
      <p className="warn">
        Added <Time iso={e.created_at} />{" "}
        by a member who is no longer in this organization. Check that this address should still receive your
        data; delete the endpoint if not.
      </p>
    );
  }
  return (
    <p className="muted">
      Added by {e.created_by_display ?? "the system"} · <Time iso={e.created_at} />
    </p>
  );
}
