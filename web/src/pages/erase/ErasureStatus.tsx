// The erasure just started: its progress while it runs (polled every second), then what it removed.
import { api, unwrap } from "../../api/client.ts";
import { useInterval, useLoad } from "../../ui/hooks.ts";
import { ErrorBox } from "../../ui/parts.tsx";
import { describeCounts, type Erasure, STAGES } from "./types.ts";

export function ErasureStatus(
  { started, onDone }: { started: Erasure; onDone(): void },
) {
  const current = useLoad(
    async () => {
      const e = await unwrap(
        api.GET("/webhooks/erasures/{id}", {
          params: { path: { id: started.id } },
        }),
      );
      if (e.status === "done") onDone();
      return e;
    },
    [started.id],
  );
  const e = current.data ?? started;
  useInterval(() => void current.reload(), 1000, e.status === "running");
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
          </>
        )}
      {current.error && <ErrorBox error={current.error} retry={current.reload} />}
    </section>
  );
}
