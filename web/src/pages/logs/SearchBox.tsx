// Find one message: paste its webhook-id (what the receiver logged), its delivery id or its event id.
import { useId, useRef, useState } from "react";
import { setQuery } from "../../router.tsx";
import { idIn } from "./filters.ts";

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
        if (!text.trim()) {
          setError(null);
          setQuery({ q: null, delivery: null });
          return;
        }
        const found = idIn(text);
        if (!found) {
          setError(
            "Paste a webhook-id, delivery id or event id: 36 characters like 0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a.",
          );
          input.current?.focus();
          return;
        }
        setError(null);
        setText(found);
        setQuery({ q: found, delivery: null });
      }}
    >
      <label htmlFor={id}>Find a message</label>
      <div className="row">
        <input
          id={id}
          ref={input}
          type="search"
          value={text}
          placeholder="webhook-id, delivery id or event id"
          spellCheck={false}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-err` : undefined}
          onChange={(e) => setText(e.target.value)}
        />
        <button type="submit">Find</button>
      </div>
      {error && <p id={`${id}-err`} className="field-error">{error}</p>}
    </form>
  );
}
