// The organization's erasure records: who erased, when, and how many rows of each kind. Never what.
import type { UseQueryResult } from "@tanstack/react-query";
import { errorText } from "../../api/queries.ts";
import { useSession } from "../../session.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { Time } from "../../ui/Time.tsx";
import { describeCounts, type Erasure } from "./types.ts";

export function ErasureRecords(
  { records }: { records: UseQueryResult<Erasure[]> },
) {
  const session = useSession();
  const me = session.state.kind === "signed_in" ? session.state.session.user.id : null;
  const list = records.data ?? [];
  return (
    <>
      <h2>Erasure records</h2>
      {records.error && (
        <ErrorBox
          error={`Could not load the records: ${errorText(records.error)}`}
          retry={() => void records.refetch()}
        />
      )}
      {records.isPending && <Loading what="erasure records" />}
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
