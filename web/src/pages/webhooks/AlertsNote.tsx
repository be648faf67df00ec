// On every endpoint's card: when its failures are reported and disable it, and where the reports go (a
// mail to the admins, and the organization's alert endpoints: those subscribed to webhook.endpoint.*).
import { useQuery } from "@tanstack/react-query";
import { api, type Endpoint, unwrap } from "../../api/client.ts";
import { useOrgKey } from "../../session.tsx";

/** "1 hour", "5 days": a threshold in words. */
export function duration(seconds: number): string {
  const [n, unit] = seconds % 86400 === 0
    ? [seconds / 86400, "day"]
    : seconds % 3600 === 0
    ? [seconds / 3600, "hour"]
    : [Math.round(seconds / 60), "minute"];
  return `${n} ${unit}${n === 1 ? "" : "s"}`;
}

/** The organization's failure alert settings, one request for every card. */
export function useAlerts() {
  const org = useOrgKey();
  return useQuery({
    queryKey: [org, "alerts"],
    queryFn: () => unwrap(api.GET("/webhooks/alerts")),
  });
}

export function AlertsNote({ endpoint: e }: { endpoint: Endpoint }) {
  const alerts = useAlerts().data;
  if (!alerts) return null;
  const others = alerts.endpoints.filter((a) => a.id !== e.id && a.enabled);
  const self = alerts.endpoints.find((a) => a.id === e.id);
  return (
    <p className="muted small alerts-note">
      <strong>Failure alerts:</strong> after {duration(alerts.failing_after_seconds)}{" "}
      of failed attempts, a mail to the admins
      {others.length > 0
        ? (
          <>
            {" "}and a message to {others.map((a, i) => (
              <span key={a.id}>
                {i > 0 && ", "}
                <code>{a.url}</code>
              </span>
            ))}
          </>
        )
        : " (choose an endpoint for alerts too: subscribe it to webhook.endpoint.failing)"}
      ; disabled after {duration(alerts.disable_after_seconds)}.
      {self && " This endpoint receives the alerts about the others."}
    </p>
  );
}
