import { type ReactNode, useId } from "react";
import { CopyButton } from "./CopyButton.tsx";
import "./OnceSecret.css";

/** A secret shown exactly once: a read-only field, a copy button, and nothing stored anywhere. */
export function OnceSecret(
  { label, value, children }: {
    label: string;
    value: string;
    children?: ReactNode;
  },
) {
  const id = useId();
  return (
    <div className="secret" role="group" aria-labelledby={`${id}-l`}>
      <label id={`${id}-l`} htmlFor={id}>{label}</label>
      <div className="row">
        <input
          id={id}
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={value} />
      </div>
      <p className="warn">
        Copy it now: it is shown only once and cannot be read again.
      </p>
      {children}
    </div>
  );
}
