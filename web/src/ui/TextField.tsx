import type { InputHTMLAttributes, ReactNode, Ref } from "react";

/**
 * A labelled input with its help below, and its error when there is one: the error marks the input
 * invalid and is read out with the help (`<id>-help`, `<id>-err`).
 */
export function TextField(
  { id, label, help, error, inputRef, ...input }:
    & { id: string; label: string; help: ReactNode; error?: string; inputRef?: Ref<HTMLInputElement> }
    & InputHTMLAttributes<HTMLInputElement>,
) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        ref={inputRef}
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-help${error ? ` ${id}-err` : ""}`}
        {...input}
      />
      <p id={`${id}-help`} className="help">{help}</p>
      {error && <p id={`${id}-err`} className="field-error">{error}</p>}
    </>
  );
}
