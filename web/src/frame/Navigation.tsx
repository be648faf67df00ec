import { PAGES } from "../pages.ts";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";

export function Navigation({ current }: { current: string }) {
  const { isPlatformAdmin, setNotice } = useSession();
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
  return (
    <nav aria-label="Settings" className="side">
      <p className="crumb" aria-hidden="true">Settings › Integrations</p>
      <ul>{PAGES.filter((p) => p.nav !== false && !p.scope).map(link)}</ul>
      {isPlatformAdmin && (
        <>
          <p className="crumb" aria-hidden="true">Platform</p>
          <ul aria-label="Platform">
            {PAGES.filter((p) => p.scope === "platform").map(link)}
          </ul>
        </>
      )}
    </nav>
  );
}
