// The page frame: header with the organization switcher, the Settings > Integrations navigation, and
// the page for the current path. Signed-out visitors go to /auth.
import { useEffect, useRef } from "react";
import { configured } from "../config.ts";
import { AuthPage, isAuthPath } from "../pages/auth/AuthPage.tsx";
import { ResetPasswordPage } from "../pages/auth/ResetPasswordPage.tsx";
import { ACCEPT_INVITATION_PATH, AcceptInvitationPage } from "../pages/invitations/AcceptInvitationPage.tsx";
import { HOME, PAGES } from "../pages.ts";
import { navigate, useLocation } from "../router.tsx";
import { useSession } from "../session.tsx";
import { Loading } from "../ui/Loading.tsx";
import { Header } from "./Header.tsx";
import { Navigation } from "./Navigation.tsx";
import { PageBody } from "./PageBody.tsx";
import { useZoneSync } from "./useZoneSync.ts";
import "./App.css";

const RESET_PATH = "/auth/reset";

export function App() {
  const loc = useLocation();
  const session = useSession();
  const { state } = session;
  useZoneSync();

  // After moving to another page, screen readers and keyboards start at its content, not at the link.
  const shownPath = useRef(loc.pathname);
  useEffect(() => {
    if (shownPath.current === loc.pathname) return;
    shownPath.current = loc.pathname;
    document.getElementById("main")?.focus();
  }, [loc.pathname]);

  useEffect(() => {
    // An invitation link keeps its address (the token is in it) while its invitee signs in or signs up.
    if (state.kind === "signed_out" && loc.pathname === RESET_PATH) {
      navigate("/auth/forgot", { replace: true });
    } else if (
      state.kind === "signed_out" && !isAuthPath(loc.pathname) && loc.pathname !== ACCEPT_INVITATION_PATH
    ) {
      const next = loc.pathname === "/" ? "" : `?next=${encodeURIComponent(loc.pathname + loc.search)}`;
      navigate(`/auth${next}`, { replace: true });
    }
    if (
      state.kind === "signed_in" &&
      ((isAuthPath(loc.pathname) && loc.pathname !== RESET_PATH) || loc.pathname === "/")
    ) {
      const next = loc.searchParams.get("next");
      navigate(next && next.startsWith("/settings/") ? next : HOME, {
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
  if (state.kind === "signed_out" && loc.pathname === ACCEPT_INVITATION_PATH) {
    return <AuthPage invitation />;
  }
  if (state.kind === "signed_out" || (isAuthPath(loc.pathname) && loc.pathname !== RESET_PATH)) {
    return <AuthPage />;
  }
  if (loc.pathname === RESET_PATH) return <ResetPasswordPage />;
  if (loc.pathname === ACCEPT_INVITATION_PATH) return <AcceptInvitationPage />;

  const page = PAGES.find((p) => p.path === loc.pathname);
  return (
    <>
      <a className="skip" href="#main">Skip to content</a>
      <Header />
      <div className="layout">
        <Navigation current={loc.pathname} />
        <main id="main" tabIndex={-1}>
          {session.notice && (
            <div className="notice" role="status">
              <p>{session.notice}</p>
              <button type="button" onClick={() => session.setNotice(null)}>
                Dismiss
              </button>
            </div>
          )}
          <PageBody page={page} />
        </main>
      </div>
    </>
  );
}
