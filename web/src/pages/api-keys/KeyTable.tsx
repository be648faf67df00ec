import type { ApiKey } from "../../api/client.ts";
import { Badge } from "../../ui/Badge.tsx";
import { Time } from "../../ui/Time.tsx";

export function KeyTable(
  { keys, onRevoke }: { keys: ApiKey[]; onRevoke(k: ApiKey): void },
) {
  return (
    <div
      className="table-wrap"
      role="region"
      aria-label="API keys"
      tabIndex={0}
    >
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col" className="wide">Key starts with</th>
            <th scope="col" className="wide">Created</th>
            <th scope="col">Created by</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td className="wide">
                <code>{k.key_prefix}…</code>
              </td>
              <td className="wide">
                <Time iso={k.created_at} />
              </td>
              <td>{k.created_by_display ?? "the system"}</td>
              <td>
                <Time iso={k.last_used_at} fallback="Never used" />
              </td>
              <td>
                {k.revoked_at
                  ? (
                    // The pill says the state; when and why go below it, free to wrap (a time inside a
                    // pill that never wraps was cut off at 390 px).
                    <>
                      <Badge status="revoked" kind="disabled">Revoked</Badge>
                      <div className="small muted">
                        <Time iso={k.revoked_at} />
                        {k.revoked_reason && `: ${k.revoked_reason}`}
                      </div>
                    </>
                  )
                  : <Badge status="active" kind="delivered">Active</Badge>}
              </td>
              <td>
                {!k.revoked_at && (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => onRevoke(k)}
                    aria-label={`Revoke ${k.name}`}
                  >
                    Revoke
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
