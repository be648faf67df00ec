// Times in the viewer's own time zone, with a relative hint ("3 minutes ago").
const absolute = new Intl.DateTimeFormat(undefined, {
  dateStyle: "medium",
  timeStyle: "medium",
});
const zone = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function formatTime(iso: string): string {
  return absolute.format(new Date(iso));
}

export function timeZoneName(): string {
  return zone.formatToParts(new Date()).find((p) => p.type === "timeZoneName")
    ?.value ?? "";
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

/** For <input type="datetime-local">: local wall time, no zone. */
export function toLocalInput(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${
    pad(date.getMinutes())
  }`;
}

/** A datetime-local value (viewer's zone) as an ISO instant, or undefined when empty. */
export function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
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
