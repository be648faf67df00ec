// Settings > Integrations > Payment webhooks: what the checkout and card-payment providers sent us,
// whether it was applied (in words), and replay for the ones that can change.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText, useAction } from "../../api/queries.ts";
import { formatTime } from "../../format.ts";
import { Link } from "../../router.tsx";
import { useOrgKey } from "../../session.tsx";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { Badge, statusWord } from "../../ui/Badge.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { Time } from "../../ui/Time.tsx";
import { useTick } from "../../ui/useTick.ts";
import { EntryPanel } from "./EntryPanel.tsx";
import { explain } from "./explain.ts";
import { PAYMENT_PROVIDERS, type Provider, PROVIDERS } from "./providers.ts";
import { ReplayAllDialog, replayAllFailed } from "./ReplayAllDialog.tsx";
import { loadMore } from "../../ui/loadMore.ts";

const STATES = [
  "received",
  "processed",
  "unmatched",
  "failed",
  "rejected",
  "unverified",
] as const;
type State = (typeof STATES)[number];

function fromQuery<T extends string>(
  name: string,
  allowed: readonly T[],
): T | "" {
  const value = new URL(location.href).searchParams.get(name);
  return allowed.includes(value as T) ? value as T : "";
}

export function PaymentWebhooksPage() {
  useTick();
  const org = useOrgKey();
  // The filters start from the address (the Connections page links here with ?provider=…).
  const [status, setStatus] = useState<State | "">(() => fromQuery("status", STATES));
  const [provider, setProvider] = useState<Provider | "">(() => fromQuery("provider", PAYMENT_PROVIDERS));
  const [open, setOpen] = useState<string | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const replayAll = useAction(replayAllFailed);
  const id = useId();
  const filter = {
    ...(status ? { status } : {}),
    ...(provider ? { provider } : {}),
  };
  const log = useInfiniteQuery({
    queryKey: [org, "inbound-log", filter],
    queryFn: ({ pageParam }) =>
      unwrap(api.GET("/webhooks/inbound-log", {
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
  });
  const rows = log.data?.pages.flatMap((p) => p.data) ?? [];
  // What "Replay all failed" would take up (failed or unmatched, every provider), counted up to a page of
  // each: the button is off with nothing to replay and says how many there are.
  const failed = useQuery({
    queryKey: [org, "inbound-log", "replayable"],
    queryFn: async () => {
      const pages = await Promise.all(
        (["failed", "unmatched"] as const).map((status) =>
          unwrap(api.GET("/webhooks/inbound-log", { params: { query: { status, limit: 200 } } }))
        ),
      );
      return {
        count: pages.reduce((n, p) => n + p.data.length, 0),
        more: pages.some((p) => p.next_cursor !== null),
      };
    },
    refetchInterval: 15_000,
  });
  const replayable = failed.data ? `${failed.data.count}${failed.data.more ? "+" : ""}` : null;

  return (
    <>
      <div className="page-head">
        <h1>Payment webhooks</h1>
        <button
          type="button"
          className="primary"
          // aria-disabled, not disabled: a button that turns off under focus (the count falling to 0
          // after a replay) keeps it.
          onClick={() => !replayAll.isPending && failed.data && failed.data.count > 0 && setConfirmAll(true)}
          aria-disabled={replayAll.isPending || !failed.data || failed.data.count === 0 || undefined}
          title={failed.data?.count === 0
            ? "Nothing to replay: no failed or unmatched notification"
            : undefined}
        >
          {replayAll.isPending
            ? "Replaying…"
            : failed.data?.count === 0
            ? "Nothing to replay"
            : replayable
            ? `Replay all failed (${replayable})`
            : "Replay all failed"}
        </button>
      </div>
      <p className="lead">
        Every notification your payment providers sent (subscriptions and card payments), logged before it was
        applied. When one could not be applied, fix the cause and replay it: an entry that was already applied
        changes nothing.
      </p>
      <ActionResult action={replayAll} />
      <div className="filters">
        <div>
          <label htmlFor={`${id}-provider`}>Provider</label>
          <select
            id={`${id}-provider`}
            value={provider}
            onChange={(e) => setProvider(e.currentTarget.value as Provider | "")}
          >
            <option value="">All providers</option>
            {PAYMENT_PROVIDERS.map((p) => <option key={p} value={p}>{PROVIDERS[p]}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor={`${id}-status`}>Status</label>
          <select
            id={`${id}-status`}
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as State | "")}
          >
            <option value="">Any status</option>
            {STATES.map((s) => <option key={s} value={s}>{statusWord(s)}</option>)}
          </select>
        </div>
      </div>
      {log.error && (
        <ErrorBox
          error={`Could not load the payment log: ${errorText(log.error)}`}
          retry={() => void log.refetch()}
        />
      )}
      {log.isPending && <Loading what="the payment log" />}
      {log.data && rows.length === 0 && (
        <Empty
          level={2}
          title={status || provider ? "No notifications match these filters" : "No payment notifications yet"}
        >
          <p>
            {status || provider ? "Choose another provider or status to see other notifications." : (
              <>
                They appear here when your checkout or card-payment provider sends one. Connect a provider
                (its address and secret, and a signed test) on the{" "}
                <Link href="/settings/integrations/connections">
                  Connections
                </Link>{" "}
                page.
              </>
            )}
          </p>
        </Empty>
      )}
      {rows.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Payment notifications"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col" className="wide">Provider</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" className="wide">What went wrong</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr
                  key={r.id}
                  className={open === r.id ? "selected" : undefined}
                  data-log-id={r.id}
                >
                  <td>
                    <Time iso={r.received_at} />
                  </td>
                  <td className="wide">
                    {PROVIDERS[r.provider] ?? r.provider}
                  </td>
                  <td>
                    {
                      /* A notification whose signature failed has no event name we trust: the button still
                        says what it does (a lone "—" was an 8 px target with no name). */
                    }
                    <button
                      type="button"
                      className="linkish"
                      onClick={() => setOpen(r.id)}
                      aria-label={`${r.event ?? "Notification without an event name"}, received ${
                        formatTime(r.received_at)
                      }: show details`}
                    >
                      {r.event ? <code>{r.event}</code> : "Show details"}
                    </button>
                  </td>
                  <td>
                    <Badge status={r.status} />
                  </td>
                  <td className="wide">{explain(r.error, r.status)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.hasNextPage && (
        <button
          type="button"
          aria-disabled={log.isFetchingNextPage || undefined}
          onClick={() =>
            !log.isFetchingNextPage &&
            void loadMore(
              () => log.fetchNextPage(),
              '.table-wrap[aria-label="Payment notifications"] tbody tr',
            )}
        >
          {log.isFetchingNextPage ? "Loading older notifications…" : "Show older notifications"}
        </button>
      )}
      {open && <EntryPanel key={open} id={open} close={() => setOpen(null)} />}
      <ReplayAllDialog
        count={replayable}
        open={confirmAll}
        close={() => setConfirmAll(false)}
        confirm={() => {
          setConfirmAll(false);
          replayAll.mutate();
        }}
      />
    </>
  );
}
