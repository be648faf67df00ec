// Audit entries as a table: when, what (with the changed fields before and after), on which
// organization (the platform's view), by whom, from where, why. The organization's Audit log page and
// the platform console both show them.
import type { AuditEntry } from "../api/client.ts";
import { Time } from "./Time.tsx";
import "./AuditTable.css";

export const ACTIONS: Record<AuditEntry["action"], string> = {
  "organization.created": "Created the organization",
  "organization.updated": "Changed the organization's settings",
  "organization.suspended": "Suspended the organization",
  "organization.resumed": "Resumed the organization",
  "log_retention.changed": "Changed how long logs are kept",
  "platform_admin.granted": "Made a platform administrator",
  "platform_admin.revoked": "Ended platform administrator rights",
  "superadmin.granted": "Made a superadmin",
  "superadmin.revoked": "Ended superadmin rights",
  "invitation.sent": "Sent an invitation",
  "invitation.resent": "Sent an invitation again",
  "invitation.withdrawn": "Withdrew an invitation",
  "invitation.accepted": "Accepted an invitation",
  "member.joined": "Joined the organization",
  "member.role_changed": "Changed a person's role",
  "member.removed": "Removed a person",
  "member.left": "Left the organization",
  "member.erasure_requested": "Erased a member's personal data",
  "endpoint.created": "Added an endpoint",
  "endpoint.updated": "Changed an endpoint",
  "endpoint.enabled": "Enabled an endpoint",
  "endpoint.disabled": "Disabled an endpoint",
  "endpoint.deleted": "Deleted an endpoint",
  "endpoint.secret_rotated": "Rotated an endpoint's signing secret",
  "endpoint.secret_revealed": "Revealed an endpoint's signing secret",
  "endpoint.recovered": "Recovered failed deliveries",
  "delivery.redelivered": "Sent a delivery again",
  "deliveries.retried": "Retried deliveries in bulk",
  "api_key.created": "Created an API key",
  "api_key.revoked": "Revoked an API key",
  "connection.secret_set": "Set a payment provider's secret",
  "connection.secret_removed": "Removed a payment provider's secret",
  "whatsapp_number.registered": "Registered a WhatsApp number",
  "whatsapp_number.updated": "Changed a WhatsApp number",
  "whatsapp_number.app_secret_replaced": "Replaced a WhatsApp app secret",
  "whatsapp_number.verify_token_replaced": "Replaced a WhatsApp verify token",
  "whatsapp_number.removed": "Removed a WhatsApp number",
  "inbound.replayed": "Replayed an inbound webhook",
  "inbound.replayed_failed": "Replayed every failed inbound webhook",
};

export const ACTORS: Record<AuditEntry["actor"]["kind"], string> = {
  admin: "Administrator",
  staff: "Staff member",
  person: "Signed-in person",
  api_key: "API key",
  platform_admin: "Platform administrator",
  operator: "An operator",
  rule: "Automatic rule",
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

const shown = (v: unknown): string =>
  v === null || v === undefined
    ? "none"
    : Array.isArray(v)
    ? v.join(", ")
    : typeof v === "object"
    ? JSON.stringify(v)
    : String(v);

/** The changed fields: "field: before → after", or the one side there is. */
function changes(e: AuditEntry): { field: string; text: string }[] {
  const before = (e.before ?? {}) as Record<string, unknown>;
  const after = (e.after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return fields.map((field) => ({
    field: field.replaceAll("_", " "),
    text: e.before && e.after
      ? `${shown(before[field])} → ${shown(after[field])}`
      : shown(e.after ? after[field] : before[field]),
  }));
}

/** The actor's e-mail address or key name, when there is one. */
const actorName = (e: AuditEntry) => e.actor.email ?? e.actor.label;
/** Which organization or person the entry is about (the platform console's log). */
const subjectOf = (e: AuditEntry) => e.organization_name ?? e.subject_email ?? "—";

/**
 * On a phone the columns after What are hidden (the table would scroll sideways, By off-screen): what
 * they say is listed under the entry instead, shown only at that width.
 */
function NarrowDetails({ entry: e, showOrganization }: { entry: AuditEntry; showOrganization: boolean }) {
  const who = actorName(e);
  return (
    <dl className="audit-narrow small">
      {showOrganization && (
        <>
          <dt>Organization or person</dt>
          <dd>{subjectOf(e)}</dd>
        </>
      )}
      <dt>By</dt>
      <dd>{ACTORS[e.actor.kind]}{who ? `: ${who}` : ""}</dd>
      <dt>From</dt>
      <dd>{e.ip ?? "—"}</dd>
      {e.reason && (
        <>
          <dt>Reason</dt>
          <dd>{e.reason}</dd>
        </>
      )}
    </dl>
  );
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
            {showOrganization && <th scope="col" className="wide">Organization or person</th>}
            <th scope="col" className="wide">By</th>
            <th scope="col" className="wide">From</th>
            <th scope="col" className="wide">Reason</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => {
            const changed = changes(e);
            return (
              <tr key={e.id}>
                <td>
                  <Time iso={e.created_at} />
                </td>
                <td>
                  {ACTIONS[e.action] ?? e.action}
                  {e.subject_email && <div className="small muted">{e.subject_email}</div>}
                  {detailWords(e) && <div className="small muted">{detailWords(e)}</div>}
                  {changed.length > 0 && (
                    <ul className="audit-changes small">
                      {changed.map((c) => (
                        <li key={c.field}>
                          <span className="muted">{c.field}:</span> {c.text}
                        </li>
                      ))}
                    </ul>
                  )}
                  <NarrowDetails entry={e} showOrganization={showOrganization} />
                </td>
                {showOrganization && <td className="wide">{subjectOf(e)}</td>}
                <td className="wide">
                  {ACTORS[e.actor.kind]}
                  {actorName(e) && <div className="small muted">{actorName(e)}</div>}
                </td>
                <td className="wide">
                  {e.ip ?? <span className="muted">—</span>}
                  {e.user_agent && <div className="small muted audit-agent">{e.user_agent}</div>}
                </td>
                <td className="wide">{e.reason ?? <span className="muted">—</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
