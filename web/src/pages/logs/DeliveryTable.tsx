import type { Delivery } from "../../api/client.ts";
import { formatTime } from "../../format.ts";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";
import { openDelivery } from "./detailView.ts";
import { errorBeside } from "./lastResponse.ts";

export function DeliveryTable(
  { rows, openId, urlOf }: {
    rows: Delivery[];
    openId: string | null;
    urlOf(id: string): string;
  },
) {
  return (
    <div
      className="table-wrap"
      role="region"
      aria-label="Deliveries"
      tabIndex={0}
    >
      <table className="logs">
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Event</th>
            <th scope="col" className="wide">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col" className="wide">Attempts</th>
            <th scope="col" className="wide">Last response</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => {
            const error = errorBeside(d.last_response_status, d.last_error);
            return (
              <tr
                key={d.id}
                className={d.id === openId ? "selected" : undefined}
                data-delivery-id={d.id}
              >
                <td>
                  <Time iso={d.created_at} />
                </td>
                <td>
                  {/* The event opens the delivery: in reach on a phone, where the table scrolls. */}
                  <button
                    type="button"
                    className="linkish"
                    aria-label={`${d.event_type}${d.test ? " (test)" : ""}, created ${
                      formatTime(d.created_at)
                    }: show details`}
                    onClick={() => openDelivery(d.id)}
                  >
                    <code>{d.event_type}</code>
                  </button>
                  {d.test && <Badge status="test">Test</Badge>}
                </td>
                <td className="wide url">{urlOf(d.endpoint_id)}</td>
                <td>
                  <Badge status={d.status} />
                  {d.status === "retrying" && d.next_attempt_at && (
                    <div className="muted small">
                      next try <Time iso={d.next_attempt_at} />
                    </div>
                  )}
                </td>
                <td className="wide">{d.attempt_count}</td>
                <td className="wide">
                  {d.last_response_status !== null ? `HTTP ${d.last_response_status}` : ""}
                  {error && <div className="muted small">{error}</div>}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
