// After "Send test event", the card shows how the attempt went within a second or two, not at the list's
// next 15-second refresh: it asks again every second until the endpoint's last attempt changes, for 15 s
// at most. Compared with the last attempt the server reported (not the browser's clock, which may differ),
// in the answer the card's tiles and chart show.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useOrgKey } from "../../session.tsx";

const EVERY_MS = 1_000;
const AT_MOST_MS = 15_000;

/**
 * Returns `watch()`: call it once a delivery to the endpoint is on its way. `last`: its last attempt as
 * the card shows it (undefined while that is loading).
 */
export function useAttemptWatch(endpointId: string, last: string | null | undefined): () => void {
  const queries = useQueryClient();
  const org = useOrgKey();
  // The last attempt as it was when the delivery was sent; undefined while nothing is awaited.
  const [before, setBefore] = useState<string | null | undefined>(undefined);
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
      void queries.invalidateQueries({ queryKey: [org, "activity", endpointId] });
    }, EVERY_MS);
    return () => clearInterval(timer);
  }, [before, last, org, endpointId, queries]);
  return () => setBefore(last ?? null);
}
