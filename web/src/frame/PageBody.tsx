// The current page, or why it cannot be shown: unknown path, organizations still loading, no
// organization, or not an administrator of it.
import { useEffect } from "react";
import { HOME, type PageEntry, PLATFORM_CONSOLE_PATH } from "../pages.ts";
import { Link } from "../router.tsx";
import { NEW_ORGANIZATION_PATH } from "../pages/organization/paths.ts";
import { useSession } from "../session.tsx";
import { ChurchAppNote } from "../ui/ChurchAppNote.tsx";
import { ErrorBox } from "../ui/ErrorBox.tsx";
import { Loading } from "../ui/Loading.tsx";

export function PageBody({ page }: { page: PageEntry | undefined }) {
  const session = useSession();
  const { state } = session;
  const title = page?.title ?? "Page not found";
  useEffect(() => {
    document.title = `${title} · Settings`;
  }, [title]);

  if (!page) {
    return (
      <>
        <h1>Page not found</h1>
        <p>
          <Link href={HOME}>Go to Webhooks</Link>
        </p>
      </>
    );
  }
  if (state.kind !== "signed_in") return null;
  // The platform console belongs to no organization: its API decides who may use it.
  if (page.scope === "platform") {
    if (!session.isPlatformAdmin) {
      return (
        <>
          <h1>{title}</h1>
          <div className="empty" role="note">
            <h2>The platform console is for the platform's administrators</h2>
            <p>
              Your account is not a platform administrator. If it has just been made one, sign out and in
              again.
            </p>
          </div>
        </>
      );
    }
    const { Page } = page;
    return <Page />;
  }
  if (state.meError && !session.me) {
    return (
      <ErrorBox
        error={`Could not load your organizations: ${state.meError}`}
        retry={session.reloadMe}
      />
    );
  }
  if (!session.me) return <Loading what="your organizations" />;
  const { Page } = page;
  if (page.access === "signed_in") return <Page key={session.orgKey} />;
  if (!session.organization) {
    const suspended = session.me.memberships.filter((m) => m.suspended);
    return (
      <>
        <h1>{title}</h1>
        {suspended.length > 0 && (
          <div className="empty" role="note">
            <h2>
              {suspended.length === 1
                ? `${suspended[0]!.organization_name} is suspended`
                : "Some of your organizations are suspended"}
            </h2>
            <p>
              The platform's administrators suspended{" "}
              {suspended.map((m) => m.organization_name).join(", ")}: nothing can be done for{" "}
              {suspended.length === 1 ? "it" : "them"} until they resume{" "}
              {suspended.length === 1 ? "it" : "them"}. Payments and messages sent meanwhile are kept.
            </p>
            {/* The reason was written for the organization's admins; staff are told who can read it. */}
            {suspended.map((m) =>
              m.suspension_reason && (
                <p key={m.organization_id}>
                  {suspended.length === 1 ? "Their reason" : `Their reason for ${m.organization_name}`}:{" "}
                  <q>{m.suspension_reason}</q>
                </p>
              )
            )}
            <p>
              {suspended.some((m) => m.suspension_reason)
                ? "Questions about it go to the platform's support."
                : "Its administrators can see why; ask one of them, or the platform's support."}
            </p>
          </div>
        )}
        {/* A platform administrator in no organization came for the console: it comes first. */}
        {session.isPlatformAdmin && !session.me.memberships.length && (
          <div className="empty" role="note">
            <h2>The platform console</h2>
            <p>
              You are one of the platform's administrators: the console lists every organization, its health
              and its suspensions.
            </p>
            <p>
              <Link href={PLATFORM_CONSOLE_PATH} className="button primary">
                Open the platform console
              </Link>
            </p>
          </div>
        )}
        {(suspended.length === 0 ||
          suspended.length < session.me.memberships.length) && (
          <div className="empty">
            <h2>You are not in an organization</h2>
            <p>
              {session.me.memberships.length
                ? "Choose an organization in the header to continue."
                : "Your account is not a member of any organization yet. Start one for your church, or open " +
                  "the invitation link an administrator of your church sent you."}
            </p>
            {!session.me.memberships.length && (
              <p>
                <Link href={NEW_ORGANIZATION_PATH} className="button primary">
                  Create an organization
                </Link>
              </p>
            )}
          </div>
        )}
      </>
    );
  }
  if (!session.isAdmin && page.access !== "member" && page.forAdmins) {
    return (
      <>
        <h1>{title}</h1>
        <div className="empty" role="note">
          <h2>{page.forAdmins.heading}</h2>
          <p>
            You are signed in to {session.organization.organization_name} as staff. {page.forAdmins.text}
          </p>
          <ChurchAppNote />
        </div>
      </>
    );
  }
  if (!session.isAdmin && page.access !== "member") {
    return (
      <>
        <h1>{title}</h1>
        <div className="empty" role="note">
          <h2>Webhook settings are for administrators</h2>
          <p>
            You are signed in to {session.organization.organization_name}{" "}
            as staff. Webhooks, their logs, API keys and payment webhooks are managed by the organization's
            administrators; ask one of them if something needs changing.
          </p>
          <ChurchAppNote />
        </div>
      </>
    );
  }
  return <Page key={session.orgKey} />;
}
