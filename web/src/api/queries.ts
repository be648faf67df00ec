// Data loading and caching (TanStack Query): one client for the app, and the queries several pages
// share. Every key starts with the active organization's id, so a switch can never show the previous
// organization's data, even from a request still in flight.
import { QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef } from "react";
import { api, ApiError, unwrap } from "./client.ts";
import { useOrgKey } from "../session.tsx";

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal or a missing row will not change by asking again; a lost connection may.
      retry: (count, err) =>
        !(err instanceof ApiError && err.status >= 400 && err.status < 500) &&
        count < 2,
      staleTime: 2_000,
    },
  },
});

/**
 * The organization's endpoints (with health) and which URLs the deployment accepts. `live`: the page
 * shows their health, so it asks again whenever it opens (a list another page fetched a second ago can
 * predate the delivery that just finished) and every 15 s while it stays open.
 */
export function useEndpoints({ live = false }: { live?: boolean } = {}) {
  const org = useOrgKey();
  return useQuery({
    queryKey: [org, "endpoints"],
    queryFn: () => unwrap(api.GET("/webhooks/endpoints")),
    ...(live ? { refetchOnMount: "always" as const, refetchInterval: 15_000 } : {}),
  });
}

/** The event catalogue: every type with its description and example body. */
export function useCatalogue() {
  const org = useOrgKey();
  return useQuery({
    queryKey: [org, "event-types"],
    queryFn: () => unwrap(api.GET("/webhooks/event-types")).then((r) => r.data),
    staleTime: Infinity,
  });
}

/** An error as the pages show it. */
export const errorText = (e: unknown): string | null => e ? (e as Error).message : null;

/**
 * An action (a mutation) that returns what to tell the person, and afterwards refreshes whatever the
 * organization's pages show: a change to an endpoint shows in its health, the logs and the list at once.
 *
 * `deletesEndpoint` names the endpoint an action deletes: it leaves the cached list at once, and no query
 * about it is asked again. Its card is still mounted when the action settles, so a refresh of everything
 * would ask for its activity, which no longer exists (a 404 and a wasted request).
 */
export function useAction<V = void>(
  fn: (vars: V) => Promise<string | void>,
  { deletesEndpoint }: { deletesEndpoint?: (vars: V) => string } = {},
) {
  const queries = useQueryClient();
  const org = useOrgKey();
  const m = useMutation({
    mutationFn: fn,
    onSuccess: (_said, vars) => {
      if (!deletesEndpoint) return;
      const id = deletesEndpoint(vars);
      queries.setQueryData<{ data: { id: string }[] }>(
        [org, "endpoints"],
        (list) => list && { ...list, data: list.data.filter((e) => e.id !== id) },
      );
    },
    onSettled: (_said, _error, vars) => {
      const gone = deletesEndpoint?.(vars);
      return queries.invalidateQueries({
        queryKey: [org],
        // Every key about one endpoint holds its id.
        predicate: gone ? (q) => !q.queryKey.includes(gone) : undefined,
      });
    },
  });
  // Buttons stay focusable while their action runs (aria-disabled, not disabled: a disabled button
  // drops focus to <body>), so a second press while one is in flight is ignored here.
  const running = useRef(false);
  running.current = m.isPending;
  const mutate = ((...args: Parameters<typeof m.mutate>) => {
    if (running.current) return;
    running.current = true;
    m.mutate(...args);
  }) as typeof m.mutate;
  return { ...m, mutate };
}
