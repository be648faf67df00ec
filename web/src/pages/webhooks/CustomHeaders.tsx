// "Custom headers" of the endpoint form: name and value rows (at most 10) sent with every delivery, for a
// receiver behind an API gateway or n8n's header auth. A saved value is never shown again: its row says
// its last characters and offers "Replace value"; leaving it keeps the stored value.
import { type Ref, useId, useRef } from "react";

export const MAX_HEADERS = 10;

export interface HeaderRow {
  /** For React and focus only. */
  key: string;
  name: string;
  value: string;
  /** A header already saved: its value stays unless `replacing`. */
  hint?: string;
  replacing?: boolean;
}

/** Row errors by `<index>.name` / `<index>.value`, as the API names its fields (custom_headers.<i>.<part>). */
export type RowErrors = Record<string, string>;

let next = 0;
export const newRow = (init: Partial<HeaderRow> = {}): HeaderRow => ({
  key: `h${next++}`,
  name: "",
  value: "",
  ...init,
});

/** The rows as the API takes them: a saved value left alone is sent without `value` (kept). */
export function headersBody(rows: HeaderRow[]): { name: string; value?: string }[] {
  return rows.map((r) =>
    r.hint !== undefined && !r.replacing ? { name: r.name } : { name: r.name.trim(), value: r.value }
  );
}

/** What the page checks before sending: a name and (unless kept) a value in every row. */
export function rowProblems(rows: HeaderRow[]): RowErrors {
  const out: RowErrors = {};
  rows.forEach((r, i) => {
    if (!r.name.trim()) out[`${i}.name`] = "Enter the header's name, or remove this row.";
    if ((r.hint === undefined || r.replacing) && r.value === "") {
      out[`${i}.value`] = "Enter the header's value.";
    }
  });
  return out;
}

export function CustomHeaders(
  { rows, setRows, errors, listError, sectionRef }: {
    rows: HeaderRow[];
    setRows(f: (rows: HeaderRow[]) => HeaderRow[]): void;
    errors: RowErrors;
    listError?: string;
    sectionRef?: Ref<HTMLFieldSetElement>;
  },
) {
  const id = useId();
  const addRef = useRef<HTMLButtonElement>(null);
  const inputs = useRef(new Map<string, HTMLInputElement>());
  const focusSoon = (key: string) => setTimeout(() => inputs.current.get(key)?.focus(), 0);
  const update = (key: string, change: Partial<HeaderRow>) =>
    setRows((cur) => cur.map((r) => r.key === key ? { ...r, ...change } : r));
  const described = (base: string, err?: string) => err ? `${base} ${base}-err` : undefined;

  return (
    <fieldset ref={sectionRef} className="custom-headers" aria-describedby={`${id}-help`}>
      <legend>Custom headers (optional)</legend>
      <p id={`${id}-help`} className="help">
        Sent with every delivery to this endpoint, for a receiver that asks for its own key or header (an API
        gateway, n8n's header authentication). Up to{" "}
        {MAX_HEADERS}. A saved value is never shown again, only its last characters.
      </p>
      {rows.length > 0 && (
        <ul className="header-rows">
          {rows.map((r, i) => {
            const base = `${id}-${r.key}`;
            const nameErr = errors[`${i}.name`];
            const valueErr = errors[`${i}.value`];
            const kept = r.hint !== undefined && !r.replacing;
            const label = r.name.trim() || `header ${i + 1}`;
            return (
              <li key={r.key} className="header-row">
                <div>
                  <label htmlFor={`${base}-name`}>Name</label>
                  <input
                    id={`${base}-name`}
                    ref={(el) => {
                      if (el) inputs.current.set(`${r.key}-name`, el);
                    }}
                    value={r.name}
                    // A saved header keeps its name: to rename one, remove it and add another.
                    readOnly={r.hint !== undefined}
                    autoComplete="off"
                    spellcheck={false}
                    placeholder="Authorization"
                    aria-invalid={nameErr ? true : undefined}
                    aria-describedby={described(`${base}-name`, nameErr)}
                    onChange={(e) => update(r.key, { name: e.currentTarget.value })}
                  />
                  {nameErr && <p id={`${base}-name-err`} className="field-error">{nameErr}</p>}
                </div>
                <div>
                  {kept
                    ? (
                      <>
                        <p className="kept-value">
                          Value: <code>{r.hint}</code> <span className="help">(saved, hidden)</span>
                        </p>
                        <button
                          type="button"
                          aria-label={`Replace value of ${label}`}
                          onClick={() => {
                            update(r.key, { replacing: true, value: "" });
                            focusSoon(`${r.key}-value`);
                          }}
                        >
                          Replace value
                        </button>
                      </>
                    )
                    : (
                      <>
                        <label htmlFor={`${base}-value`}>Value</label>
                        <input
                          id={`${base}-value`}
                          ref={(el) => {
                            if (el) inputs.current.set(`${r.key}-value`, el);
                          }}
                          value={r.value}
                          autoComplete="off"
                          spellcheck={false}
                          maxLength={1024}
                          aria-invalid={valueErr ? true : undefined}
                          aria-describedby={described(`${base}-value`, valueErr)}
                          onChange={(e) => update(r.key, { value: e.currentTarget.value })}
                        />
                        {valueErr && <p id={`${base}-value-err`} className="field-error">{valueErr}</p>}
                        {r.replacing && (
                          <button
                            type="button"
                            className="linkish"
                            onClick={() => {
                              update(r.key, { replacing: false, value: "" });
                              focusSoon(`${r.key}-name`);
                            }}
                          >
                            Keep the saved value
                          </button>
                        )}
                      </>
                    )}
                </div>
                <button
                  type="button"
                  className="remove"
                  aria-label={`Remove ${label}`}
                  onClick={() => {
                    setRows((cur) => cur.filter((x) => x.key !== r.key));
                    // Focus goes on to the button that adds a row, never to the page.
                    setTimeout(() => addRef.current?.focus(), 0);
                  }}
                >
                  Remove
                </button>
              </li>
            );
          })}
        </ul>
      )}
      {listError && <p className="field-error">{listError}</p>}
      {rows.length < MAX_HEADERS
        ? (
          <button
            type="button"
            ref={addRef}
            onClick={() => {
              const row = newRow();
              setRows((cur) => [...cur, row]);
              focusSoon(`${row.key}-name`);
            }}
          >
            Add a header
          </button>
        )
        : <p className="help">{MAX_HEADERS} headers, the most an endpoint can have.</p>}
    </fieldset>
  );
}
