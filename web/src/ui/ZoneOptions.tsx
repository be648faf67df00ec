import { useMemo } from "react";
import { zoneGroups, zoneLabel } from "../timeZones.ts";

/** <option>s of every time zone, canonical names, one <optgroup> per region. */
export function ZoneOptions({ include = [] }: { include?: string[] }) {
  const groups = useMemo(() => zoneGroups(include), [include.join(" ")]);
  return (
    <>
      {groups.map((g) => (
        <optgroup key={g.region} label={g.region}>
          {g.zones.map((z) => <option key={z} value={z}>{zoneLabel(z)}</option>)}
        </optgroup>
      ))}
    </>
  );
}
