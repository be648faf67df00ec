// Find a message: paste its webhook-id (what the receiver logged), its delivery id or its event id; or
// search by what is inside: any text of at least 3 characters that its body contains (a member's e-mail,
// a donation id).
import { useId, useRef, useState } from "react";
import { setQuery } from "../../router.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { idIn } from "./filters.ts";

/** The search's Find button, once the page shows the new search (this form is drawn anew for it). */
export const focusFind = () =>
  focusSoon(() => document.querySelector<HTMLElement>("form.search button[type=submit]"));

export function SearchBox({ current }: { current: string | undefined }) {
  const id = useId();
  const [text, setText] = useState(current ?? "");
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  return (
    <form
      role="search"
      className="search"
      aria-label="Search deliveries"
      onSubmit={(e) => {
        e.preventDefault();
        const typed = text.trim();
        if (!typed) {
          setError(null);
          setQuery({ q: null, contains: null, delivery: null });
          focusFind();
          return;
        }
        const found = idIn(typed);
        if (found) {
          setError(null);
          setText(found);
          setQuery({ q: found, contains: null, delivery: null });
          focusFind();
          return;
        }
        if (typed.length < 3) {
          setError(
            "Paste a webhook-id, delivery id or event id, or enter at least 3 characters that the body contains.",
          );
          input.current?.focus();
          return;
        }
        setError(null);
        setQuery({ contains: typed, q: null, delivery: null });
        focusFind();
      }}
    >
      <label htmlFor={id}>Find a message</label>
      <p id={`${id}-hint`} className="muted small hint">
        A webhook-id, delivery id or event id; or what the body contains: an e-mail address, a donation id.
      </p>
      <div className="row">
        <input
          id={id}
          ref={input}
          type="search"
          value={text}
          placeholder="webhook-id, or text in the body"
          spellcheck={false}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-hint ${id}-err` : `${id}-hint`}
          onChange={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit">Find</button>
      </div>
      {error && <p id={`${id}-err`} className="field-error">{error}</p>}
    </form>
  );
}
