// After "Send test event", the card shows how the attempt went within a second or two, not at the list's
// next 15-second refresh: it asks again every second until the endpoint's last attempt changes, for 15 s
// at most. Compared with the last attempt the server reported (not the browser's clock, which may differ).
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { Endpoint } from "../../api/client.ts";
import { useOrgKey } from "../../session.tsx";

const EVERY_MS = 1_000;
const AT_MOST_MS = 15_000;

/** Returns `watch()`: call it once a delivery to `e` is on its way. */
export function useAttemptWatch(e: Endpoint): () => void {
  const queries = useQueryClient();
  const org = useOrgKey();
  // The last attempt as it was when the delivery was sent; undefined while nothing is awaited.
  const [before, setBefore] = useState<string | null | undefined>(undefined);
  const last = e.health.last_attempt_at;
  useEffect(() => {
    if (before === undefined) return;
    if (last !== before) {
      setBefore(undefined);
      return;
    }
    const started = Date.now();
    const timer = setInterval(() => {
      if (Date.now() - started > AT_MOST_MS) {
        setBefore(undefined);
        return;
      }
      void queries.invalidateQueries({ queryKey: [org, "endpoints"] });
      void queries.invalidateQueries({ queryKey: [org, "activity", e.id] });
    }, EVERY_MS);
    return () => clearInterval(timer);
  }, [before, last, org, e.id, queries]);
  return () => setBefore(last);
}
