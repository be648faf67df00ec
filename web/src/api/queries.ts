// Data loading and caching (TanStack Query): one client for the app, and the queries several pages
// share. Every key starts with the active organization's id, so a switch can never show the previous
// organization's data, even from a request still in flight.
import { QueryClient, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
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

/** The organization's endpoints (with health) and which URLs the deployment accepts. */
export function useEndpoints() {
  const org = useOrgKey();
  return useQuery({
    queryKey: [org, "endpoints"],
    queryFn: () => unwrap(api.GET("/webhooks/endpoints")),
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
 */
export function useAction<V = void>(fn: (vars: V) => Promise<string | void>) {
  const queries = useQueryClient();
  const org = useOrgKey();
  return useMutation({
    mutationFn: fn,
    onSettled: () => queries.invalidateQueries({ queryKey: [org] }),
  });
}
