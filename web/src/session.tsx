// Who is signed in, for which organization, and with which role there. Claims in the token only shape
// the interface; the API decides what anyone may do.
import type { Session } from "@supabase/auth-js";
import { useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from "react";
import { auth } from "./api/auth.ts";
import { api, type Me, onAuthProblem, unwrap } from "./api/client.ts";
import { navigate } from "./router.tsx";
import { consumeEmailLink } from "./pages/auth/emailLink.ts";

type State =
  | { kind: "loading" }
  | { kind: "signed_out" }
  | {
    kind: "signed_in";
    session: Session;
    me: Me | null;
    meError: string | null;
  };

interface SessionApi {
  state: State;
  me: Me | null;
  organization: Me["memberships"][number] | null;
  isAdmin: boolean;
  /**
   * The token's is_platform_admin claim: whether to show the platform console's link. A hint only; the
   * console's API decides by the live flags.
   */
  isPlatformAdmin: boolean;
  /** Changes whenever the organization changes: pages remount and every query key carries it. */
  orgKey: string;
  notice: string | null;
  setNotice(text: string | null): void;
  switchOrganization(organizationId: string): Promise<void>;
  signOut(message?: string): Promise<void>;
  reloadMe(): Promise<Me | null>;
}

const Ctx = createContext<SessionApi | null>(null);

/** How often the person's standing (role, membership, suspension) is asked again. */
const STANDING_POLL_MS = 15_000;

const PLATFORM_REFUSALS = new Set([
  "platform_admin_required",
  "superadmin_required",
]);

/** A claim of the access token, read for the interface only (the signature is the server's business). */
function claimOf(token: string, name: string): unknown {
  try {
    const payload = token.split(".")[1] ?? "";
    const json = new TextDecoder().decode(
      Uint8Array.from(
        atob(payload.replace(/-/g, "+").replace(/_/g, "/")),
        (ch) => ch.charCodeAt(0),
      ),
    );
    return (JSON.parse(json) as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

export function useSession(): SessionApi {
  const v = useContext(Ctx);
  if (!v) throw new Error("useSession outside SessionProvider");
  return v;
}

/** The active organization's id, for query keys: another organization's data never answers a query. */
export function useOrgKey(): string {
  return useSession().orgKey;
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queries = useQueryClient();
  const [state, setState] = useState<State>({ kind: "loading" });
  const [notice, setNotice] = useState<string | null>(null);
  const checking = useRef(false);
  const signedOutAt = useRef(0);
  // The latest state for callbacks that must not run inside a state update (they update other state).
  const current = useRef(state);
  current.current = state;

  const reloadMe = useCallback(async (): Promise<Me | null> => {
    try {
      const me = await unwrap(api.GET("/webhooks/me"));
      setState((
        s,
      ) => (s.kind === "signed_in" ? { ...s, me, meError: null } : s));
      return me;
    } catch (e) {
      setState((
        s,
      ) => (s.kind === "signed_in" ? { ...s, meError: (e as Error).message } : s));
      return null;
    }
  }, []);

  const signOut = useCallback(async (message?: string) => {
    // Requests still in flight (or asked again as the cache is cleared) answer 401 from here on: they
    // must not replace what this sign-out says with "Your session has ended".
    signedOutAt.current = Date.now();
    setNotice(message ?? null);
    await auth.signOut({ scope: "local" }).catch(() => {});
    queries.clear();
    setState({ kind: "signed_out" });
    navigate("/auth", { replace: true });
  }, [queries]);

  const switchOrganization = useCallback(async (organizationId: string) => {
    await unwrap(
      api.POST("/webhooks/me/active-organization", {
        body: { organization_id: organizationId },
      }),
    );
    const { data, error } = await auth.refreshSession();
    if (error || !data.session) {
      throw new Error(error?.message ?? "Could not refresh the session");
    }
    queries.clear();
    setState({
      kind: "signed_in",
      session: data.session,
      me: null,
      meError: null,
    });
    await reloadMe();
  }, [reloadMe, queries]);

  useEffect(() => {
    let alive = true;
    // A sign-up or password mail's link lands here first: it signs the person in (or says why not).
    consumeEmailLink().then((link) => {
      if (link.kind === "signed_in" && link.type === "recovery") {
        navigate("/auth/reset", { replace: true });
      } else if (link.kind === "signed_in") {
        setNotice("Your e-mail address is confirmed. Welcome!");
      } else if (link.kind === "failed") {
        setNotice(link.message);
        if (link.type === "recovery") {
          navigate("/auth/forgot", { replace: true });
        }
      }
      return auth.getSession();
    }).then(({ data }) => {
      if (!alive) return;
      setState(
        data.session
          ? {
            kind: "signed_in",
            session: data.session,
            me: null,
            meError: null,
          }
          : { kind: "signed_out" },
      );
    });
    const { data: sub } = auth.onAuthStateChange((event, session) => {
      // The first answer is getSession's (above), given once an e-mail link, if any, has been used:
      // the client's own first event can come before that and would say "signed out".
      if (event === "INITIAL_SESSION") return;
      if (event === "SIGNED_OUT" || !session) {
        // A refresh that failed (expired or revoked session) ends here too: back to /auth. Decided from
        // the state as it is, outside any state update (updating the notice or the address inside one
        // would update other components while this one renders).
        if (current.current.kind === "signed_in") {
          setNotice((n) => n ?? "Your session has ended. Please sign in again.");
          navigate("/auth", { replace: true });
        }
        queries.clear();
        setState({ kind: "signed_out" });
        return;
      }
      setState((s) =>
        s.kind === "signed_in" ? { ...s, session } : { kind: "signed_in", session, me: null, meError: null }
      );
    });
    return () => {
      alive = false;
      sub.subscription.unsubscribe();
    };
  }, [queries]);

  const userId = state.kind === "signed_in" ? state.session.user.id : null;
  useEffect(() => {
    if (userId) void reloadMe();
  }, [userId, reloadMe]);

  // What changed in the person's standing between two answers of /me, and what follows: a role given or
  // taken (the navigation and pages follow, said in a notice), the organization suspended (with the
  // platform's reason for its admins) or resumed, the membership gone (to another organization, or
  // signed out).
  const followStanding = useCallback(async (before: Me | null, me: Me | null) => {
    if (!me || !before) return;
    const was = before.memberships.find((m) => m.organization_id === before.active_organization_id);
    if (me.active_organization_id) {
      const now = me.memberships.find((m) => m.organization_id === me.active_organization_id)!;
      if (!before.active_organization_id) {
        const held = before.memberships.find((m) => m.organization_id === now.organization_id);
        if (held?.suspended) {
          setNotice(`${now.organization_name} has been resumed by the platform's administrators.`);
          await queries.invalidateQueries();
        }
      } else if (was && was.organization_id === now.organization_id && was.role !== now.role) {
        setNotice(
          now.role === "admin"
            ? `You are now an administrator of ${now.organization_name}.`
            : `You are now staff of ${now.organization_name}: its settings are for its administrators.`,
        );
        await queries.invalidateQueries();
      }
      return;
    }
    if (!was) {
      // Without an organization while the one the person was in stayed suspended: resumed now, it is
      // theirs again (the session is refreshed for it).
      const resumed = me.memberships.find((m) =>
        !m.suspended && before.memberships.some((b) => b.organization_id === m.organization_id && b.suspended)
      );
      if (resumed && !before.active_organization_id) {
        setNotice(`${resumed.organization_name} has been resumed by the platform's administrators.`);
        await switchOrganization(resumed.organization_id);
      }
      return;
    }
    const name = was.organization_name;
    const still = me.memberships.find((m) => m.organization_id === was.organization_id);
    const reason = still?.suspension_reason;
    const next = me.memberships.find((m) => !m.suspended);
    const why = still?.suspended
      ? `${name} has been suspended by the platform's administrators${
        reason ? `. Their reason: “${reason}”` : ""
      }.`
      : `You are no longer a member of ${name}.`;
    if (next) {
      setNotice(`${why} You are now in ${next.organization_name}.`);
      await switchOrganization(next.organization_id);
    } else if (still?.suspended) {
      // Still a member: stay signed in; the page says the organization is suspended.
      setNotice(why);
    } else {
      await signOut(
        `You are no longer a member of ${name}, so you have been signed out.`,
      );
    }
  }, [queries, signOut, switchOrganization]);

  /** Asks who the person is now and follows what changed (one check at a time). */
  const checkStanding = useCallback(async () => {
    if (checking.current) return;
    checking.current = true;
    try {
      const s = current.current;
      const before = s.kind === "signed_in" ? s.me : null;
      await followStanding(before, await reloadMe());
    } finally {
      checking.current = false;
    }
  }, [followStanding, reloadMe]);

  // 401: the session is gone. 403: maybe the role, the membership or the organization's standing changed
  // (suspended, not_a_member, admin_required…): ask the API who we are now. (A refusal of the platform
  // console says nothing about memberships.)
  useEffect(() =>
    onAuthProblem(async (err) => {
      if (err.status === 401) {
        if (Date.now() - signedOutAt.current < 5_000) return;
        await signOut("Your session has ended. Please sign in again.");
        return;
      }
      if (PLATFORM_REFUSALS.has(err.code)) return;
      await checkStanding();
    }), [signOut, checkStanding]);

  // And every 15 s while the page is shown: a change made elsewhere (a promotion, a resumption) shows
  // without a reload, even on a page that asks the API nothing.
  useEffect(() => {
    if (!userId) return;
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") void checkStanding();
    }, STANDING_POLL_MS);
    return () => clearInterval(timer);
  }, [userId, checkStanding]);

  const me = state.kind === "signed_in" ? state.me : null;
  const organization = me?.memberships.find((m) => m.organization_id === me.active_organization_id) ?? null;
  const value: SessionApi = {
    state,
    me,
    organization,
    isAdmin: organization?.role === "admin",
    isPlatformAdmin: state.kind === "signed_in" &&
      claimOf(state.session.access_token, "is_platform_admin") === true,
    orgKey: organization?.organization_id ?? "none",
    notice,
    setNotice,
    switchOrganization,
    signOut,
    reloadMe,
  };
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
