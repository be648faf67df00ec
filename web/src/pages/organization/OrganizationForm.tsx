// The form of an organization's details, for creating one and for changing it: the fields, a name
// before anything is sent, the API's errors at their fields (focus on the name when it is wrong), and
// what the submit did.
import { useMutation } from "@tanstack/react-query";
import { useId, useRef, useState } from "react";
import { ApiError } from "../../api/client.ts";
import {
  type FieldErrors,
  fieldErrors,
  OrganizationFields,
  type OrganizationValues,
} from "./OrganizationFields.tsx";
import "./OrganizationForm.css";

export function OrganizationForm(
  { heading, initial, submit, busy, noName, onSubmit }: {
    heading: string;
    initial: OrganizationValues;
    /** The button's label, and while it works. */
    submit: string;
    busy: string;
    /** Said at the name when it is empty. */
    noName: string;
    /** Sends the values; what it returns is said after it. */
    onSubmit(values: OrganizationValues): Promise<string | void>;
  },
) {
  const id = useId();
  const nameRef = useRef<HTMLInputElement | null>(null);
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const send = useMutation({
    mutationFn: () => onSubmit(values),
    onError: (err) => {
      const found = err instanceof ApiError ? fieldErrors(err.fields) : {};
      setErrors(found);
      if (found.name) nameRef.current?.focus();
    },
  });
  const general = send.error && !Object.keys(errors).length ? (send.error as Error).message : null;
  return (
    <form
      className="panel organization-form"
      aria-labelledby={`${id}-t`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (send.isPending) return;
        if (!values.name.trim()) {
          setErrors({ name: noName });
          nameRef.current?.focus();
          return;
        }
        setErrors({});
        send.mutate();
      }}
    >
      <h2 id={`${id}-t`}>{heading}</h2>
      <OrganizationFields
        id={id}
        values={values}
        errors={errors}
        onChange={(v) => {
          // What was wrong is said until the person changes something.
          setValues(v);
          setErrors({});
        }}
        nameRef={nameRef}
      />
      {general && <p className="error" role="alert">{general}</p>}
      <p className={send.data ? "ok" : "sr-only"} role="status">
        {send.isPending ? busy : send.data ?? ""}
      </p>
      <div className="actions">
        <button type="submit" className="primary">{send.isPending ? busy : submit}</button>
      </div>
    </form>
  );
}
