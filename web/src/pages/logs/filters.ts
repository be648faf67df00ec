// Webhook Logs' filters live in the address, so a view can be shared: endpoint, event, status, the last
// response's class (class), a time
// range (a recent period, or from/until for a custom one), test deliveries shown, hidden or alone, q (one
// message by its id), contains (what a body holds) and recovery (the deliveries one recovery sent again).
import type { DeliveryStatus } from "../../api/client.ts";
import { fromLocalInput } from "../../format.ts";

export const STATUSES: DeliveryStatus[] = [
  "pending",
  "retrying",
  "delivered",
  "permanently_failed",
];

export const RANGES = [
  { value: "", label: "Any time", hours: 0 },
  { value: "1h", label: "Last hour", hours: 1 },
  { value: "24h", label: "Last 24 hours", hours: 24 },
  { value: "7d", label: "Last 7 days", hours: 168 },
  { value: "custom", label: "Custom range…", hours: 0 },
] as const;

// The last HTTP answer's class (the API's status_class), `none`: no HTTP answer (a timeout, a refused
// connection, not attempted yet).
export const STATUS_CLASSES = [
  { value: "", label: "Any" },
  { value: "2xx", label: "2xx success" },
  { value: "3xx", label: "3xx redirect" },
  { value: "4xx", label: "4xx client error" },
  { value: "5xx", label: "5xx server error" },
  { value: "none", label: "No HTTP answer" },
] as const;
type StatusClass = Exclude<(typeof STATUS_CLASSES)[number]["value"], "">;

export const TESTS = [
  { value: "", label: "Shown, tagged" },
  { value: "exclude", label: "Hidden" },
  { value: "only", label: "Only test deliveries" },
] as const;

export interface Filters {
  q?: string;
  contains?: string;
  recovery?: string;
  tests?: "exclude" | "only";
  endpoint_id?: string;
  event_type?: string;
  status?: DeliveryStatus;
  status_class?: StatusClass;
  range: string;
  since?: string;
  until?: string;
}

export function readFilters(q: URLSearchParams): Filters {
  const status = q.get("status") ?? "";
  // An address with from/until but no range (shared before ranges existed) is a custom range.
  const range = q.get("range") ??
    (q.get("since") || q.get("until") ? "custom" : "");
  const tests = q.get("tests");
  return {
    q: q.get("q") || undefined,
    contains: q.get("contains") || undefined,
    recovery: idIn(q.get("recovery") ?? "") ?? undefined,
    tests: tests === "exclude" || tests === "only" ? tests : undefined,
    endpoint_id: q.get("endpoint") || undefined,
    event_type: q.get("event") || undefined,
    status: (STATUSES as string[]).includes(status) ? (status as DeliveryStatus) : undefined,
    status_class: STATUS_CLASSES.find((c) => c.value !== "" && c.value === q.get("class"))?.value as
      | StatusClass
      | undefined,
    range,
    since: range === "custom" ? fromLocalInput(q.get("since") ?? "") : undefined,
    until: range === "custom" ? fromLocalInput(q.get("until") ?? "") : undefined,
  };
}

/** Why these filters cannot list anything, in words, or null. */
export function filterProblem(f: Filters): string | null {
  if (f.since && f.until && f.until <= f.since) {
    return "“Until” is before “From”: no delivery can match. Choose an “Until” after “From”.";
  }
  return null;
}

/** The API's query for these filters; a recent period is counted back from now. */
export function apiQuery(f: Filters, now = Date.now()) {
  const hours = RANGES.find((r) => r.value === f.range)?.hours ?? 0;
  return {
    ...(f.q ? { q: f.q } : {}),
    ...(f.contains ? { contains: f.contains } : {}),
    ...(f.recovery ? { recovery_id: f.recovery } : {}),
    ...(f.tests ? { tests: f.tests } : {}),
    ...(f.endpoint_id ? { endpoint_id: f.endpoint_id } : {}),
    ...(f.event_type ? { event_type: f.event_type } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.status_class ? { status_class: f.status_class } : {}),
    ...(hours ? { since: new Date(now - hours * 3600_000).toISOString() } : {}),
    ...(f.range === "custom" && f.since ? { since: f.since } : {}),
    ...(f.range === "custom" && f.until ? { until: f.until } : {}),
  };
}

/** Every filter off: what "Clear filters" sets. */
export const CLEARED = {
  q: null,
  contains: null,
  recovery: null,
  tests: null,
  endpoint: null,
  event: null,
  status: null,
  class: null,
  range: null,
  since: null,
  until: null,
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The id in what was pasted ("webhook-id: 0d9e…", a whole header line, a log line), or null. */
export function idIn(text: string): string | null {
  return UUID.exec(text)?.[0]?.toLowerCase() ?? null;
}
