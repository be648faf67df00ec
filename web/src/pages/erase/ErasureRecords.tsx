// The organization's erasure records: who erased, when, and how many rows of each kind. Never what.
import { Empty, ErrorBox, Loading, Time } from "../../ui/parts.tsx";
import type { Loaded } from "../../ui/hooks.ts";
import { useSession } from "../../session.tsx";
import { describeCounts, type Erasure } from "./types.ts";

export function ErasureRecords({ records }: { records: Loaded<Erasure[]> }) {
  const session = useSession();
  const me = session.state.kind === "signed_in" ? session.state.session.user.id : null;
  const list = records.data ?? [];
  return (
    <>
      <h2>Erasure records</h2>
      {records.error && <ErrorBox error={records.error} retry={records.reload} />}
      {records.loading && !records.data && <Loading what="erasure records" />}
      {records.data && list.length === 0 && <Empty title="No one has been erased" />}
      {list.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Erasure records"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Requested</th>
                <th scope="col">By</th>
                <th scope="col">Status</th>
                <th scope="col">Removed or redacted</th>
              </tr>
            </thead>
            <tbody>
              {list.map((e) => (
                <tr key={e.id}>
                  <td>
                    <Time iso={e.requested_at} />
                  </td>
                  <td>
                    {e.requested_by === me ? "You" : e.requested_by ? "Another administrator" : "—"}
                  </td>
                  <td>
                    <span
                      className={`badge badge-${e.status === "done" ? "delivered" : "pending"}`}
                    >
                      {e.status === "done" ? "Done" : "Running"}
                    </span>
                  </td>
                  <td>{describeCounts(e.counts)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
