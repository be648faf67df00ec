// Webhook Logs' total: how many deliveries the listing's filters match, counted as the bulk retry's
// preview counts (a count over the matching rows, stopped at a cap), so a large tenant's history is never
// read whole for a number on a page: the same query text as the listing, newest first on its indexes,
// at most COUNT_CAP + 1 rows.
// @see docs/outbound-webhooks.md#webhook-logs
import { z } from "zod";
import type { Tx } from "../../_shared/db.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { ListDeliveries } from "../schemas.ts";
import { mapSqlErrors } from "../sql_errors.ts";
import { bodyMatches, containsPattern, listDeliveriesQuery, WALK_FIRST_ROWS } from "./deliveries.ts";

/** Counted up to this many; past it the answer is "more than". */
export const COUNT_CAP = 10_000;

const CountQuery = ListDeliveries.omit({ limit: true, cursor: true });
type CountFilters = z.infer<typeof CountQuery>;

const DeliveryCount = z.object({
  count: z.number().int().nullable().describe(
    "Matching deliveries, up to 10,000; null: a `contains` text found in more than 5,000 bodies, too " +
      "many to count cheaply",
  ),
  more: z.boolean().describe("There are more than `count` (10,000)"),
});

/** The count, bounded: COUNT_CAP + 1 rows at most, found as the listing finds a page. */
export async function countDeliveries(tx: Tx, q: CountFilters): Promise<z.infer<typeof DeliveryCount>> {
  const listing = { ...q, limit: COUNT_CAP };
  let matches: string[] | "scan" = "scan";
  if (q.contains) {
    // As the search does (searchDeliveries): the bodies the trigram index holds, and the newest rows it
    // may not reach yet, checked one by one. More than 5,000 bodies: the count would walk the history.
    const indexed = await bodyMatches(tx, q.contains);
    if (indexed === "scan") return { count: null, more: true };
    const plain = listDeliveriesQuery({ ...q, contains: undefined, limit: WALK_FIRST_ROWS - 1 }, null);
    const walked = await tx.unsafe<{ event_id: string }[]>(
      `select distinct w.event_id from (${plain.text}) w
       where coalesce((select e.payload::text ilike $${plain.args.length + 1}
                       from public.webhook_events e where e.id = w.event_id), false)`,
      [...plain.args, containsPattern(q.contains)] as never[],
    );
    matches = [...new Set([...indexed, ...walked.map((r) => r.event_id)])];
  }
  const { text, args } = listDeliveriesQuery(listing, null, matches);
  const [r] = await tx.unsafe<{ n: number }[]>(`select count(*)::int as n from (${text}) x`, args as never[]);
  const n = r!.n;
  return { count: Math.min(n, COUNT_CAP), more: n > COUNT_CAP };
}

export const deliveryCountRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/deliveries/count",
      summary: "Count the deliveries a listing's filters match",
      description: "The same filters as `GET /deliveries`; counted up to 10,000 (`more`: there are more), " +
        "so the count costs at most what reading 10,000 rows does.",
      tag: "Webhook Logs",
      access: "admin",
      query: CountQuery,
      responses: {
        200: {
          description: "The count",
          schema: DeliveryCount,
          example: { count: 1234, more: false },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query");
      const out = await asAdmin(deps, c, (tx) => mapSqlErrors(() => countDeliveries(tx, q)));
      return c.json(out);
    },
  ),
];
