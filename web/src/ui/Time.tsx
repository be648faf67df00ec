import { useSyncExternalStore } from "react";
import { displayZone, formatTime, relativeTime, subscribeZone, timeZoneName } from "../format.ts";

/** The zone times are shown in; components that format times re-render when it changes. */
export function useDisplayZone(): string {
  return useSyncExternalStore(subscribeZone, displayZone);
}

/** A time in the display zone (named beside it) with a relative hint; the zone's full name in its title. */
export function Time(
  { iso, fallback = "—" }: {
    iso: string | null | undefined;
    fallback?: string;
  },
) {
  const zone = useDisplayZone();
  if (!iso) return <span className="muted">{fallback}</span>;
  return (
    <time
      dateTime={iso}
      title={`${formatTime(iso, zone)} (${timeZoneName(zone)})`}
    >
      {formatTime(iso, zone)} <span className="muted">({relativeTime(iso)})</span>
    </time>
  );
}
