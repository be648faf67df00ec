// Keeps the display zone (format.ts) in step with who is signed in: the organization's time zone as the
// default, the person's own choice for this browser over it.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, unwrap } from "../api/client.ts";
import { loadPersonalZone, setOrganizationZone } from "../format.ts";
import { useSession } from "../session.tsx";
import { useDisplayZone } from "../ui/Time.tsx";

/** Returns the display zone: the frame re-renders (and every page in it) when it changes. */
export function useZoneSync(): string {
  const session = useSession();
  const queries = useQueryClient();
  const userId = session.state.kind === "signed_in" ? session.state.session.user.id : null;
  const org = session.organization?.organization_id ?? null;
  // Asked once per organization (the same cache entry as the Organization page, which passes on a
  // change), not watched: a watching query in the frame asked again as a sign-out cleared the cache.
  useEffect(() => {
    if (!org) {
      setOrganizationZone(null, null);
      return;
    }
    let current = true;
    queries.fetchQuery({
      queryKey: [org, "organization"],
      queryFn: () => unwrap(api.GET("/webhooks/organization")),
    }).then(
      (o) => current && setOrganizationZone(o.time_zone, org),
      // Not answered: the browser's zone it is, rather than times that never settle.
      () => current && setOrganizationZone(null, org),
    );
    return () => {
      current = false;
    };
  }, [org, queries]);
  useEffect(() => loadPersonalZone(userId), [userId]);
  return useDisplayZone();
}
