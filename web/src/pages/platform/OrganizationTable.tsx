import type { PlatformOrganization } from "../../api/client.ts";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";

const count = (n: number) => (n >= 1000 ? "1,000+" : n.toLocaleString());

export function OrganizationTable(
  { organizations, onSuspend, onResume }: {
    organizations: PlatformOrganization[];
    onSuspend(o: PlatformOrganization): void;
    onResume(o: PlatformOrganization): void;
  },
) {
  return (
    <div
      className="table-wrap"
      role="region"
      aria-label="Organizations"
      tabIndex={0}
    >
      <table>
        <thead>
          <tr>
            <th scope="col">Organization</th>
            <th scope="col">Status</th>
            <th scope="col">Outbound</th>
            <th scope="col" className="wide">Inbound (24 h)</th>
            <th scope="col" className="wide">Last activity</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {organizations.map((o) => (
            <tr key={o.id}>
              <td>
                {o.name}
                <div className="small muted">
                  {o.people === 1 ? "1 person" : `${o.people} people`}
                </div>
              </td>
              <td>
                {o.suspension
                  ? (
                    <>
                      <Badge status="suspended" kind="failed">Suspended</Badge>
                      <div className="small">{o.suspension.reason}</div>
                      <div className="small muted">
                        <Time iso={o.suspension.suspended_at} />
                        {o.suspension.suspended_by &&
                          ` by ${o.suspension.suspended_by}`}
                      </div>
                    </>
                  )
                  : o.health.status === "failing"
                  ? <Badge status="failing" kind="retrying">Failing</Badge>
                  : <Badge status="ok" kind="delivered">Healthy</Badge>}
              </td>
              <td>
                {o.health.endpoints === 1 ? "1 endpoint" : `${o.health.endpoints} endpoints`}
                {o.health.endpoints_failing > 0 && (
                  <div className="small">
                    {o.health.endpoints_failing} failing
                  </div>
                )}
                <div className="small muted">
                  {count(o.health.deliveries_open)} open, {count(o.health.deliveries_failing)} retrying
                </div>
              </td>
              <td className="wide">
                {count(o.health.inbound_failed_24h)} failed
                <div className="small muted">
                  {o.health.inbound_refused_24h} refused signatures, {count(o.health.inbound_waiting)} waiting
                </div>
              </td>
              <td className="wide">
                <Time iso={o.health.last_activity_at} fallback="None yet" />
              </td>
              <td>
                {o.suspension
                  ? (
                    <button
                      type="button"
                      onClick={() => onResume(o)}
                      aria-label={`Resume ${o.name}`}
                    >
                      Resume
                    </button>
                  )
                  : (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => onSuspend(o)}
                      aria-label={`Suspend ${o.name}`}
                    >
                      Suspend
                    </button>
                  )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
