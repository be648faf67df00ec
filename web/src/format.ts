// Times, all in one zone, named beside them: the person's own choice (kept in this browser), else the
// organization's time zone, else the browser's. A relative hint ("3 minutes ago") goes with them.
import { browserTimeZone, canonicalZone, isKnownZone, zoneLabel } from "./timeZones.ts";

let organizationZone: string | null = null;
/** The organization whose zone has been asked for (answered or not): until then times may still move. */
let zoneSettledFor: string | null = null;
let personalZone: string | null = null;
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((l) => l());

/** The zone every time is shown in. */
export function displayZone(): string {
  return personalZone ?? organizationZone ?? browserTimeZone();
}

/** Where the zone comes from, in words: "the church's time zone", "your choice", "this browser's". */
export function displayZoneSource(): "personal" | "organization" | "browser" {
  return personalZone ? "personal" : organizationZone ? "organization" : "browser";
}

export const organizationTimeZone = (): string | null => organizationZone;
export const personalTimeZone = (): string | null => personalZone;

export function subscribeZone(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const usable = (zone: string | null | undefined): string | null => {
  if (!zone) return null;
  const z = canonicalZone(zone);
  return isKnownZone(z) ? z : null;
};

/** The organization's zone; `organizationId`: whose it is (the answer to asking for it, even a failed one). */
export function setOrganizationZone(zone: string | null, organizationId?: string | null): void {
  const z = usable(zone);
  const settled = organizationId === undefined ? zoneSettledFor : organizationId;
  if (z === organizationZone && settled === zoneSettledFor) return;
  organizationZone = z;
  zoneSettledFor = settled;
  changed();
}

/**
 * Whether the display zone is final for this organization: a wall time typed in a filter ("from 9:00")
 * becomes an instant only then, or a query would be asked once in the browser's zone and again in the
 * church's as its zone arrives.
 */
export const displayZoneSettled = (organizationId: string): boolean =>
  personalZone !== null || zoneSettledFor === organizationId;

// The person's choice is a display preference, not a secret: kept in this browser, per person.
const storageKey = (userId: string) => `settings.timeZone.${userId}`;

/** Reads the person's choice for this browser (on sign-in). */
export function loadPersonalZone(userId: string | null): void {
  let z: string | null = null;
  try {
    z = userId ? usable(localStorage.getItem(storageKey(userId))) : null;
  } catch { /* storage refused: the organization's zone */ }
  if (z === personalZone) return;
  personalZone = z;
  changed();
}

/** Keeps the person's choice (null: follow the organization's zone again). */
export function savePersonalZone(userId: string, zone: string | null): void {
  try {
    if (zone) localStorage.setItem(storageKey(userId), zone);
    else localStorage.removeItem(storageKey(userId));
  } catch { /* kept for this visit only */ }
  personalZone = usable(zone);
  changed();
}

const formats = new Map<string, Intl.DateTimeFormat>();
function format(
  zone: string,
  kind: "full" | "clock" | "day" | "short",
): Intl.DateTimeFormat {
  const key = `${zone} ${kind}`;
  let f = formats.get(key);
  if (!f) {
    const options: Intl.DateTimeFormatOptions = kind === "full"
      ? { dateStyle: "medium", timeStyle: "long" }
      : kind === "clock"
      ? {
        hour: "numeric",
        minute: "2-digit",
        second: "2-digit",
        timeZoneName: "short",
      }
      : kind === "day"
      ? {
        weekday: "short",
        month: "short",
        day: "numeric",
        hour: "numeric",
        minute: "2-digit",
      }
      : { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" };
    f = new Intl.DateTimeFormat(undefined, { ...options, timeZone: zone });
    formats.set(key, f);
  }
  return f;
}

/** "Dec 7, 2026, 7:08:00 AM EST": date, time and the zone's short name. */
export function formatTime(iso: string, zone = displayZone()): string {
  return format(zone, "full").format(new Date(iso));
}

/** "7:08:00 AM EST": the time of day only, with the zone (for "updated at"). */
export function formatClock(
  iso: string | number | Date,
  zone = displayZone(),
): string {
  return format(zone, "clock").format(new Date(iso));
}

/** "Mon, Dec 7, 1:00 PM": a moment named with its day (the zone said once beside it). */
export function formatDayTime(iso: string, zone = displayZone()): string {
  return format(zone, "day").format(new Date(iso));
}

/** "Dec 7, 1:00 PM" (the zone said once beside it). */
export function formatShort(iso: string, zone = displayZone()): string {
  return format(zone, "short").format(new Date(iso));
}

/** The zone's name for people: "America/New York". */
export function timeZoneName(zone = displayZone()): string {
  return zoneLabel(zone);
}

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return seconds <= 0 ? "just now" : "in a few seconds";
  if (abs < 45 * 60) return relative.format(Math.round(seconds / 60), "minute");
  if (abs < 22 * 3600) {
    return relative.format(Math.round(seconds / 3600), "hour");
  }
  return relative.format(Math.round(seconds / 86400), "day");
}
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** A zone's offset from UTC at `at`, in milliseconds. */
function offsetMs(zone: string, at: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(at));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  return Date.UTC(
    n("year"),
    n("month") - 1,
    n("day"),
    n("hour"),
    n("minute"),
    n("second"),
  ) -
    Math.floor(at / 1000) * 1000;
}

/** For <input type="datetime-local">: the wall time in the display zone, no zone. */
export function toLocalInput(date: Date, zone = displayZone()): string {
  const wall = new Date(date.getTime() + offsetMs(zone, date.getTime()));
  return wall.toISOString().slice(0, 16);
}

/** A datetime-local value (wall time in the display zone) as an ISO instant, or undefined when empty. */
export function fromLocalInput(
  value: string,
  zone = displayZone(),
): string | undefined {
  if (!value) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(
    value,
  );
  if (!m) return undefined;
  const wall = Date.UTC(
    +m[1]!,
    +m[2]! - 1,
    +m[3]!,
    +m[4]!,
    +m[5]!,
    +(m[6] ?? 0),
  );
  // The offset at the guessed instant, then once more at the corrected one (around a DST change).
  let at = wall - offsetMs(zone, wall);
  at = wall - offsetMs(zone, at);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

/** ISO instants inside a server's sentence ("410 Gone at 2026-12-07T12:14:34Z") as times people read. */
export function humanTimes(text: string, zone = displayZone()): string {
  return text.replace(
    /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})\b/g,
    (iso) => Number.isNaN(Date.parse(iso)) ? iso : formatTime(iso, zone),
  );
}

export function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)}%`;
}

export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
