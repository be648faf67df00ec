import { PAGES } from "../pages.ts";
import { Link } from "../router.tsx";

export function Navigation({ current }: { current: string }) {
  return (
    <nav aria-label="Settings" className="side">
      <p className="crumb" aria-hidden="true">Settings › Integrations</p>
      <ul>
        {PAGES.filter((p) => p.nav !== false).map((p) => (
          <li key={p.path}>
            <Link
              href={p.path}
              aria-current={p.path === current ? "page" : undefined}
            >
              {p.title}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
