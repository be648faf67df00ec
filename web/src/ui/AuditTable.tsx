// Audit entries as a table: when, what, on which organization (the platform's view), by whom, why. The
// organization's Audit log page and the platform console both show them.
import type { AuditEntry } from "../api/client.ts";
import { Time } from "./Time.tsx";

const ACTIONS: Record<AuditEntry["action"], string> = {
  "organization.suspended": "Suspended the organization",
  "organization.resumed": "Resumed the organization",
  "platform_admin.granted": "Made a platform administrator",
  "platform_admin.revoked": "Ended platform administrator rights",
  "superadmin.granted": "Made a superadmin",
  "superadmin.revoked": "Ended superadmin rights",
  "endpoint.secret_revealed": "Revealed an endpoint's signing secret",
};

const ACTORS: Record<AuditEntry["actor"]["kind"], string> = {
  platform_admin: "Platform administrator",
  operator: "An operator",
  admin: "Administrator of this organization",
};

/** What the counts kept with an entry mean, in words. */
function detailWords(e: AuditEntry): string {
  const d = e.details as Record<string, number | string | undefined>;
  const parts: string[] = [];
  if (typeof d.url === "string") parts.push(d.url);
  if (typeof d.deliveries_open === "number") {
    parts.push(`${d.deliveries_open} deliveries waiting`);
  }
  if (typeof d.suspended_seconds === "number") {
    parts.push(`suspended for ${duration(d.suspended_seconds)}`);
  }
  if (typeof d.deliveries_released === "number") {
    parts.push(`${d.deliveries_released} deliveries released`);
  }
  return parts.join("; ");
}

function duration(seconds: number): string {
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} days`;
}

export function AuditTable(
  { entries, label, showOrganization = false }: {
    entries: AuditEntry[];
    label: string;
    showOrganization?: boolean;
  },
) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            {showOrganization && <th scope="col">Organization or person</th>}
            <th scope="col">By</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id}>
              <td>
                <Time iso={e.created_at} />
              </td>
              <td>
                {ACTIONS[e.action]}
                {detailWords(e) && <div className="small muted">{detailWords(e)}</div>}
              </td>
              {showOrganization && <td>{e.organization_name ?? e.subject_email ?? "—"}</td>}
              <td>
                {ACTORS[e.actor.kind]}
                {e.actor.email && <div className="small muted">{e.actor.email}</div>}
              </td>
              <td>{e.reason ?? <span className="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
