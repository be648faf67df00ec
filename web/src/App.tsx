// The page frame: header with the organization switcher, the Settings > Integrations navigation, and
// the page for the current path. Signed-out visitors go to /auth.
import { useEffect, useId, useRef, useState } from "react";
import { configured } from "./config.ts";
import { AuthPage } from "./pages/AuthPage.tsx";
import { ACCEPT_INVITATION_PATH, AcceptInvitationPage } from "./pages/AcceptInvitationPage.tsx";
import { ApiKeysPage } from "./pages/ApiKeysPage.tsx";
import { PaymentWebhooksPage } from "./pages/PaymentWebhooksPage.tsx";
import { WebhookLogsPage } from "./pages/WebhookLogsPage.tsx";
import { WebhooksPage } from "./pages/WebhooksPage.tsx";
import { Link, navigate, useLocation } from "./router.tsx";
import { useSession } from "./session.tsx";
import { ErrorBox, Loading } from "./ui/parts.tsx";

export const PAGES = [
  {
    path: "/settings/integrations/webhooks",
    title: "Webhooks",
    Page: WebhooksPage,
  },
  {
    path: "/settings/integrations/webhook-logs",
    title: "Webhook Logs",
    Page: WebhookLogsPage,
  },
  {
    path: "/settings/integrations/api-keys",
    title: "API keys",
    Page: ApiKeysPage,
  },
  {
    path: "/settings/integrations/payment-webhooks",
    title: "Payment webhooks",
    Page: PaymentWebhooksPage,
  },
] as const;

export function App() {
  const loc = useLocation();
  const session = useSession();
  const { state } = session;

  // After moving to another page, screen readers and keyboards start at its content, not at the link.
  const shownPath = useRef(loc.pathname);
  useEffect(() => {
    if (shownPath.current === loc.pathname) return;
    shownPath.current = loc.pathname;
    document.getElementById("main")?.focus();
  }, [loc.pathname]);

  useEffect(() => {
    // An invitation link keeps its address (the token is in it) while its invitee signs in.
    if (state.kind === "signed_out" && loc.pathname === ACCEPT_INVITATION_PATH) {
      session.setNotice("Sign in to see and accept your invitation.");
    } else if (state.kind === "signed_out" && loc.pathname !== "/auth") {
      const next = loc.pathname === "/" ? "" : `?next=${encodeURIComponent(loc.pathname + loc.search)}`;
      navigate(`/auth${next}`, { replace: true });
    }
    if (
      state.kind === "signed_in" &&
      (loc.pathname === "/auth" || loc.pathname === "/")
    ) {
      const next = loc.searchParams.get("next");
      navigate(next && next.startsWith("/settings/") ? next : PAGES[0].path, {
        replace: true,
      });
    }
  }, [state.kind, loc.pathname, loc.search]);

  if (!configured) {
    return (
      <main className="narrow">
        <h1>Settings are not configured</h1>
        <p>
          This build has no Supabase URL or anon key. Build it with <code>VITE_SUPABASE_URL</code> and{" "}
          <code>VITE_SUPABASE_ANON_KEY</code> set (see the README).
        </p>
      </main>
    );
  }
  if (state.kind === "loading") {
    return (
      <main className="narrow">
        <Loading what="your session" />
      </main>
    );
  }
  if (state.kind === "signed_out" || loc.pathname === "/auth") {
    return <AuthPage />;
  }
  if (loc.pathname === ACCEPT_INVITATION_PATH) return <AcceptInvitationPage />;

  const page = PAGES.find((p) => p.path === loc.pathname);
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <Header />
      <div className="layout">
        <nav aria-label="Settings" className="side">
          <p className="crumb" aria-hidden="true">Settings › Integrations</p>
          <ul>
            {PAGES.map((p) => (
              <li key={p.path}>
                <Link
                  href={p.path}
                  aria-current={p.path === loc.pathname ? "page" : undefined}
                >
                  {p.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {session.notice && (
            <div className="notice" role="status">
              <p>{session.notice}</p>
              <button type="button" onClick={() => session.setNotice(null)}>
                Dismiss
              </button>
            </div>
          )}
          <Body page={page} />
        </main>
      </div>
    </>
  );
}

function Body({ page }: { page: (typeof PAGES)[number] | undefined }) {
  const session = useSession();
  const { state } = session;
  const headingRef = useRef<HTMLHeadingElement>(null);
  const title = page?.title ?? "Page not found";
  useEffect(() => {
    document.title = `${title} · Settings`;
  }, [title]);

  if (!page) {
    return (
      <>
        <h1>Page not found</h1>
        <p>
          <Link href={PAGES[0].path}>Go to Webhooks</Link>
        </p>
      </>
    );
  }
  if (state.kind !== "signed_in") return null;
  if (state.meError && !session.me) {
    return (
      <ErrorBox
        error={`Could not load your organizations: ${state.meError}`}
        retry={session.reloadMe}
      />
    );
  }
  if (!session.me) return <Loading what="your organizations" />;
  if (!session.organization) {
    return (
      <>
        <h1 ref={headingRef}>{title}</h1>
        <div className="empty">
          <h2>You are not in an organization</h2>
          <p>
            {session.me.memberships.length
              ? "Choose an organization in the header to continue."
              : "Your account is not a member of any organization. Ask an administrator of your church to add you."}
          </p>
        </div>
      </>
    );
  }
  if (!session.isAdmin) {
    return (
      <>
        <h1 ref={headingRef}>{title}</h1>
        <div className="empty" role="note">
          <h2>Webhook settings are for administrators</h2>
          <p>
            You are signed in to {session.organization.organization_name}{" "}
            as staff. Webhooks, their logs, API keys and payment webhooks are managed by the organization's
            administrators; ask one of them if something needs changing.
          </p>
        </div>
      </>
    );
  }
  const { Page } = page;
  return <Page key={session.orgKey} />;
}

function Header() {
  const session = useSession();
  const me = session.me;
  const selectId = useId();
  const [switching, setSwitching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState("");
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
              onChange={async (e) => {
                const id = e.target.value;
                const name = me.memberships.find((m) => m.organization_id === id)?.organization_name;
                setSwitching(true);
                setError(null);
                setStatus(`Switching to ${name}…`);
                try {
                  await session.switchOrganization(id);
                  setStatus(`Now working in ${name}.`);
                } catch (err) {
                  setStatus("");
                  setError(
                    `Could not switch organization: ${(err as Error).message}`,
                  );
                } finally {
                  setSwitching(false);
                }
              }}
            >
              {!me.active_organization_id && <option value="">Choose…</option>}
              {me.memberships.map((m) => (
                <option key={m.organization_id} value={m.organization_id}>
                  {m.organization_name} ({m.role})
                </option>
              ))}
            </select>
          </span>
        )}
        {me && me.memberships.length === 1 && (
          <span className="org-name">
            {me.memberships[0]!.organization_name}
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
