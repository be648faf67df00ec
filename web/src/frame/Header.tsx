// The organization, the switcher for people in several, who is signed in, and sign-out.
import { useId, useState } from "react";
import { PAGES } from "../pages.ts";
import { setQuery } from "../router.tsx";
import { useSession } from "../session.tsx";

export function Header() {
  const session = useSession();
  const me = session.me;
  const selectId = useId();
  const [switching, setSwitching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");

  async function switchTo(id: string) {
    const name = me?.memberships.find((m) => m.organization_id === id)
      ?.organization_name;
    // What the address names of this organization (an endpoint, a delivery) means nothing in the next.
    const page = PAGES.find((p) => p.path === location.pathname);
    if (page?.orgParams) {
      setQuery(Object.fromEntries(page.orgParams.map((p) => [p, null])));
    }
    setSwitching(true);
    setError(null);
    setStatus(`Switching to ${name}…`);
    try {
      await session.switchOrganization(id);
      setStatus(`Now working in ${name}.`);
    } catch (err) {
      setStatus("");
      setError(`Could not switch organization: ${(err as Error).message}`);
    } finally {
      setSwitching(false);
    }
  }

  return (
    <header className="top">
      <div className="brand">Church settings</div>
      <div className="who">
        {me && me.memberships.length > 1 && (
          <span className="org-switch">
            <label htmlFor={selectId}>Organization</label>
            <select
              id={selectId}
              value={me.active_organization_id ?? ""}
              disabled={switching}
              onChange={(e) => void switchTo(e.currentTarget.value)}
            >
              {!me.active_organization_id && <option value="">Choose…</option>}
              {me.memberships.map((m) => (
                <option
                  key={m.organization_id}
                  value={m.organization_id}
                  disabled={m.suspended}
                >
                  {m.organization_name} ({m.role}
                  {m.suspended ? ", suspended" : ""})
                </option>
              ))}
            </select>
          </span>
        )}
        {me && me.memberships.length === 1 && (
          <span className="org-name">
            {me.memberships[0]!.organization_name}
            {me.memberships[0]!.suspended && " (suspended)"}
          </span>
        )}
        <span className="email">
          {session.state.kind === "signed_in" ? session.state.session.user.email : ""}
        </span>
        <button
          type="button"
          onClick={() => session.signOut("You have signed out.")}
        >
          Sign out
        </button>
      </div>
      <p className="sr-only" role="status">{status}</p>
      {error && <p className="error" role="alert">{error}</p>}
    </header>
  );
}
