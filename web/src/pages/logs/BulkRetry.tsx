// Webhook Logs > Retry matching: every failing delivery the current filters match, sent again now. Asks
// the count first (the preview), confirms, then follows the job's batches until it is done, and can stop
// it. The work is the API's (POST /deliveries/retry): delivered deliveries are never taken up.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api, type components, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { Dialog } from "../../ui/Dialog.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { Link } from "../../router.tsx";
import { useOrgKey } from "../../session.tsx";
import { apiQuery, type Filters } from "./filters.ts";

type Job = components["schemas"]["BulkRetry"];
type RetryFilter = components["schemas"]["BulkRetry"]["filter"];

/** The bulk retry's filter for the page's filters, or why none can be made. */
export function retryFilter(
  f: Filters,
): { filter: RetryFilter } | { why: string } {
  if (f.q || f.contains) {
    return { why: "Clear the search to retry by filters." };
  }
  if (f.status === "delivered" || f.status === "pending") {
    return {
      why: "Only retrying and permanently failed deliveries are retried in bulk.",
    };
  }
  const { q: _q, contains: _c, ...rest } = apiQuery(f);
  return {
    filter: { ...rest, ...(f.recovery ? { recovery_id: f.recovery } : {}) },
  };
}

const skippedText = (s: Record<string, number>) =>
  Object.entries(s).map(([k, n]) =>
    `${n} ${
      {
        in_flight: "being sent right now",
        endpoint_disabled: "of a disabled endpoint",
        erased: "of an erased person",
      }[
        k
      ] ?? k
    }`
  ).join(", ");

export function BulkRetry({ filters }: { filters: Filters }) {
  const made = retryFilter(filters);
  const [preview, setPreview] = useState<
    { count: number; more: boolean; key: string } | null
  >(null);
  const [job, setJob] = useState<Job | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const statusRef = useRef<HTMLDivElement>(null);
  const queries = useQueryClient();
  const org = useOrgKey();
  const buttonRef = useRef<HTMLButtonElement>(null);

  // Follows a running job: each poll also carries it on.
  useEffect(() => {
    if (!job || job.status !== "running") return;
    const t = setTimeout(async () => {
      try {
        setJob(
          await unwrap(
            api.GET("/webhooks/deliveries/retries/{id}", {
              params: { path: { id: job.id } },
            }),
          ),
        );
      } catch (e) {
        setError(errorText(e));
      }
    }, 1000);
    return () => clearTimeout(t);
  }, [job]);
  const running = job?.status === "running";
  useEffect(() => {
    if (!job || running) return;
    // The list shows what was queued (due now) without waiting for its own refresh.
    void queries.invalidateQueries({ queryKey: [org, "deliveries"] });
    focusSoon(() => statusRef.current);
  }, [running]);

  async function ask() {
    if (!("filter" in made)) return;
    setBusy(true);
    setError(null);
    try {
      const r = await unwrap(
        api.POST("/webhooks/deliveries/retry/preview", { body: made.filter }),
      );
      setPreview({ ...r, key: crypto.randomUUID() });
    } catch (e) {
      setError(errorText(e));
      focusSoon(() => statusRef.current);
    } finally {
      setBusy(false);
    }
  }

  async function confirm() {
    if (!preview || !("filter" in made)) return;
    setBusy(true);
    try {
      setJob(
        await unwrap(api.POST("/webhooks/deliveries/retry", {
          body: made.filter,
          headers: { "idempotency-key": preview.key },
        })),
      );
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
      setPreview(null);
      focusSoon(() => statusRef.current);
    }
  }

  async function cancel() {
    if (!job) return;
    try {
      setJob(
        await unwrap(
          api.POST("/webhooks/deliveries/retries/{id}/cancel", {
            params: { path: { id: job.id } },
          }),
        ),
      );
    } catch (e) {
      setError(errorText(e));
    }
    focusSoon(() => statusRef.current);
  }

  const total = job ? (job.total ?? job.processed) : 0;
  return (
    <div className="bulk-retry">
      <button
        type="button"
        ref={buttonRef}
        onClick={() => void ask()}
        disabled={busy || running || !("filter" in made)}
        aria-describedby={"why" in made ? "bulk-retry-why" : undefined}
      >
        {busy && !preview ? "Counting…" : "Retry matching…"}
      </button>
      {"why" in made && <span id="bulk-retry-why" className="muted small">{made.why}</span>}
      <div
        ref={statusRef}
        tabIndex={-1}
        role="status"
        className="bulk-retry-status"
      >
        {error && <p className="error">{error}</p>}
        {job && (
          <>
            <p>
              {running ? "Retrying: " : job.status === "cancelled" ? "Stopped: " : "Done: "}
              {job.retried.toLocaleString()} of {job.total?.toLocaleString() ?? "more than 100,000"}{" "}
              matching sent again now
              {Object.keys(job.skipped).length > 0 &&
                `; skipped ${skippedText(job.skipped)}`}.{" "}
              <Link href={`${location.pathname}?recovery=${job.recovery_id}`}>
                Show them
              </Link>
            </p>
            <progress
              value={job.processed}
              max={Math.max(total, 1)}
              aria-label="Bulk retry progress"
            />
            {running && (
              <button type="button" onClick={() => void cancel()}>
                Stop retrying
              </button>
            )}
          </>
        )}
      </div>
      <Dialog
        title={preview
          ? `Retry ${preview.count.toLocaleString()}${preview.more ? "+" : ""} matching deliveries?`
          : "Retry matching deliveries?"}
        open={!!preview}
        onClose={() => {
          setPreview(null);
          focusSoon(() => buttonRef.current);
        }}
      >
        {preview && preview.count === 0
          ? (
            <p>
              No retrying or permanently failed delivery matches these filters: there is nothing to retry.
            </p>
          )
          : (
            <p>
              Every retrying or permanently failed delivery these filters match is sent again now, in batches.
              Retrying ones keep their attempts and their 24-hour window; permanently failed ones get a new
              window. Delivered ones are not sent again.
            </p>
          )}
        <div className="actions">
          {preview && preview.count > 0 && (
            <button
              type="button"
              className="primary"
              onClick={() => void confirm()}
              disabled={busy}
            >
              Retry {preview.count.toLocaleString()}
              {preview.more ? "+" : ""}
            </button>
          )}
          <button
            type="button"
            data-autofocus
            onClick={() => {
              setPreview(null);
              focusSoon(() => buttonRef.current);
            }}
          >
            Cancel
          </button>
        </div>
      </Dialog>
    </div>
  );
}
