// The fields of an organization (name, time zone, contact address), for creating one and for changing
// it, each with its help and the API's error for it.
import { browserTimeZone as browserZone } from "../../timeZones.ts";
import { TextField } from "../../ui/TextField.tsx";
import { ZoneOptions } from "../../ui/ZoneOptions.tsx";

export interface OrganizationValues {
  name: string;
  time_zone: string;
  contact_email: string;
}

export type FieldErrors = Partial<Record<keyof OrganizationValues, string>>;

/** The browser's own time zone, which is most likely the church's. */
export const browserTimeZone = browserZone;

export function OrganizationFields(
  { id, values, errors, onChange, nameRef }: {
    id: string;
    values: OrganizationValues;
    errors: FieldErrors;
    onChange(v: OrganizationValues): void;
    nameRef?: { current: HTMLInputElement | null };
  },
) {
  const set = (k: keyof OrganizationValues) => (e: { currentTarget: { value: string } }) =>
    onChange({ ...values, [k]: e.currentTarget.value });
  return (
    <>
      <TextField
        id={`${id}-name`}
        label="Name"
        help="As your church is known: it is shown to everyone you invite and in every e-mail we send for it."
        error={errors.name}
        inputRef={nameRef}
        value={values.name}
        maxLength={200}
        autoComplete="organization"
        required
        onChange={set("name")}
      />
      <label htmlFor={`${id}-tz`}>Time zone</label>
      <select
        id={`${id}-tz`}
        value={values.time_zone}
        aria-invalid={errors.time_zone ? true : undefined}
        aria-describedby={`${id}-tz-help${errors.time_zone ? ` ${id}-tz-err` : ""}`}
        onChange={set("time_zone")}
      >
        <ZoneOptions include={[values.time_zone]} />
      </select>
      <p id={`${id}-tz-help`} className="help">
        Where your church meets: every time on these pages is shown in it, unless a person chooses their own
        zone (below).
      </p>
      {errors.time_zone && <p id={`${id}-tz-err`} className="field-error">{errors.time_zone}</p>}
      <TextField
        id={`${id}-email`}
        label="Contact e-mail (optional)"
        help="Where people can write to your church about its settings and mails."
        error={errors.contact_email}
        type="email"
        value={values.contact_email}
        maxLength={320}
        autoComplete="email"
        onChange={set("contact_email")}
      />
    </>
  );
}

/** The API's field errors (details.fields) for these fields; anything else stays for the form's alert. */
export function fieldErrors(
  fields: { field: string; message: string }[],
): FieldErrors {
  const out: FieldErrors = {};
  for (const f of fields) {
    if (
      f.field === "name" || f.field === "time_zone" ||
      f.field === "contact_email"
    ) {
      out[f.field] = `${
        f.field === "name" ? "The name" : f.field === "time_zone" ? "The time zone" : "The address"
      } ${f.message}.`;
    }
  }
  return out;
}
