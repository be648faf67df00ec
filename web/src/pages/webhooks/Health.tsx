// An endpoint's health tiles. They come from the same answer as the activity chart below them (its latest
// attempt and its totals, read in one snapshot), for the same period, refreshed together: the tiles can
// never say "Nothing sent yet" beside a chart with a delivery, or count attempts the chart does not.
import type { Activity } from "../../api/client.ts";
import { formatClock, percent } from "../../format.ts";
import { Time } from "../../ui/Time.tsx";
import { msText, periodText } from "./ActivityChart.tsx";

export function Health({ a }: { a: Activity | undefined }) {
  if (!a) return null;
  const h = a.latest;
  const { delivered, failed, p50_ms } = a.totals;
  const attempts = delivered + failed;
  const span = a.window === "24h" ? "24 h" : "7 days";
  return (
    <div className="health-block">
      <p className="muted small period">
        Health for {periodText(a)}, the period the activity below shows; updated {formatClock(a.as_of)}.
      </p>
      <dl className="health">
        <div>
          <dt>Last delivery</dt>
          <dd>
            {h.last_attempt_at
              ? (
                <>
                  <span className={h.last_outcome === "delivered" ? "ok" : "error"}>
                    {h.last_outcome === "delivered" ? "Delivered" : "Failed"}
                    {h.last_response_status !== null ? ` (HTTP ${h.last_response_status})` : " (no response)"}
                  </span>{" "}
                  <Time iso={h.last_attempt_at} />
                </>
              )
              : <span className="muted">Nothing sent yet</span>}
          </dd>
        </div>
        <div>
          <dt>Failures in a row</dt>
          <dd className={h.consecutive_failures > 0 ? "error" : undefined}>
            {h.consecutive_failures}
            {h.failing_since !== null && (
              <>
                {" since "}
                <Time iso={h.failing_since} />
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Median response time ({span})</dt>
          <dd>
            {p50_ms !== null
              ? msText(p50_ms)
              : <span className="muted">{attempts === 0 ? "No attempts" : "No response times"}</span>}
          </dd>
        </div>
        <div>
          <dt>Success rate ({span})</dt>
          <dd>
            {attempts === 0
              ? <span className="muted">No attempts</span>
              : `${percent(delivered / attempts)} of ${attempts} attempt${attempts === 1 ? "" : "s"}`}
          </dd>
        </div>
      </dl>
    </div>
  );
}
