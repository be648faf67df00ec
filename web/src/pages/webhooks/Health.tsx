import type { Endpoint } from "../../api/client.ts";
import { percent } from "../../format.ts";
import { Time } from "../../ui/Time.tsx";

export function Health({ e }: { e: Endpoint }) {
  const h = e.health;
  return (
    <dl className="health">
      <div>
        <dt>Last delivery</dt>
        <dd>
          {h.last_attempt_at
            ? (
              <>
                <span
                  className={h.last_outcome === "delivered" ? "ok" : "error"}
                >
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
        <dt>Mean response time (24 h)</dt>
        <dd>
          {h.mean_response_ms_24h === null
            ? <span className="muted">No attempts</span>
            : `${h.mean_response_ms_24h} ms`}
        </dd>
      </div>
      <div>
        <dt>Success rate (24 h)</dt>
        <dd>
          {h.success_rate_24h === null
            ? <span className="muted">No attempts</span>
            : `${percent(h.success_rate_24h)} of ${h.attempts_24h} attempt${h.attempts_24h === 1 ? "" : "s"}`}
        </dd>
      </div>
    </dl>
  );
}
