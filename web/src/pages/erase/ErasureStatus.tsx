// The erasure just started: its progress while it runs (polled every second), then what it removed.
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { describeCounts, describeLeftovers, type Erasure, STAGES } from "./types.ts";

export function ErasureStatus({ started }: { started: Erasure }) {
  const org = useOrgKey();
  const queries = useQueryClient();
  const current = useQuery({
    queryKey: [org, "erasure", started.id],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/erasures/{id}", {
          params: { path: { id: started.id } },
        }),
      ),
    initialData: started,
    refetchInterval: (q) => q.state.data?.status === "running" ? 1000 : false,
  });
  const e = current.data;
  // Once it is done, the records below show it done too.
  useEffect(() => {
    if (e.status === "done") {
      void queries.invalidateQueries({ queryKey: [org, "erasures"] });
    }
  }, [e.status, org, queries]);
  return (
    <section className="panel" aria-label="Erasure progress">
      {e.status === "running"
        ? (
          <>
            <h2>Erasing…</h2>
            <p role="status">
              Working through {STAGES[e.stage]} ({e.steps}{" "}
              batches so far). The member record is already gone; the rest continues even if you leave this
              page.
            </p>
          </>
        )
        : (
          <>
            <h2>Erased</h2>
            <p role="status">
              Removed or redacted: {describeCounts(e.counts)}.
            </p>
            {describeLeftovers(e.leftovers) && (
              <p>
                Kept, but may still hold something of the erased person:{" "}
                {describeLeftovers(e.leftovers)}. These rows are recorded as someone else's too, or as
                nobody's, so the erasure did not change them; look at them (Webhook Logs for logs and
                deliveries) and remove what is the erased person's. Row ids:{" "}
                {Object.values(e.leftovers).flatMap((l) => l.ids).join(", ")}.
              </p>
            )}
          </>
        )}
      {current.error && (
        <ErrorBox
          error={`Could not load the progress: ${errorText(current.error)}`}
          retry={() => void current.refetch()}
        />
      )}
    </section>
  );
}
