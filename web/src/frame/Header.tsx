// The organization, the switcher for people in several, who is signed in, and sign-out. The switcher
// changes organization only when asked to (its Switch button), never while someone moves through the
// list with the arrow keys, says "Working in <name>" where everyone can see it, and gives focus back to
// the list afterwards.
import { type FormEvent, useId, useRef, useState } from "react";
import type { Me } from "../api/client.ts";
import { PAGES } from "../pages.ts";
import { NEW_ORGANIZATION_PATH } from "../pages/organization/paths.ts";
import { Link, setQuery } from "../router.tsx";
import { useSession } from "../session.tsx";

/** A suspension's reason as the switcher's option says it (the notice said on suspension has all of it). */
const clip = (text: string) => text.length > 60 ? `${text.slice(0, 59)}…` : text;

export function Header() {
  const session = useSession();
  // While a switch reloads who the person is, the last answer keeps the switcher in place (so focus
  // has somewhere to stay), disabled.
  const last = useRef<Me | null>(null);
  if (session.me) last.current = session.me;
  const me = session.me ?? last.current;
  const selectId = useId();
  const select = useRef<HTMLSelectElement>(null);
  const [choice, setChoice] = useState<string | null>(null);
  const [switching, setSwitching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const active = me?.active_organization_id ?? "";
  const chosen = choice ?? active;
  const current = session.me ? session.organization : null;

  async function switchTo(e: FormEvent) {
    e.preventDefault();
    if (switching || !chosen || chosen === active) return;
    // What the address names of this organization (an endpoint, a delivery) means nothing in the next.
    const page = PAGES.find((p) => p.path === location.pathname);
    if (page?.orgParams) {
      setQuery(Object.fromEntries(page.orgParams.map((p) => [p, null])));
    }
    setSwitching(true);
    setError(null);
    // What was said about the previous organization ("… is ready") is not about the next one.
    session.setNotice(null);
    try {
      await session.switchOrganization(chosen);
      setChoice(null);
    } catch (err) {
      setError(`Could not switch organization: ${(err as Error).message}`);
    } finally {
      setSwitching(false);
      select.current?.focus();
    }
  }

  return (
    <header className="top">
      <div className="brand">Church settings</div>
      <div className="who">
        <p className="working" role="status">
          {switching ? "Switching…" : current
            ? (
              <>
                Working in <strong title={current.organization_name}>{current.organization_name}</strong>
              </>
            )
            : ""}
        </p>
        {me && me.memberships.length > 1 && (
          <form className="org-switch" onSubmit={switchTo}>
            <label htmlFor={selectId}>Organization</label>
            <select
              id={selectId}
              ref={select}
              value={chosen}
              aria-disabled={switching || undefined}
              onChange={(e) => setChoice(e.currentTarget.value)}
            >
              {!active && <option value="">Choose…</option>}
              {me.memberships.map((m) => (
                <option
                  key={m.organization_id}
                  value={m.organization_id}
                  disabled={m.suspended}
                >
                  {m.organization_name} ({m.role}
                  {m.suspended
                    ? `, suspended${m.suspension_reason ? `: ${clip(m.suspension_reason)}` : ""}`
                    : ""})
                </option>
              ))}
            </select>
            <button type="submit" disabled={!chosen || chosen === active}>
              Switch
            </button>
          </form>
        )}
        <Link href={NEW_ORGANIZATION_PATH} className="new-org">
          New organization
        </Link>
        <span
          className="email"
          title={session.state.kind === "signed_in" ? session.state.session.user.email : undefined}
        >
          {session.state.kind === "signed_in" ? session.state.session.user.email : ""}
        </span>
        <Link href="/auth/reset" className="change-password">
          Change password
        </Link>
        <button
          type="button"
          onClick={() => session.signOut("You have signed out.")}
        >
          Sign out
        </button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
    </header>
  );
}
