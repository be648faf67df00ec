// Settings > Audit log: what the platform's administrators did to this organization (suspended it,
// resumed it), and which of its own admins revealed a signing secret: when, who and why, newest first.
import { useInfiniteQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { AuditTable } from "../../ui/AuditTable.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { loadMore } from "../../ui/loadMore.ts";

export function AuditLogPage() {
  useTick();
  const org = useOrgKey();
  const log = useInfiniteQuery({
    queryKey: [org, "audit-log"],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/webhooks/audit-log", {
        params: {
          query: { limit: 50, ...(pageParam ? { cursor: pageParam } : {}) },
        },
      })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
  const entries = log.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <>
      <h1>Audit log</h1>
      <p className="lead">
        Everything the service's own administrators did to this organization (when they suspended or resumed
        it, who did it and why), and each time one of your administrators revealed an endpoint's signing
        secret. The service's administrators cannot see your members, payments or signing secrets.
      </p>
      {log.error && (
        <ErrorBox
          error={`Could not load the audit log: ${errorText(log.error)}`}
          retry={() => void log.refetch()}
        />
      )}
      {log.isPending && <Loading what="the audit log" />}
      {log.data && entries.length === 0 && (
        <Empty level={2} title="Nothing recorded">
          <p>
            The platform's administrators have taken no action on this organization, and no signing secret has
            been revealed.
          </p>
        </Empty>
      )}
      {entries.length > 0 && <AuditTable entries={entries} label="Audit log" />}
      {log.hasNextPage && (
        <button
          type="button"
          onClick={() =>
            !log.isFetchingNextPage &&
            void loadMore(() => log.fetchNextPage(), '.table-wrap[aria-label="Audit log"] tbody tr')}
          aria-disabled={log.isFetchingNextPage || undefined}
        >
          {log.isFetchingNextPage ? "Loading…" : "Show older entries"}
        </button>
      )}
    </>
  );
}
