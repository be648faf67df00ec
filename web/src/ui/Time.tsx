import { formatTime, relativeTime } from "../format.ts";

/** A time in the viewer's zone with a relative hint; the exact instant in its title. */
export function Time(
  { iso, fallback = "—" }: {
    iso: string | null | undefined;
    fallback?: string;
  },
) {
  if (!iso) return <span className="muted">{fallback}</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toString()}>
      {formatTime(iso)} <span className="muted">({relativeTime(iso)})</span>
    </time>
  );
}
