// Add or edit an endpoint: its URL (with what this deployment accepts), description, events, an optional
// rate limit, custom headers and, when adding, the signing secret. Errors show at their field only, and focus goes to the first one.
import { useEffect, useId, useRef, useState } from "react";
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
import { TextField } from "../../ui/TextField.tsx";
import { secretChecks, SecretChoice, type SecretMode } from "./SecretChoice.tsx";
import {
  CustomHeaders,
  type HeaderRow,
  headersBody,
  newRow,
  type RowErrors,
  rowProblems,
} from "./CustomHeaders.tsx";
import "./EndpointForm.css";

type EventType = Endpoint["events"][number];
type Field = "url" | "events" | "rate_limit_per_second" | "custom_headers" | "secret";
type Fields = Partial<Record<Field, string>>;
const FIELD_ORDER: readonly Field[] = ["url", "events", "rate_limit_per_second", "custom_headers", "secret"];

const RATE_RANGE = "Enter a whole number from 1 to 1000, or leave it empty for no limit.";

/** The rate limit as typed: empty is no limit (null); anything but a whole number 1 to 1000 is refused. */
function parseRate(text: string): { value: number | null } | { error: string } {
  const t = text.trim();
  if (t === "") return { value: null };
  if (!/^\d+$/.test(t)) return { error: RATE_RANGE };
  const n = Number(t);
  return n >= 1 && n <= 1000 ? { value: n } : { error: RATE_RANGE };
}

const URL_HELP: Record<TargetPolicy, string> = {
  public_https: "An https address on the public internet. Local and private network addresses are refused.",
  development:
    "This is a development setup, so http and local or private addresses (such as 127.0.0.1) are " +
    "accepted here for testing. In production only https addresses on the public internet are.",
};

/** Enter on a checkbox chooses nothing and must not send the form (Space ticks it). */
const noEnter = (e: { key: string; preventDefault(): void }) => {
  if (e.key === "Enter") e.preventDefault();
};

