// Settings > Integrations > Webhook Logs: every delivery, newest first, filtered or found by id, paged by
// cursor, with the exact body as sent and every attempt. The list refreshes by itself, faster while
// deliveries are in flight.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useEffect, useSyncExternalStore } from "react";
import { api, type Delivery, unwrap } from "../../api/client.ts";
import { errorText, useCatalogue, useEndpoints } from "../../api/queries.ts";
import { displayZoneSettled, formatClock, formatTime, subscribeZone, timeZoneName } from "../../format.ts";
import { setQuery, useLocation } from "../../router.tsx";
import { useOrgKey } from "../../session.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { focusSoon } from "../../ui/focusSoon.ts";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { useDisplayZone } from "../../ui/Time.tsx";
import { useTick } from "../../ui/useTick.ts";
import { BulkRetry } from "./BulkRetry.tsx";
import { DeliveryPanel } from "./DeliveryPanel.tsx";
import { DeliveryTable } from "./DeliveryTable.tsx";
import { closeDelivery } from "./detailView.ts";
import { FilterBar } from "./FilterBar.tsx";
import { apiQuery, CLEARED, filterProblem, readFilters } from "./filters.ts";
import { focusFind, SearchBox } from "./SearchBox.tsx";
import "./WebhookLogsPage.css";
import { loadMore } from "../../ui/loadMore.ts";

const PAGE = 50;
const inFlight = (d: Delivery) => d.status === "pending" || d.status === "retrying";

/** "1,234 deliveries match these filters", "More than 10,000 deliveries", … */
export function countText(c: { count: number | null; more: boolean }, filtered: boolean): string {
  const tail = filtered ? (c.count === 1 && !c.more ? " matches these filters" : " match these filters") : "";
  if (c.count === null) return "Too many deliveries contain this text to count (more than 5,000 bodies).";
  if (c.more) return `More than ${c.count.toLocaleString()} deliveries${tail}.`;
  return `${c.count.toLocaleString()} ${c.count === 1 ? "delivery" : "deliveries"}${tail}.`;
}

