// Platform > Platform console, for the service's own staff: every organization with its health,
// suspend and resume (with the reason the organization's admins read), the platform administrators, and
// the platform's audit log. It shows counts and times, never an organization's payloads, secrets or people.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, type PlatformOrganization, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { AuditTable } from "../../ui/AuditTable.tsx";
import { Dialog } from "../../ui/Dialog.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useTick } from "../../ui/useTick.ts";
import { OrganizationTable } from "./OrganizationTable.tsx";
import { PlatformAdmins } from "./PlatformAdmins.tsx";
import { SuspensionForm } from "./SuspensionForm.tsx";
import "./PlatformConsolePage.css";
import { loadMore } from "../../ui/loadMore.ts";

const plural = (n: number, word: string) => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;

export function PlatformConsolePage() {
  useTick();
  const id = useId();
  const [search, setSearch] = useState("");
  const [q, setQ] = useState("");
  const [suspendedOnly, setSuspendedOnly] = useState(false);
  const [acting, setActing] = useState<
    { organization: PlatformOrganization; resume: boolean } | null
  >(null);
  const me = useQuery({
    queryKey: ["platform", "me"],
    queryFn: () => unwrap(api.GET("/webhooks/platform/me")),
  });
  const filter = {
    ...(q ? { q } : {}),
    ...(suspendedOnly ? { suspended: "true" as const } : {}),
  };
  const organizations = useInfiniteQuery({
    queryKey: ["platform", "organizations", filter],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/webhooks/platform/organizations", {
        params: {
          query: {
            limit: 50,
            ...filter,
            ...(pageParam ? { cursor: pageParam } : {}),
          },
        },
      })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 30_000,
  });
  const audit = useQuery({
    queryKey: ["platform", "audit-log"],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/platform/audit-log", {
          params: { query: { limit: 20 } },
        }),
      ),
  });
  const rows = organizations.data?.pages.flatMap((p) => p.data) ?? [];
  const totals = organizations.data?.pages[0]?.totals;

  return (
    <div className="platform-console">
      <h1>Platform console</h1>
      <p className="lead">
        Every organization on this service, with its health. Suspending one stops its people and API keys,
        holds the payments and messages sent to it (providers try again) and pauses its webhooks; resuming
        delivers what waited. Each action is written to the organization's audit log, which its administrators
        read.
      </p>
      {me.error && (
        <ErrorBox
          error={errorText(me.error)!}
          retry={() => void me.refetch()}
        />
      )}
      {/* The service's own setup (Auth mail on a hosted project): every church meets it at sign-up. */}
      {me.data?.warnings.map((w) => (
        <div key={w.code} className="error-box" role="alert" data-code={w.code}>
          <p>{w.message}</p>
        </div>
      ))}
      <section>
        <h2>Organizations</h2>
        {totals && (
          <p className="muted" role="status">
            {plural(totals.organizations, "organization")}, {totals.suspended} suspended
          </p>
        )}
        <form
          className="filters"
          role="search"
          aria-label="Organizations"
          onSubmit={(e) => {
            e.preventDefault();
            setQ(search.trim());
          }}
        >
          <div>
            <label htmlFor={`${id}-q`}>Name contains</label>
            <input
              id={`${id}-q`}
              type="search"
              value={search}
              maxLength={200}
              onChange={(e) => setSearch(e.currentTarget.value)}
            />
          </div>
          <div>
            <label className="check">
              <input
                type="checkbox"
                checked={suspendedOnly}
                onChange={(e) => setSuspendedOnly(e.currentTarget.checked)}
              />{" "}
              Suspended only
            </label>
          </div>
          <button type="submit">Search</button>
        </form>
        {organizations.error && (
          <ErrorBox
            error={`Could not load organizations: ${errorText(organizations.error)}`}
            retry={() => void organizations.refetch()}
          />
        )}
        {organizations.isPending && <Loading what="organizations" />}
        {organizations.data && rows.length === 0 && (
          <Empty title="No organization matches">
            <p>Search for another name, or clear “Suspended only”.</p>
          </Empty>
        )}
        {rows.length > 0 && (
          <OrganizationTable
            organizations={rows}
            onSuspend={(o) => setActing({ organization: o, resume: false })}
            onResume={(o) => setActing({ organization: o, resume: true })}
          />
        )}
        {organizations.hasNextPage && (
          <button
            type="button"
            onClick={() =>
              !organizations.isFetchingNextPage &&
              void loadMore(
                () => organizations.fetchNextPage(),
                '.table-wrap[aria-label="Organizations"] tbody tr',
              )}
            aria-disabled={organizations.isFetchingNextPage || undefined}
          >
            {organizations.isFetchingNextPage ? "Loading…" : "Show more organizations"}
          </button>
        )}
      </section>
      {me.data && <PlatformAdmins superadmin={me.data.is_superadmin} />}
      <section>
        <h2>Recent platform actions</h2>
        {audit.error && (
          <ErrorBox
            error={`Could not load them: ${errorText(audit.error)}`}
            retry={() => void audit.refetch()}
          />
        )}
        {audit.data && audit.data.data.length === 0 && <p className="muted">None yet.</p>}
        {audit.data && audit.data.data.length > 0 && (
          <AuditTable
            entries={audit.data.data}
            label="Recent platform actions"
            showOrganization
          />
        )}
      </section>
      <Dialog
        title={acting ? `${acting.resume ? "Resume" : "Suspend"} ${acting.organization.name}?` : ""}
        open={!!acting}
        onClose={() => setActing(null)}
      >
        {acting && <SuspensionForm {...acting} close={() => setActing(null)} />}
      </Dialog>
    </div>
  );
}
