// Keeps the display zone (format.ts) in step with who is signed in: the organization's time zone as the
// default, the person's own choice for this browser over it.
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, unwrap } from "../api/client.ts";
import { loadPersonalZone, setOrganizationZone } from "../format.ts";
import { useSession } from "../session.tsx";
import { useDisplayZone } from "../ui/Time.tsx";

/** Returns the display zone: the frame re-renders (and every page in it) when it changes. */
export function useZoneSync(): string {
  const session = useSession();
  const userId = session.state.kind === "signed_in" ? session.state.session.user.id : null;
  const org = session.organization?.organization_id ?? null;
  // The same query (and key) as the Organization page: one request serves both.
  const current = useQuery({
    queryKey: [org ?? "none", "organization"],
    queryFn: () => unwrap(api.GET("/webhooks/organization")),
    enabled: org !== null,
  });
  const zone = org ? current.data?.time_zone ?? null : null;
  useEffect(() => setOrganizationZone(zone), [zone]);
  useEffect(() => loadPersonalZone(userId), [userId]);
  return useDisplayZone();
}
