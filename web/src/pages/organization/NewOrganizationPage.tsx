// Settings > New organization: anyone signed in starts an organization for their church and becomes its
// administrator; then the session switches to it. Reached from the header and from the empty state of a
// person who belongs to none.
import { useMutation } from "@tanstack/react-query";
import { useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import {
  browserTimeZone,
  type FieldErrors,
  fieldErrors,
  OrganizationFields,
  type OrganizationValues,
} from "./OrganizationFields.tsx";
import "./OrganizationForm.css";

export function NewOrganizationPage() {
  const session = useSession();
  const id = useId();
  const nameRef = useRef<HTMLInputElement | null>(null);
  const [values, setValues] = useState<OrganizationValues>({
    name: "",
    time_zone: browserTimeZone(),
    contact_email: "",
  });
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: async () => {
      const created = await unwrap(api.POST("/webhooks/organizations", {
        body: {
          name: values.name.trim(),
          time_zone: values.time_zone,
          ...(values.contact_email.trim() ? { contact_email: values.contact_email.trim() } : {}),
        },
      }));
      await session.switchOrganization(created.id);
      session.setNotice(
        `${created.name} is ready, and you are its administrator.`,
      );
      navigate(HOME);
    },
    onError: (err) => {
      const found = err instanceof ApiError ? fieldErrors(err.fields) : {};
      setErrors(found);
      if (found.name) nameRef.current?.focus();
    },
  });
  const others = session.me?.memberships.length ?? 0;
  const general = create.error && !Object.keys(errors).length ? (create.error as Error).message : null;

  return (
    <>
      <h1>New organization</h1>
      <p className="lead">
        Start an organization for your church. You become its administrator: you can then connect your payment
        and WhatsApp providers, add webhooks, and invite the people who work with you.
        {others > 0 &&
          " Your other organizations stay as they are; the header switches between them."}
      </p>
      <form
        className="panel organization-form"
        aria-labelledby={`${id}-t`}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (create.isPending) return;
          if (!values.name.trim()) {
            setErrors({ name: "Give your organization a name." });
            nameRef.current?.focus();
            return;
          }
          setErrors({});
          create.mutate();
        }}
      >
        <h2 id={`${id}-t`}>Your church</h2>
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
        <p className="sr-only" role="status">
          {create.isPending ? "Creating…" : ""}
        </p>
        <div className="actions">
          <button type="submit" className="primary">
            {create.isPending ? "Creating…" : "Create organization"}
          </button>
        </div>
      </form>
    </>
  );
}
