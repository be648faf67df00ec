// The filters, kept in the address. A time range is one choice (any time, a recent period, or custom);
// the two date-time fields, each several stops for a keyboard, appear only for a custom range.
import { useId } from "react";
import { setQuery, useLocation } from "../../router.tsx";
import { statusWord } from "../../ui/Badge.tsx";
import { RANGES, STATUS_CLASSES, STATUSES, TESTS } from "./filters.ts";

export function FilterBar(
  { endpoints, eventTypes, problem }: {
    endpoints: { id: string; url: string }[];
    eventTypes: string[];
    problem: string | null;
  },
) {
  const q = useLocation().searchParams;
  const id = useId();
  const range = q.get("range") ??
    (q.get("since") || q.get("until") ? "custom" : "");
  const field = (name: string) => ({
    id: `${id}-${name}`,
    value: q.get(name) ?? "",
    onChange: (e: { currentTarget: { value: string } }) =>
      setQuery({ [name]: e.currentTarget.value, delivery: null }),
  });
  return (
    <form
      className="filters"
      aria-label="Filter deliveries"
      onSubmit={(e) => e.preventDefault()}
    >
      <div>
        <label htmlFor={`${id}-endpoint`}>Endpoint</label>
        <select {...field("endpoint")}>
          <option value="">All endpoints</option>
          {endpoints.map((e) => <option key={e.id} value={e.id}>{e.url}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-event`}>Event type</label>
        <select {...field("event")}>
          <option value="">All events</option>
          {eventTypes.map((t) => <option key={t} value={t}>{t}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-status`}>Status</label>
        <select {...field("status")}>
          <option value="">Any status</option>
          {STATUSES.map((s) => <option key={s} value={s}>{statusWord(s)}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-class`}>Last response</label>
        <select {...field("class")}>
          {STATUS_CLASSES.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-tests`}>Test deliveries</label>
        <select {...field("tests")}>
          {TESTS.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}
        </select>
      </div>
      <div>
        <label htmlFor={`${id}-range`}>Time</label>
        <select
          id={`${id}-range`}
          value={range}
          onChange={(e) =>
            setQuery({
              range: e.currentTarget.value,
              delivery: null,
              ...(e.currentTarget.value === "custom" ? {} : { since: null, until: null }),
            })}
        >
          {RANGES.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
        </select>
      </div>
      {range === "custom" && (
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
      {problem && (
        <p
          id={`${id}-problem`}
          className="field-error filters-problem"
          role="alert"
        >
          {problem}
        </p>
      )}
    </form>
  );
}
