// A labelled input of the /auth forms.
import type { InputHTMLAttributes, Ref } from "react";

export function AuthField(
  { id, label, inputRef, ...input }:
    & { id: string; label: string; inputRef?: Ref<HTMLInputElement> }
    & InputHTMLAttributes<HTMLInputElement>,
) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input id={id} ref={inputRef} required {...input} />
    </>
  );
}

/** The form's error, read out at once and named by the form's aria-describedby. */
export function AuthError({ id, error }: { id: string; error: string | null }) {
  return error ? <p id={id} className="error" role="alert">{error}</p> : null;
}
