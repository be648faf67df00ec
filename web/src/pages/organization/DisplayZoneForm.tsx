// The person's own choice of the zone times are shown in (for everyone, staff too): kept in this
// browser, the organization's time zone otherwise.
import { useId, useState } from "react";
import { organizationTimeZone, personalTimeZone, savePersonalZone } from "../../format.ts";
import { useSession } from "../../session.tsx";
import { timeZoneName } from "../../format.ts";
import { useDisplayZone } from "../../ui/Time.tsx";
import { ZoneOptions } from "../../ui/ZoneOptions.tsx";

const FOLLOW = "";

export function DisplayZoneForm() {
  const id = useId();
  const session = useSession();
  const zone = useDisplayZone();
  const [saved, setSaved] = useState<string | null>(null);
  const userId = session.state.kind === "signed_in" ? session.state.session.user.id : null;
  const church = organizationTimeZone();
  if (!userId) return null;
  return (
    <section className="panel" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Times shown to you</h2>
      <label htmlFor={`${id}-zone`}>Show times in</label>
      <select
        id={`${id}-zone`}
        value={personalTimeZone() ?? FOLLOW}
        aria-describedby={`${id}-help`}
        onChange={(e) => {
          const v = e.currentTarget.value;
          savePersonalZone(userId, v === FOLLOW ? null : v);
          setSaved(
            v === FOLLOW
              ? "Times follow the church's time zone again."
              : `Times are shown in ${timeZoneName(v)}.`,
          );
        }}
      >
        <option value={FOLLOW}>
          The church's time zone{church ? ` (${timeZoneName(church)})` : ""}
        </option>
        <ZoneOptions include={[zone]} />
      </select>
      <p id={`${id}-help`} className="help">
        Every time on these pages is shown in{" "}
        {timeZoneName(zone)}, named beside it. Your choice is kept in this browser, for you only; it changes
        nothing for others.
      </p>
      <p role="status" className="ok">{saved ?? ""}</p>
    </section>
  );
}
