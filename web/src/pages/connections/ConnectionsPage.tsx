// Settings > Integrations > Connections: what an administrator gives the checkout provider, the
// card-payment provider and the WhatsApp gateway so they can reach this organization, and whether they
// do. Secrets are write-only here: the page shows whether one is set and its last four characters.
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { PaymentProviderCard } from "./PaymentProviderCard.tsx";
import { WhatsAppSection } from "./WhatsAppSection.tsx";
import "./ConnectionsPage.css";

export function ConnectionsPage() {
  useTick();
  const org = useOrgKey();
  const overview = useQuery({
    queryKey: [org, "connections"],
    queryFn: () => unwrap(api.GET("/webhooks/connections")),
    refetchOnMount: "always",
  });
  const data = overview.data;
  return (
    <>
      <h1>Connections</h1>
      <p className="lead">
        Connect your payment providers and your WhatsApp number to this organization: give each one the
        address below and the secret it signs with. Secrets are never shown again once saved; you see only
        whether one is set and its last four characters.
      </p>
      {overview.error && (
        <ErrorBox
          error={`Could not load the connections: ${errorText(overview.error)}`}
          retry={() => void overview.refetch()}
        />
      )}
      {overview.isPending && <Loading what="the connections" />}
      {data && (
        <>
          <PaymentProviderCard connection={data.checkout} />
          <PaymentProviderCard connection={data.payments} />
          <WhatsAppSection whatsapp={data.whatsapp} />
        </>
      )}
    </>
  );
}
