// The organization's WhatsApp numbers: the callback URL to give Meta, each number's state (handshake,
// verified, last message), and registering one. A number another organization holds registers exactly
// as any other: it stays "waiting" until a message signed with this app secret arrives.
import { useId, useRef, useState } from "react";
import { CopyButton } from "../../ui/CopyButton.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { OnceSecret } from "../../ui/OnceSecret.tsx";
import { Failures } from "./Failures.tsx";
import { NumberCard } from "./NumberCard.tsx";
import { RegisterNumberForm } from "./RegisterNumberForm.tsx";
import type { Overview } from "./types.ts";

export function WhatsAppSection(
  { whatsapp: w }: { whatsapp: Overview["whatsapp"] },
) {
  const [registering, setRegistering] = useState(false);
  const [token, setToken] = useState<{ number: string; value: string } | null>(
    null,
  );
  const id = useId();
  // Focus follows each step (never to <body>): the form's first field, the verify token, then back here.
  const registerButton = useRef<HTMLButtonElement>(null);
  const tokenBox = useRef<HTMLDivElement>(null);
  const backToRegister = () => focusSoon(() => registerButton.current);
  return (
    <section className="card connection" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>WhatsApp</h2>
      <p className="muted">
        Incoming messages and delivery receipts of your WhatsApp Business numbers (Meta's Cloud API).
      </p>
      <dl className="facts">
        <div className="whole">
          <dt>Callback URL to give Meta</dt>
          <dd className="address">
            {w.callback_url ? <code>{w.callback_url}</code> : (
              <span className="warn">
                Not configured on this server (SUPABASE_URL)
              </span>
            )}
            {w.callback_url && <CopyButton text={w.callback_url} label="Copy callback URL" />}
          </dd>
        </div>
      </dl>
      <p className="help">
        In your Meta app: WhatsApp › Configuration › Webhook, enter the callback URL and the number's verify
        token, then subscribe to the <code>messages</code> field. Meta checks the two at once (the handshake).
      </p>
      {token && (
        <div ref={tokenBox}>
          <OnceSecret
            label={`Verify token for ${token.number}`}
            value={token.value}
          >
            <p className="help">
              Enter it as the Verify token in Meta's webhook settings.
            </p>
            <button
              type="button"
              onClick={() => {
                setToken(null);
                backToRegister();
              }}
            >
              I have entered it in Meta
            </button>
          </OnceSecret>
        </div>
      )}
      {w.numbers.length === 0 && !registering && (
        <Empty title="No WhatsApp number yet">
          <p>Register your business number to receive its messages here.</p>
        </Empty>
      )}
      {w.numbers.length > 0 && (
        <ul className="numbers" aria-label="WhatsApp numbers">
          {w.numbers.map((n) => (
            <NumberCard
              key={n.id}
              number={n}
              onToken={(value) =>
                setToken({
                  number: n.display_phone_number ?? n.phone_number_id,
                  value,
                })}
            />
          ))}
        </ul>
      )}
      {registering
        ? (
          <RegisterNumberForm
            close={() => {
              setRegistering(false);
              backToRegister();
            }}
            onRegistered={(number, value) => {
              setRegistering(false);
              setToken({ number, value });
              focusSoon(() => tokenBox.current?.querySelector("input"));
            }}
          />
        )
        : (
          <div className="actions">
            <button
              type="button"
              className="primary"
              ref={registerButton}
              onClick={() => setRegistering(true)}
            >
              Register a number
            </button>
          </div>
        )}
      <h3>Failures</h3>
      <Failures
        failures={w.failures}
        logHref="/settings/integrations/payment-webhooks"
      />
    </section>
  );
}
