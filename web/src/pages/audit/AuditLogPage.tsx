// Settings > Audit log: every change to the organization's settings and people, by its admins, staff,
// API keys, the platform's administrators and the service's own rules: when, what (before and after),
// who and from where, newest first; filtered by who, what and when (the filters live in the address).
import { useInfiniteQuery } from "@tanstack/react-query";
import { useId, useState, useSyncExternalStore } from "react";
import { api, type AuditEntry, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { displayZoneSettled, fromLocalInput, subscribeZone } from "../../format.ts";
import { setQuery, useLocation } from "../../router.tsx";
import { useOrgKey } from "../../session.tsx";
import { ACTIONS, ACTORS, AuditTable } from "../../ui/AuditTable.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { loadMore } from "../../ui/loadMore.ts";
import "./AuditLogPage.css";

const RANGES = [
  { value: "", label: "Any time", hours: 0 },
  { value: "24h", label: "Last 24 hours", hours: 24 },
  { value: "7d", label: "Last 7 days", hours: 168 },
  { value: "30d", label: "Last 30 days", hours: 720 },
  { value: "custom", label: "Custom range…", hours: 0 },
] as const;

type Action = AuditEntry["action"];
type Kind = AuditEntry["actor"]["kind"];

function readFilters(q: URLSearchParams) {
  const action = q.get("action") ?? "";
  const by = q.get("by") ?? "";
  const range = q.get("range") ?? (q.get("since") || q.get("until") ? "custom" : "");
  return {
    actor: q.get("actor")?.trim() || undefined,
    action: action in ACTIONS ? action as Action : undefined,
    by: by in ACTORS ? by as Kind : undefined,
    range,
    since: range === "custom" ? fromLocalInput(q.get("since") ?? "") : undefined,
    until: range === "custom" ? fromLocalInput(q.get("until") ?? "") : undefined,
  };
}
type Filters = ReturnType<typeof readFilters>;

function apiQuery(f: Filters, now = Date.now()) {
  const hours = RANGES.find((r) => r.value === f.range)?.hours ?? 0;
  return {
    ...(f.actor ? { actor: f.actor } : {}),
    ...(f.action ? { action: f.action } : {}),
    ...(f.by ? { actor_kind: f.by } : {}),
    ...(hours ? { from: new Date(now - hours * 3600_000).toISOString() } : {}),
    ...(f.since ? { from: f.since } : {}),
    ...(f.until ? { to: f.until } : {}),
  };
}

export function AuditLogPage() {
  useTick();
  const org = useOrgKey();
  const q = useLocation().searchParams;
  const filters = readFilters(q);
  const problem = filters.since && filters.until && filters.until <= filters.since
    ? "“Until” is before “From”: no entry can match. Choose an “Until” after “From”."
    : null;
  // A recent period counts back from when it was chosen, not from each render.
  const [now] = useState(() => Date.now());
  // A custom range is wall times in the display zone: asked once that zone is the church's (or the
  // person's), not first in the browser's and again as the church's arrives.
  const zoneSettled = useSyncExternalStore(subscribeZone, () => displayZoneSettled(org));
  const log = useInfiniteQuery({
    queryKey: [org, "audit-log", filters],
    enabled: !problem && (filters.range !== "custom" || zoneSettled),
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/webhooks/audit-log", {
        params: {
          query: { limit: 50, ...apiQuery(filters, now), ...(pageParam ? { cursor: pageParam } : {}) },
        },
      })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
  const entries = log.data?.pages.flatMap((p) => p.data) ?? [];
  const anyFilter = !!(filters.actor || filters.action || filters.by || filters.range);
  return (
    <>
      <h1>Audit log</h1>
      <p className="lead">
        Every change to this organization's settings and people: invitations, roles, endpoints, signing
        secrets (rotated or revealed, never their values), API keys, connections, WhatsApp numbers,
        recoveries, replays, erasures and settings, by your administrators, your API keys, the service's own
        rules (an endpoint disabled after days of failures) and the service's administrators. Who did it, from
        which address and browser, and what changed. Entries are kept for a year; only administrators see
        them.
      </p>
      <AuditFilters filters={filters} problem={problem} anyFilter={anyFilter} />
      {log.error && (
        <ErrorBox
          error={`Could not load the audit log: ${errorText(log.error)}`}
          retry={() => void log.refetch()}
        />
      )}
      {log.isPending && !problem && <Loading what="the audit log" />}
      {log.data && entries.length === 0 && (
        <Empty level={2} title={anyFilter ? "No entry matches these filters" : "Nothing recorded"}>
          <p>
            {anyFilter
              ? "Nothing recorded matches who, what and when you chose. Clear the filters to see every entry."
              : "No change to this organization's settings or people has been recorded in the last year."}
          </p>
        </Empty>
      )}
      {entries.length > 0 && <AuditTable entries={entries} label="Audit log" />}
      {log.hasNextPage && (
        <button
          type="button"
          onClick={() =>
            !log.isFetchingNextPage &&
            void loadMore(() => log.fetchNextPage(), '.table-wrap[aria-label="Audit log"] tbody tr')}
          aria-disabled={log.isFetchingNextPage || undefined}
        >
          {log.isFetchingNextPage ? "Loading…" : "Show older entries"}
        </button>
      )}
    </>
  );
}

function AuditFilters(
  { filters, problem, anyFilter }: { filters: Filters; problem: string | null; anyFilter: boolean },
) {
  const id = useId();
  const q = useLocation().searchParams;
  const [actor, setActor] = useState(filters.actor ?? "");
  const field = (name: string) => ({
    id: `${id}-${name}`,
    value: q.get(name) ?? "",
    onChange: (e: { currentTarget: { value: string } }) => setQuery({ [name]: e.currentTarget.value }),
  });
  const groups = Object.keys(ACTIONS).reduce<Record<string, Action[]>>((acc, a) => {
    const group = a.split(".")[0]!;
    (acc[group] ??= []).push(a as Action);
    return acc;
  }, {});
  return (
    <form
      className="filters audit-filters"
      aria-label="Filter the audit log"
      onSubmit={(e) => {
        e.preventDefault();
        setQuery({ actor: actor.trim() });
      }}
    >
      <div>
        <label htmlFor={`${id}-actor`}>Who (e-mail or API key name)</label>
        <input
          id={`${id}-actor`}
          type="search"
          value={actor}
          onChange={(e) => setActor(e.currentTarget.value)}
          onBlur={() => {
            if (actor.trim() !== (filters.actor ?? "")) setQuery({ actor: actor.trim() });
          }}
          autoComplete="off"
        />
      </div>
      <div>
        <label htmlFor={`${id}-by`}>Kind of actor</label>
        <select {...field("by")}>
          <option value="">Anyone</option>
          {Object.entries(ACTORS).map(([k, words]) => <option key={k} value={k}>{words}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-action`}>What</label>
        <select {...field("action")}>
          <option value="">Every action</option>
          {Object.entries(groups).map(([group, actions]) => (
            <optgroup key={group} label={group.replaceAll("_", " ")}>
              {actions.map((a) => <option key={a} value={a}>{ACTIONS[a]}</option>)}
            </optgroup>
          ))}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-range`}>When</label>
        <select
          id={`${id}-range`}
          value={filters.range}
          onChange={(e) =>
            setQuery({
              range: e.currentTarget.value,
              ...(e.currentTarget.value === "custom" ? {} : { since: null, until: null }),
            })}
        >
          {RANGES.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
        </select>
      </div>
      {filters.range === "custom" && (
        <>
          <div>
            <label htmlFor={`${id}-since`}>From</label>
            <input type="datetime-local" {...field("since")} />
          </div>
          <div>
            <label htmlFor={`${id}-until`}>Until</label>
            <input
              type="datetime-local"
              {...field("until")}
              aria-invalid={problem ? true : undefined}
              aria-describedby={problem ? `${id}-problem` : undefined}
            />
          </div>
        </>
      )}
      <div>
        <button type="submit">Find</button>{" "}
        <button
          type="button"
          aria-disabled={anyFilter ? undefined : true}
          onClick={() => {
            if (!anyFilter) return;
            setActor("");
            setQuery({ actor: null, by: null, action: null, range: null, since: null, until: null });
          }}
        >
          Clear filters
        </button>
      </div>
      {problem && (
        <p id={`${id}-problem`} className="field-error filters-problem" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