export function EndpointForm(
  { endpoint, catalogue, catalogueError, targetPolicy, onCancel, onSaved }: {
    endpoint?: Endpoint;
    catalogue: EventTypeInfo[] | undefined;
    catalogueError: string | null;
    targetPolicy: TargetPolicy | undefined;
    onCancel(): void;
    onSaved(created?: { id: string; url: string; secret: string }): void;
  },
) {
  const id = useId();
  const [url, setUrl] = useState(endpoint?.url ?? "");
  const [description, setDescription] = useState(endpoint?.description ?? "");
  const [events, setEvents] = useState<EventType[]>(endpoint?.events ?? []);
  const [secretMode, setSecretMode] = useState<SecretMode>("generate");
  const [ownSecret, setOwnSecret] = useState("");
  const [rate, setRate] = useState(endpoint?.rate_limit_per_second?.toString() ?? "");
  const [headers, setHeaders] = useState<HeaderRow[]>(
    () => (endpoint?.custom_headers ?? []).map((h) => newRow({ name: h.name, hint: h.value_hint })),
  );
  const [headerErrors, setHeaderErrors] = useState<RowErrors>({});
  const [fieldErrors, setFieldErrors] = useState<Fields>({});
  const refs = {
    url: useRef<HTMLInputElement>(null),
    events: useRef<HTMLFieldSetElement>(null),
    rate_limit_per_second: useRef<HTMLInputElement>(null),
    custom_headers: useRef<HTMLFieldSetElement>(null),
    secret: useRef<HTMLInputElement>(null),
  };
  const editing = !!endpoint;
  // Typing starts at the URL. Not the autofocus attribute: a browser honours that once per document.
  useEffect(() => refs.url.current?.focus(), []);

  /** Shows these errors at their fields (and no others) and takes the person to the first. */
  function showErrors(errors: Fields, rows: RowErrors = {}) {
    setFieldErrors(errors);
    setHeaderErrors(rows);
    const first = FIELD_ORDER.find((f) => errors[f] || (f === "custom_headers" && Object.keys(rows).length));
    if (first === "events") {
      refs.events.current?.querySelector("input")?.focus();
    } else if (first === "custom_headers") {
      // After the rows show their errors: the first input marked invalid, else the section's first control.
      setTimeout(() => {
        const section = refs.custom_headers.current;
        (section?.querySelector<HTMLElement>("[aria-invalid='true']") ?? section?.querySelector("button"))
          ?.focus();
      }, 0);
    } else if (first) refs[first].current?.focus();
  }

  const save = useAction(async (rateLimit: number | null) => {
    try {
      if (endpoint) {
        await unwrap(api.PATCH("/webhooks/endpoints/{id}", {
          params: { path: { id: endpoint.id } },
          body: {
            url: url.trim(),
            events,
            description: description.trim() || null,
            rate_limit_per_second: rateLimit, // null: a limit cleared on the page is removed
            custom_headers: headersBody(headers), // the set replaced; a saved value left alone is kept
          },
        }));
        onSaved();
      } else {
        const created = await unwrap(api.POST("/webhooks/endpoints", {
          body: {
            url: url.trim(),
            events,
            ...(description.trim() ? { description: description.trim() } : {}),
            ...(rateLimit !== null ? { rate_limit_per_second: rateLimit } : {}),
            ...(secretMode === "own" ? { secret: ownSecret } : {}),
            ...(headers.length
              ? { custom_headers: headersBody(headers) as { name: string; value: string }[] }
              : {}),
          },
        }));
        onSaved(created);
      }
    } catch (e) {
      if (e instanceof ApiError && e.fields.length) {
        // custom_headers.<i>.<name|value> belongs to a row; the rest to its field.
        const rows: RowErrors = {};
        for (const f of e.fields) {
          const m = /^custom_headers\.(\d+)\.(name|value)$/.exec(f.field);
          if (m) rows[`${m[1]}.${m[2]}`] = f.message;
        }
        showErrors(
          Object.fromEntries(
            e.fields.filter((f) => !/^custom_headers\.\d+\./.test(f.field))
              .map((f) => [f.field.split(".")[0]!, f.message]),
          ),
          rows,
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
        const parsedRate = parseRate(rate);
        if ("error" in parsedRate) local.rate_limit_per_second = parsedRate.error;
        const rows = rowProblems(headers);
        if (
          !editing && secretMode === "own" &&
          !secretChecks(ownSecret).every((c) => c.ok)
        ) {
          local.secret = "This secret does not meet the rule above yet.";
        }
        if (Object.keys(local).length || Object.keys(rows).length) {
          save.reset(); // an earlier refusal no longer describes what is on screen
          showErrors(local, rows);
          return;
        }
        setFieldErrors({});
        setHeaderErrors({});
        save.mutate("value" in parsedRate ? parsedRate.value : null);
      }}
    >
      <h2 id={`${id}-title`}>
        {editing ? "Edit endpoint" : "Add an endpoint"}
      </h2>
      <TextField
        id={`${id}-url`}
        label="Endpoint URL"
        help={URL_HELP[targetPolicy ?? "public_https"]}
        error={fieldErrors.url}
        inputRef={refs.url}
        className="wide-input"
        type="url"
        inputMode="url"
        placeholder="https://example.org/webhooks/church"
        value={url}
        onChange={(e) => setUrl(e.currentTarget.value)}
      />

      <label htmlFor={`${id}-desc`}>Description (optional)</label>
      <input
        id={`${id}-desc`}
        value={description}
        className="wide-input"
        maxLength={500}
        placeholder="e.g. Our CRM, Zapier – new members"
        onChange={(e) => setDescription(e.currentTarget.value)}
      />

      <fieldset
        ref={refs.events}
        aria-describedby={fieldErrors.events ? `${id}-ev-err` : undefined}
      >
        <legend>Events to send</legend>
        {
          /* Said first, where focus goes: at the end of a long list it was off screen. */
          fieldErrors.events && (
            <p id={`${id}-ev-err`} className="field-error">
              {fieldErrors.events}
            </p>
          )
        }
        {catalogue && catalogue.length > 1 && (
          <div className="event-choice all-events">
            <input
              type="checkbox"
              id={`${id}-all`}
              checked={catalogue.every((t) => events.includes(t.type as EventType))}
              aria-describedby={`${id}-all-d`}
              onKeyDown={noEnter}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                setEvents(on ? catalogue.map((t) => t.type as EventType) : []);
              }}
            />
            <label htmlFor={`${id}-all`}>All events</label>
            <p id={`${id}-all-d`} className="help">
              Every one of the {catalogue.length} event types below; a type added later is chosen here again.
            </p>
          </div>
        )}
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
                onKeyDown={noEnter}
                onChange={(e) => {
                  const on = e.currentTarget.checked; // read now: currentTarget is gone once the event is
                  setEvents((cur) => on ? [...cur, type] : cur.filter((x) => x !== type));
                }}
              />
              <label htmlFor={`${id}-${t.type}`}>
                <code>{t.type}</code>
              </label>
              <p id={`${id}-${t.type}-d`} className="help">{t.description}</p>
            </div>
          );
        })}
        {
          /* One place for the example bodies: one per event made two stops of the Tab key for each. */
          catalogue && catalogue.length > 0 && (
            <details className="examples">
              <summary>Example bodies of these events</summary>
              {catalogue.map((t) => (
                <div key={t.type}>
                  <p>
                    <code>{t.type}</code>
                  </p>
                  <pre className="code" tabIndex={0}>
                    {JSON.stringify(t.example, null, 2)}
                  </pre>
                </div>
              ))}
            </details>
          )
        }
      </fieldset>
      <TextField
        id={`${id}-rate`}
        label="Maximum deliveries per second (optional)"
        help={"For receivers that accept only so many requests a second, such as a small server or a Zapier, " +
          "Make or n8n plan: deliveries then wait their turn instead of being refused. 1 to 1000; empty means no limit."}
        error={fieldErrors.rate_limit_per_second}
        inputRef={refs.rate_limit_per_second}
        className="rate"
        inputMode="numeric"
        autoComplete="off"
        value={rate}
        onChange={(e) => setRate(e.currentTarget.value)}
      />

      <CustomHeaders
        rows={headers}
        setRows={setHeaders}
        errors={headerErrors}
        listError={fieldErrors.custom_headers}
        sectionRef={refs.custom_headers}
      />

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
