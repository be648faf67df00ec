// One HTTP attempt: when, what came back and how fast, the error, the start of the response body, and
// the headers both ways.
import type { Attempt } from "../../api/client.ts";
import { Time } from "../../ui/Time.tsx";
import { HeaderList } from "./HeaderList.tsx";
import { errorBeside } from "./lastResponse.ts";

export function AttemptItem({ a }: { a: Attempt }) {
  const ok = a.response_status !== null && a.response_status < 300 && !a.error;
  const error = errorBeside(a.response_status, a.error);
  return (
    <li>
      <div className="attempt-head">
        <strong>Attempt {a.attempt_number}</strong> <Time iso={a.attempted_at} />
      </div>
      <dl className="facts">
        <div>
          <dt>Response</dt>
          <dd className={ok ? "ok" : "error"}>
            {a.response_status !== null ? `HTTP ${a.response_status}` : "No response"}
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{a.duration_ms !== null ? `${a.duration_ms} ms` : "—"}</dd>
        </div>
        {error && (
          <div>
            <dt>Error</dt>
            <dd>{error}</dd>
          </div>
        )}
        <div>
          <dt>Response body (start)</dt>
          <dd>
            {a.response_excerpt
              ? <code className="excerpt">{a.response_excerpt}</code>
              : <span className="muted">Empty</span>}
          </dd>
        </div>
      </dl>
      <HeaderList
        title="Request headers we sent"
        headers={a.request_headers}
        none="No request went out."
      />
      <HeaderList
        title="Response headers we received"
        headers={a.response_headers}
        none="No response arrived."
      />
    </li>
  );
}
