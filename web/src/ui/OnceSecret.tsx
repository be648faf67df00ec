import { type ReactNode, useId } from "react";
import { CopyButton } from "./CopyButton.tsx";
import "./OnceSecret.css";

/**
 * A secret shown exactly once: a read-only field, a copy button, and nothing stored anywhere. `again`: one
 * that can be revealed again (a signing secret behind Reveal secret), said so instead.
 */
export function OnceSecret(
  { label, value, again, children }: {
    label: string;
    value: string;
    again?: boolean;
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
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <CopyButton text={value} />
      </div>
      <p className="warn">
        {again
          ? "It is hidden again when you close this; Reveal secret shows it again, after your password."
          : "Copy it now: it is shown only once and cannot be read again."}
      </p>
      {children}
    </div>
  );
}
