// Settings > Organization: the church's name, time zone and contact address. Its administrators change
// them; staff see them. A new name shows in the header at once.
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { setOrganizationZone } from "../../format.ts";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey, useSession } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { ChurchAppNote } from "../../ui/ChurchAppNote.tsx";
import { Time } from "../../ui/Time.tsx";
import { canonicalZone, zoneLabel } from "../../timeZones.ts";
import { DisplayZoneForm } from "./DisplayZoneForm.tsx";
import { OrganizationForm } from "./OrganizationForm.tsx";

export function OrganizationPage() {
  const org = useOrgKey();
  const session = useSession();
  const current = useQuery({
    queryKey: [org, "organization"],
    queryFn: () => unwrap(api.GET("/webhooks/organization")),
  });
  // A zone saved here (or changed by another admin) is the one every time is shown in from now on.
  const zone = current.data?.time_zone;
  useEffect(() => {
    if (zone) setOrganizationZone(zone);
  }, [zone]);
  if (current.error) {
    return (
      <>
        <h1>Organization</h1>
        <ErrorBox
          error={`Could not load the organization: ${errorText(current.error)}`}
          retry={() => void current.refetch()}
        />
      </>
    );
  }
  if (!current.data) {
    return (
      <>
        <h1>Organization</h1>
        <Loading what="the organization" />
      </>
    );
  }
  const o = current.data;
  if (o.role !== "admin") {
    return (
      <>
        <h1>Organization</h1>
        <p className="lead">
          Its administrators change these; ask one of them if something is wrong.
        </p>
        <ChurchAppNote />
        <dl className="panel facts">
          <div>
            <dt>Name</dt>
            <dd>{o.name}</dd>
          </div>
          <div>
            <dt>Time zone</dt>
            <dd>{zoneLabel(canonicalZone(o.time_zone))}</dd>
          </div>
          <div>
            <dt>Contact e-mail</dt>
            <dd>{o.contact_email ?? "None"}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>
              <Time iso={o.created_at} />
            </dd>
          </div>
        </dl>
        <DisplayZoneForm />
      </>
    );
  }
  return (
    <>
      <h1>Organization</h1>
      <p className="lead">How your church is named and reached, and the time zone its times are shown in.</p>
      <OrganizationForm
        heading="Details"
        initial={{
          name: o.name,
          time_zone: canonicalZone(o.time_zone),
          contact_email: o.contact_email ?? "",
        }}
        submit="Save changes"
        busy="Saving…"
        noName="The organization needs a name."
        onSubmit={async (v) => {
          const saved = await unwrap(api.PATCH("/webhooks/organization", {
            body: {
              name: v.name.trim(),
              time_zone: v.time_zone,
              contact_email: v.contact_email.trim() || null,
            },
          }));
          await current.refetch();
          await session.reloadMe();
          return `Saved. ${saved.name}'s settings are up to date.`;
        }}
      />
      <DisplayZoneForm />
    </>
  );
}
