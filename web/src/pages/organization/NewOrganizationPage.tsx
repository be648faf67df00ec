// Settings > New organization: anyone signed in starts an organization for their church and becomes its
// administrator; then the session switches to it. Reached from the header and from the empty state of a
// person who belongs to none.
import { api, unwrap } from "../../api/client.ts";
import { HOME } from "../../pages.ts";
import { navigate } from "../../router.tsx";
import { useSession } from "../../session.tsx";
import { browserTimeZone } from "./OrganizationFields.tsx";
import { OrganizationForm } from "./OrganizationForm.tsx";

export function NewOrganizationPage() {
  const session = useSession();
  const others = session.me?.memberships.length ?? 0;
  return (
    <>
      <h1>New organization</h1>
      <p className="lead">
        Start an organization for your church. You become its administrator: you can then connect your payment
        and WhatsApp providers, add webhooks, and invite the people who work with you.
        {others > 0 && " Your other organizations stay as they are; the header switches between them."}
      </p>
      <OrganizationForm
        heading="Your church"
        initial={{ name: "", time_zone: browserTimeZone(), contact_email: "" }}
        submit="Create organization"
        busy="Creating…"
        noName="Give your organization a name."
        onSubmit={async (v) => {
          const created = await unwrap(api.POST("/webhooks/organizations", {
            body: {
              name: v.name.trim(),
              time_zone: v.time_zone,
              ...(v.contact_email.trim() ? { contact_email: v.contact_email.trim() } : {}),
            },
          }));
          await session.switchOrganization(created.id);
          session.setNotice(`${created.name} is ready, and you are its administrator.`);
          navigate(HOME);
        }}
      />
    </>
  );
}
