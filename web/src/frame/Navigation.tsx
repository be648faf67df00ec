import { PAGES } from "../pages.ts";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";

/** Whether a member who is not an administrator can use the page (the others tell them to ask one). */
const forEveryMember = (p: (typeof PAGES)[number]) => p.access === "member" || p.access === "signed_in";

export function Navigation({ current }: { current: string }) {
  const { isPlatformAdmin, setNotice, organization, me } = useSession();
  // Staff see the pages they can use and one sentence about the rest, not a list of links that each
  // lead to "for administrators". Until the membership is known, everything is listed.
  const staff = organization !== null && organization.role !== "admin";
  const link = (p: (typeof PAGES)[number]) => (
    <li key={p.path}>
      <Link
        href={p.path}
        aria-current={p.path === current ? "page" : undefined}
        // A notice says what just happened; moving on to another page leaves it behind.
        onClick={() => setNotice(null)}
      >
        {p.title}
      </Link>
    </li>
  );
  const listed = PAGES.filter((p) => p.nav !== false && !p.scope && (!staff || forEveryMember(p)));
  const platform = isPlatformAdmin && (
    <>
      <p className="crumb" aria-hidden="true">Platform</p>
      <ul aria-label="Platform">
        {PAGES.filter((p) => p.scope === "platform").map(link)}
      </ul>
    </>
  );
  // A platform administrator in no organization works in the console: it is listed first.
  const consoleFirst = isPlatformAdmin && me !== null && me.memberships.length === 0;
  return (
    <nav aria-label="Settings" className="side">
      {consoleFirst && platform}
      <p className="crumb" aria-hidden="true">Settings › Integrations</p>
      <ul>{listed.map(link)}</ul>
      {staff && (
        <p className="small muted staff-note">
          Webhooks, their logs, API keys, connections, people, erasure and the audit log are for the
          organization's administrators; you are staff here.
        </p>
      )}
      {!consoleFirst && platform}
    </nav>
  );
}
