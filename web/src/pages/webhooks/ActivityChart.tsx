// An endpoint's last 24 hours or 7 days at a glance: attempts per hour, or per 6 hours for the week (168
// hourly bars would be hairlines), delivered and failed, stacked; and response time (p50 and p95) for the
// same points. The API makes the 6-hour points from its histograms, since percentiles do not add up. The
// same numbers are in words beside it and as a table, for screen readers and anyone who wants figures.
// The card's health tiles come from the same answer (useActivity), so both always say the same thing.
import { keepPreviousData, useQuery, type UseQueryResult } from "@tanstack/react-query";
import { useId } from "react";
import { type Activity, api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { formatDayTime, timeZoneName } from "../../format.ts";
import { useOrgKey } from "../../session.tsx";
import "./ActivityChart.css";

export type Window = Activity["window"];
const W = 480;
const H = 64;

/** The 7-day view's points cover 6 hours each. */
const bucketFor = (window: Window) => window === "7d" ? "6h" : "1h";

/** What one point covers, in words: "hour" or "6 hours". */
const unit = (a: Activity) => a.bucket_seconds === 3600 ? "hour" : `${a.bucket_seconds / 3600} hours`;

/** A point's start with its day: "from 1:00 PM" seen at 12:10 PM read as the future. */
const hourLabel = (iso: string, _window: Window) => formatDayTime(iso);

export const msText = (n: number | null) =>
  n === null ? "—" : n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${n} ms`;
const ms = msText;

/** The period an answer covers: "the last 24 hours (from Mon, Dec 7, 10:00 AM, America/New York)". */
export const periodText = (a: Activity) =>
  `${a.window === "24h" ? "the last 24 hours" : "the last 7 days"} (from ${
    hourLabel(a.from, a.window)
  }, ${timeZoneName()})`;

/**
 * An endpoint's activity over `window`, with its latest attempt: one answer for the tiles and the chart.
 * Asked again every 15 s, as the endpoint list is; while another period loads, the last answer stays.
 */
export function useActivity(endpointId: string, window: Window) {
  const org = useOrgKey();
  return useQuery({
    queryKey: [org, "activity", endpointId, window],
    queryFn: () =>
      unwrap(api.GET("/webhooks/endpoints/{id}/activity", {
        params: { path: { id: endpointId }, query: { window, bucket: bucketFor(window) } },
      })),
    refetchInterval: 15_000,
    placeholderData: keepPreviousData,
  });
}

export function summary(a: Activity): string {
  const span = a.window === "24h" ? "Last 24 hours" : "Last 7 days";
  const { delivered, failed, p50_ms, p95_ms } = a.totals;
  if (delivered + failed === 0) return `${span}: no attempts.`;
  const busiest = a.points.reduce(
    (m, p) => (p.failed > m.failed ? p : m),
    a.points[0]!,
  );
  return `${span}: ${delivered} delivered, ${failed} failed` +
    (failed > 0 ? ` (most failures in the ${unit(a)} from ${hourLabel(busiest.start, a.window)})` : "") +
    `. Response time: median ${ms(p50_ms)}, 95th percentile ${ms(p95_ms)}.`;
}

export function ActivityChart(
  { url, window, setWindow, activity }: {
    url: string;
    window: Window;
    setWindow(w: Window): void;
    activity: UseQueryResult<Activity>;
  },
) {
  const id = useId();
  const a = activity.data;
  return (
    // Named with its endpoint: a page of several cards has several of these landmarks.
    <section className="activity" aria-label={`Activity of ${url}`}>
      <div className="activity-head">
        <h3 id={`${id}-h`}>Activity</h3>
        <div role="group" aria-label={`Period of the health and activity for ${url}`}>
          {(["24h", "7d"] as const).map((w) => (
            <button
              key={w}
              type="button"
              aria-pressed={window === w}
              onClick={() => setWindow(w)}
            >
              {w === "24h" ? "24 hours" : "7 days"}
            </button>
          ))}
        </div>
      </div>
      {activity.error && (
        <p className="error">
          Could not load the activity: {errorText(activity.error)}
        </p>
      )}
      {!a && !activity.error && (
        <p className="muted small">
          Loading activity…
        </p>
      )}
      {a && <Chart a={a} />}
    </section>
  );
}

function Chart({ a }: { a: Activity }) {
  const id = useId();
  const n = a.points.length;
  const maxCount = Math.max(1, ...a.points.map((p) => p.delivered + p.failed));
  const maxMs = Math.max(1, ...a.points.map((p) => p.p95_ms ?? 0));
  const barW = W / n;
  // One step per point with a value: visible even when only one point has attempts.
  const steps = (key: "p50_ms" | "p95_ms") =>
    a.points.map((p, i) => {
      const v = p[key];
      if (v === null) return null;
      const y = H - 1 - (v / maxMs) * (H - 4);
      return (
        <line
          key={p.start}
          x1={i * barW}
          x2={(i + 1) * barW}
          y1={y}
          y2={y}
          className={key}
        />
      );
    });
  const active = a.points.filter((p) => p.delivered + p.failed > 0);
  const text = summary(a);
  return (
    <>
      <p id={`${id}-s`} className="small">{text}</p>
      <div className="charts" aria-hidden="true">
        <figure>
          <figcaption className="small muted">
            Attempts per {unit(a)} (<span className="key delivered">delivered</span>,{" "}
            <span className="key failed">failed</span>), up to {maxCount}
          </figcaption>
          <svg
            viewBox={`0 0 ${W} ${H}`}
            preserveAspectRatio="none"
            className="bars"
          >
            <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="axis" />
            {a.points.map((p, i) => {
              const dh = (p.delivered / maxCount) * H;
              const fh = (p.failed / maxCount) * H;
              return (
                <g key={p.start}>
                  <rect
                    x={i * barW + barW * 0.1}
                    width={barW * 0.8}
                    y={H - dh}
                    height={dh}
                    className="delivered"
                  />
                  <rect
                    x={i * barW + barW * 0.1}
                    width={barW * 0.8}
                    y={H - dh - fh}
                    height={fh}
                    className="failed"
                  />
                </g>
              );
            })}
          </svg>
        </figure>
        <figure>
          <figcaption className="small muted">
            Response time per {unit(a)} (<span className="key p50">median</span>,{" "}
            <span className="key p95">95th percentile</span>), up to {ms(maxMs)}
          </figcaption>
          <svg
            viewBox={`0 0 ${W} ${H}`}
            preserveAspectRatio="none"
            className="lines"
          >
            <line x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} className="axis" />
            {steps("p95_ms")}
            {steps("p50_ms")}
          </svg>
        </figure>
      </div>
      <details>
        <summary>Activity as a table</summary>
        {active.length === 0 ? <p className="muted">No attempts in this period.</p> : (
          <div
            className="table-wrap"
            role="region"
            aria-label={`Activity per ${unit(a)}`}
            tabIndex={0}
          >
            <table>
              <caption className="sr-only">
                {text} {a.bucket_seconds === 3600 ? "Hours" : "Periods of 6 hours"}{" "}
                without attempts are left out.
              </caption>
              <thead>
                <tr>
                  <th scope="col">{a.bucket_seconds === 3600 ? "Hour" : "6 hours"} from</th>
                  <th scope="col">Delivered</th>
                  <th scope="col">Failed</th>
                  <th scope="col">Median</th>
                  <th scope="col">95th percentile</th>
                </tr>
              </thead>
              <tbody>
                {active.map((p) => (
                  <tr key={p.start}>
                    <td>{hourLabel(p.start, a.window)}</td>
                    <td>{p.delivered}</td>
                    <td>{p.failed}</td>
                    <td>{ms(p.p50_ms)}</td>
                    <td>{ms(p.p95_ms)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </>
  );
}