export function WebhookLogsPage() {
  useTick();
  useDisplayZone();
  const q = useLocation().searchParams;
  const filters = readFilters(q);
  const problem = filterProblem(filters);
  const openId = q.get("delivery");
  const org = useOrgKey();
  // A custom range is wall times in the display zone: asked once that zone is the church's (or the
  // person's), not first in the browser's and again as the church's arrives (two requests on load).
  const zoneSettled = useSyncExternalStore(subscribeZone, () => displayZoneSettled(org));
  const ready = !problem && (filters.range !== "custom" || zoneSettled);

  const endpoints = useEndpoints();
  const catalogue = useCatalogue();
  const urlOf = (id: string) => endpoints.data?.data.find((e) => e.id === id)?.url ?? "deleted endpoint";

  // Pages by cursor; a refresh asks every loaded page again (each after the one before it), so rows that
  // arrived meanwhile move the pages along instead of being listed twice.
  const list = useInfiniteQuery({
    queryKey: [org, "deliveries", filters],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/webhooks/deliveries", {
        params: {
          query: {
            ...apiQuery(filters),
            limit: PAGE,
            ...(pageParam ? { cursor: pageParam } : {}),
          },
        },
      })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    enabled: ready,
    refetchInterval: (query) => query.state.data?.pages.some((p) => p.data.some(inFlight)) ? 2000 : 5000,
  });
  // How many match, counted apart and less often than the list refreshes: the API stops at 10,000.
  const count = useQuery({
    queryKey: [org, "deliveries", "count", filters],
    queryFn: () => unwrap(api.GET("/webhooks/deliveries/count", { params: { query: apiQuery(filters) } })),
    enabled: ready && !filters.q,
    refetchInterval: 30_000,
  });
  const rows = list.data?.pages.flatMap((p) => p.data) ?? null;
  // The content search's index is built in batches after deliveries are recorded: how far it reaches.
  const searchableUntil = list.data?.pages[0]?.searchable_until;
  const busy = rows?.some(inFlight) ?? false;

  // A search that finds exactly one delivery opens it.
  const single = filters.q && rows?.length === 1 ? rows[0]!.id : null;
  useEffect(() => {
    if (single && !openId) setQuery({ delivery: single });
  }, [single, openId]);

  const anyFilter = !!(filters.q || filters.contains || filters.recovery || filters.tests ||
    filters.endpoint_id || filters.event_type || filters.status || filters.status_class || filters.range);
  return (
    <>
      <div className="page-head">
        <h1>Webhook Logs</h1>
        <button type="button" onClick={() => void list.refetch()}>
          Refresh
        </button>
      </div>
      <p className="lead">
        Every message we sent to your endpoints, newest first. A failed delivery is retried for 24 hours, then
        marked permanently failed. Times are in {timeZoneName()}.
      </p>
      <SearchBox key={filters.q ?? filters.contains ?? ""} current={filters.q ?? filters.contains} />
      <FilterBar
        endpoints={endpoints.data?.data.map((e) => ({
          id: e.id,
          url: e.url,
        })) ?? []}
        eventTypes={[
          ...(catalogue.data?.map((c) => c.type) ?? []),
          "webhook.test",
        ]}
        problem={problem}
      />
      {!problem && <BulkRetry filters={filters} />}
      {filters.q && (
        <p className="searching">
          Showing the message <code>{filters.q}</code>{" "}
          (a delivery id, or a webhook-id that may have gone to several endpoints).{" "}
          <button
            type="button"
            className="linkish"
            onClick={() => {
              setQuery({ q: null, delivery: null });
              focusFind();
            }}
          >
            Show all deliveries
          </button>
        </p>
      )}
      {filters.contains && (
        <p className="searching">
          Showing deliveries whose body contains <code>{filters.contains}</code> (any letter case).{" "}
          {searchableUntil !== undefined && (
            <span className="searchable-until">
              {searchableUntil === null
                ? "The search index is being built: only the newest deliveries are searched yet. "
                : `Searching up to ${formatTime(searchableUntil)}: deliveries recorded since are searched ` +
                  "once indexed, within seconds (the newest are searched already). "}
            </span>
          )}
          <button
            type="button"
            className="linkish"
            onClick={() => {
              setQuery({ contains: null, delivery: null });
              focusFind();
            }}
          >
            Show all deliveries
          </button>
        </p>
      )}
      {filters.recovery && (
        <p className="searching">
          Showing the deliveries one recovery sent again (recovery <code>{filters.recovery}</code>).{" "}
          <button
            type="button"
            className="linkish"
            onClick={() => {
              setQuery({ recovery: null, delivery: null });
              focusFind();
            }}
          >
            Show all deliveries
          </button>
        </p>
      )}
      {list.error && (
        <ErrorBox
          error={`Could not load deliveries: ${errorText(list.error)}`}
          retry={() => void list.refetch()}
        />
      )}
      {!problem && !filters.q && count.data && (count.data.count !== 0 || count.data.more) && (
        <p className="delivery-count">
          {countText(count.data, anyFilter)}
        </p>
      )}
      {!problem && (
        <p className="muted small" aria-live="off">
          {busy ? "Deliveries in flight: refreshing every 2 seconds." : "Refreshing every 5 seconds."}
          {list.dataUpdatedAt > 0 && (
            <>
              {" "}Last updated {formatClock(list.dataUpdatedAt)}.
            </>
          )}
        </p>
      )}
      {!problem && rows === null && !list.error &&
        <Loading what="deliveries" />}
      {rows && rows.length === 0 && (
        anyFilter
          ? (
            <Empty
              level={2}
              title={filters.q
                ? "No message with this id"
                : filters.contains
                ? "No delivery's body contains this"
                : "No deliveries match these filters"}
            >
              <p>
                {filters.q
                  ? "Check the id: a webhook-id is the event's id, the same on every retry. Older deliveries may have been removed after the retention period."
                  : "Widen the time range or clear a filter."}
              </p>
              <button
                type="button"
                onClick={() => {
                  setQuery(CLEARED);
                  focusFind();
                }}
              >
                Clear filters
              </button>
            </Empty>
          )
          : (
            <Empty level={2} title="No deliveries yet">
              <p>
                Deliveries appear here when something happens in your records, for example when a member is
                added. To try an endpoint now, use “Send test event” on the Webhooks page.
              </p>
            </Empty>
          )
      )}
      <div className={openId ? "logs-split open" : "logs-split"}>
        <div className="logs-list">
          {rows && rows.length > 0 && <DeliveryTable rows={rows} openId={openId} urlOf={urlOf} />}
          {list.hasNextPage && (
            <button
              type="button"
              onClick={() =>
                !list.isFetchingNextPage && void loadMore(() => list.fetchNextPage(), "table.logs tbody tr")}
              aria-disabled={list.isFetchingNextPage || undefined}
            >
              {list.isFetchingNextPage ? "Loading older deliveries…" : "Show older deliveries"}
            </button>
          )}
        </div>
        {openId && (
          <DeliveryPanel
            key={openId}
            id={openId}
            urlOf={urlOf}
            close={() => {
              // Back to the row it was opened from; a delivery found by id may have no row: the search.
              focusSoon(
                () => document.querySelector<HTMLElement>(`tr[data-delivery-id="${openId}"] button`),
                () => document.querySelector<HTMLElement>(".table-wrap[aria-label=Deliveries]"),
              );
              closeDelivery();
            }}
          />
        )}
      </div>
    </>
  );
}
