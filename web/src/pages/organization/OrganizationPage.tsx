// Settings > Organization: the church's name, time zone and contact address. Its administrators change
// them; staff see them. A new name shows in the header at once.
import { useMutation, useQuery } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey, useSession } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { Time } from "../../ui/Time.tsx";
import {
  type FieldErrors,
  fieldErrors,
  OrganizationFields,
  type OrganizationValues,
} from "./OrganizationFields.tsx";
import "./OrganizationForm.css";

export function OrganizationPage() {
  const org = useOrgKey();
  const session = useSession();
  const id = useId();
  const nameRef = useRef<HTMLInputElement | null>(null);
  const current = useQuery({
    queryKey: [org, "organization"],
    queryFn: () => unwrap(api.GET("/webhooks/organization")),
  });
  const [values, setValues] = useState<OrganizationValues | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  useEffect(() => {
    if (current.data && !values) {
      setValues({
        name: current.data.name,
        time_zone: current.data.time_zone,
        contact_email: current.data.contact_email ?? "",
      });
    }
  }, [current.data, values]);
  const save = useMutation({
    mutationFn: async () => {
      const v = values!;
      const saved = await unwrap(api.PATCH("/webhooks/organization", {
        body: {
          name: v.name.trim(),
          time_zone: v.time_zone,
          contact_email: v.contact_email.trim() || null,
        },
      }));
      await current.refetch();
      await session.reloadMe();
      return `Saved. ${saved.name}'s settings are up to date.`;
    },
    onError: (err) => {
      const found = err instanceof ApiError ? fieldErrors(err.fields) : {};
      setErrors(found);
      if (found.name) nameRef.current?.focus();
    },
  });

  if (current.error) {
    return (
      <>
        <h1>Organization</h1>
        <ErrorBox
          error={`Could not load the organization: ${errorText(current.error)}`}
          retry={() => void current.refetch()}
        />
      </>
    );
  }
  if (!current.data || !values) {
    return (
      <>
        <h1>Organization</h1>
        <Loading what="the organization" />
      </>
    );
  }
  const o = current.data;
  if (o.role !== "admin") {
    return (
      <>
        <h1>Organization</h1>
        <p className="lead">
          Its administrators change these; ask one of them if something is wrong.
        </p>
        <dl className="panel facts">
          <div>
            <dt>Name</dt>
            <dd>{o.name}</dd>
          </div>
          <div>
            <dt>Time zone</dt>
            <dd>{o.time_zone.replaceAll("_", " ")}</dd>
          </div>
          <div>
            <dt>Contact e-mail</dt>
            <dd>{o.contact_email ?? "None"}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <Time iso={o.created_at} />
            </dd>
          </div>
        </dl>
      </>
    );
  }
  const general = save.error && !Object.keys(errors).length ? (save.error as Error).message : null;
  return (
    <>
      <h1>Organization</h1>
      <p className="lead">
        How your church is named and reached, and the time zone its times are shown in.
      </p>
      <form
        className="panel organization-form"
        aria-labelledby={`${id}-t`}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (save.isPending) return;
          if (!values.name.trim()) {
            setErrors({ name: "The organization needs a name." });
            nameRef.current?.focus();
            return;
          }
          setErrors({});
          save.mutate();
        }}
      >
        <h2 id={`${id}-t`}>Details</h2>
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
        <p className={save.isSuccess ? "ok" : "sr-only"} role="status">
          {save.isPending ? "Saving…" : save.isSuccess ? save.data : ""}
        </p>
        <div className="actions">
          <button type="submit" className="primary">
            {save.isPending ? "Saving…" : "Save changes"}
          </button>
        </div>
      </form>
    </>
  );
}
