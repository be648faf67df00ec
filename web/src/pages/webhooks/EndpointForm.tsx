// Add or edit an endpoint: its URL (with what this deployment accepts), description, events and, when
// adding, the signing secret. Errors show at their field only, and focus goes to the first one.
import { useId, useRef, useState } from "react";
import {
  api,
  ApiError,
  type Endpoint,
  type EventTypeInfo,
  type TargetPolicy,
  unwrap,
} from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { secretChecks, SecretChoice, type SecretMode } from "./SecretChoice.tsx";
import "./EndpointForm.css";

type EventType = Endpoint["events"][number];
type Fields = Partial<Record<"url" | "events" | "secret", string>>;

const URL_HELP: Record<TargetPolicy, string> = {
  public_https: "An https address on the public internet. Local and private network addresses are refused.",
  development:
    "This is a development setup, so http and local or private addresses (such as 127.0.0.1) are " +
    "accepted here for testing. In production only https addresses on the public internet are.",
};

export function EndpointForm(
  { endpoint, catalogue, catalogueError, targetPolicy, onCancel, onSaved }: {
    endpoint?: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    catalogueError: string | null;
    targetPolicy: TargetPolicy | undefined;
    onCancel(): void;
    onSaved(created?: { url: string; secret: string }): void;
  },
) {
  const id = useId();
  const [url, setUrl] = useState(endpoint?.url ?? "");
  const [description, setDescription] = useState(endpoint?.description ?? "");
  const [events, setEvents] = useState<EventType[]>(endpoint?.events ?? []);
  const [secretMode, setSecretMode] = useState<SecretMode>("generate");
  const [ownSecret, setOwnSecret] = useState("");
  const [fieldErrors, setFieldErrors] = useState<Fields>({});
  const refs = {
    url: useRef<HTMLInputElement>(null),
    events: useRef<HTMLFieldSetElement>(null),
    secret: useRef<HTMLInputElement>(null),
  };
  const editing = !!endpoint;

  /** Shows these errors at their fields (and no others) and takes the person to the first. */
  function showErrors(errors: Fields) {
    setFieldErrors(errors);
    const first = (["url", "events", "secret"] as const).find((f) => errors[f]);
    if (first === "events") {
      refs.events.current?.querySelector("input")?.focus();
    } else if (first) refs[first].current?.focus();
  }

  const save = useAction(async () => {
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
        onSaved();
      } else {
        const created = await unwrap(api.POST("/webhooks/endpoints", {
          body: {
            url: url.trim(),
            events,
            ...(description.trim() ? { description: description.trim() } : {}),
            ...(secretMode === "own" ? { secret: ownSecret } : {}),
          },
        }));
        onSaved(created);
      }
    } catch (e) {
      if (e instanceof ApiError && e.fields.length) {
        showErrors(
          Object.fromEntries(
            e.fields.map((f) => [f.field.split(".")[0]!, f.message]),
          ),
        );
      }
      throw e;
    }
  });
  // A refusal that names a field is said at that field only; anything else in the alert below.
  const fieldRefusal = save.error instanceof ApiError &&
    save.error.fields.length > 0;

  return (
    <form
      className="panel"
      aria-labelledby={`${id}-title`}
      noValidate
      onSubmit={(ev) => {
        ev.preventDefault();
        if (save.isPending) return;
        const local: Fields = {};
        if (!url.trim()) local.url = "Enter the address that should receive the events.";
        if (events.length === 0) local.events = "Choose at least one event.";
        if (
          !editing && secretMode === "own" &&
          !secretChecks(ownSecret).every((c) => c.ok)
        ) {
          local.secret = "This secret does not meet the rule above yet.";
        }
        if (Object.keys(local).length) {
          save.reset(); // an earlier refusal no longer describes what is on screen
          showErrors(local);
          return;
        }
        setFieldErrors({});
        save.mutate();
      }}
    >
      <h2 id={`${id}-title`}>
        {editing ? "Edit endpoint" : "Add an endpoint"}
      </h2>
      <label htmlFor={`${id}-url`}>Endpoint URL</label>
      <input
        id={`${id}-url`}
        ref={refs.url}
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
        {URL_HELP[targetPolicy ?? "public_https"]}
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
        ref={refs.events}
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
      {!editing && (
        <SecretChoice
          mode={secretMode}
          setMode={setSecretMode}
          value={ownSecret}
          setValue={setOwnSecret}
          error={fieldErrors.secret}
          inputRef={refs.secret}
        />
      )}
      {fieldRefusal ? <p className="sr-only" role="status" /> : <ActionResult action={save} />}
      <div className="actions">
        <button
          type="submit"
          className="primary"
          aria-disabled={save.isPending || undefined}
        >
          {save.isPending ? "Saving…" : editing ? "Save changes" : "Add endpoint"}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}
