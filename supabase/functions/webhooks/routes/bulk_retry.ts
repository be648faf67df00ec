// Webhook Logs > Retry N matching: every failing delivery a filter matches, sent again now, in batches.
// The work is SQL (20261207170200_webhook_bulk_retry.sql): public.webhook_bulk_retry() as the admin,
// then bounded batches as the server, here while a request's time allows (the POST that starts it, each
// poll of its progress) and after that by the every-minute cron job.
// @see docs/outbound-webhooks.md#bulk-retry
import { z } from "zod";
import type { Sql } from "../../_shared/db.ts";
import { AppError, badRequest, notFound } from "../../_shared/errors.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { BulkRetry, type BulkRetryRow, RetryFilter } from "../schemas.ts";
import { fromSqlError } from "../sql_errors.ts";

/** How long the POST keeps retrying before it answers (the database does the work). */
export const RETRY_REQUEST_BUDGET_MS = 1500;
/** How long each progress poll carries a running job on. */
export const RETRY_POLL_BUDGET_MS = 1000;
/** Both, unless WEBHOOKS_BULK_RETRY_BUDGET_MS sets them (0: one batch a request). */
const budgetOf = (config: { bulkRetryBudgetMs?: number } | undefined, fallback: number) =>
  config?.bulkRetryBudgetMs ?? fallback;
const BATCH_SIZE = 1000;
const PREVIEW_CAP = 100_000;

/** Runs batches as the server until the job is done, another caller holds it, or the budget is spent. */
export async function continueRetry(sql: Sql, retryId: string, budgetMs: number): Promise<BulkRetryRow> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const [row] = await sql<{ progress: BulkRetryRow | null }[]>`
      select private.webhook_bulk_retry_step(${retryId}, ${BATCH_SIZE}) as progress`;
    const progress = row?.progress;
    if (!progress || progress.status !== "running" || Date.now() >= deadline) {
      if (progress) return progress;
      const [current] = await sql<
        { r: BulkRetryRow }[]
      >`select private.webhook_bulk_retry_json(${retryId}) as r`;
      return current!.r;
    }
  }
}

type Filter = z.infer<typeof RetryFilter>;
// The filter as SQL reads it: only the fields given (tests always).
const filterJson = (f: Filter) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined));

const idempotencyKey = (value: string | undefined) => {
  if (value === undefined) return null;
  if (value.length < 1 || value.length > 200) {
    throw badRequest("invalid_request", "Invalid header: Idempotency-Key", {
      fields: [{ field: "Idempotency-Key", message: "must be 1 to 200 characters" }],
    });
  }
  return value;
};

const mapRetryError = (err: unknown) => {
  const code = (err as { code?: string }).code;
  // private.webhook_not_found for a user: the endpoint named is not the organization's (or no such one).
  if (code === "42501" && /no such endpoint/.test((err as Error).message)) {
    return notFound("not_found", "No such endpoint");
  }
  if (code === "54000") {
    return new AppError(
      429,
      "too_many_bulk_retries",
      "5 bulk retries are running; start another once one finishes",
    );
  }
  if (code === "22023" && (err as { hint?: string }).hint === "idempotency_key_reused") {
    return new AppError(409, "idempotency_key_reused", (err as Error).message);
  }
  return fromSqlError(err);
};

const FILTER_EXAMPLE = { status: "retrying", endpoint_id: "2b7e4c1a-9d3f-4e58-8a61-0c5d7f9e1b23" };
const retryId = { id: z.uuid() };

export const bulkRetryRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "post",
      path: "/deliveries/retry/preview",
      summary: "Count what a bulk retry would send again",
      description: "How many deliveries `POST /deliveries/retry` with the same filter would take up now, " +
        "counted up to 100,000 (`more`: there are more).",
      tag: "Webhook Logs",
      access: "admin",
      body: RetryFilter,
      bodyExample: FILTER_EXAMPLE,
      responses: {
        200: {
          description: "The count, before anything is sent",
          schema: z.object({ count: z.number().int(), more: z.boolean() }),
          example: { count: 2400, more: false },
        },
        404: { description: "The filter names an endpoint the organization does not have" },
        409: { description: "The filter names a disabled endpoint" },
      },
    },
    async (c) => {
      const filter = filterJson(c.req.valid("json"));
      const n = await asAdmin(deps, c, async (tx) => {
        try {
          const [r] = await tx<{ n: number }[]>`
            select public.webhook_bulk_retry_preview(${filter as never}::jsonb, ${PREVIEW_CAP}) as n`;
          return r!.n;
        } catch (err) {
          throw mapRetryError(err);
        }
      });
      return c.json({ count: Math.min(n, PREVIEW_CAP), more: n > PREVIEW_CAP });
    },
  ),
  route(
    {
      method: "post",
      path: "/deliveries/retry",
      summary: "Retry every failing delivery a filter matches",
      description: "Retrying deliveries are moved to now (no attempt counted, their 24 h window kept); " +
        "permanently failed ones are queued again with a fresh window, as a recovery does. Delivered " +
        "ones are never taken up (redeliver them one by one); ones being sent right now, of a disabled " +
        "endpoint or of an erased person are skipped and counted. Runs in batches: the answer is the " +
        "job so far; poll `GET /deliveries/retries/{id}`. Its `recovery_id` lists what it queued: " +
        "`GET /deliveries?recovery_id=…`. Send an `Idempotency-Key` header to make a repeat safe: the " +
        "same key answers the same job and queues nothing more.",
      tag: "Webhook Logs",
      access: "admin",
      body: RetryFilter,
      bodyExample: FILTER_EXAMPLE,
      responses: {
        202: {
          description: "Started (or, with an Idempotency-Key used before, that job)",
          schema: BulkRetry,
        },
        404: { description: "The filter names an endpoint the organization does not have" },
        409: { description: "The filter names a disabled endpoint, or the Idempotency-Key another filter" },
        429: { description: "5 bulk retries of the organization are running" },
      },
    },
    async (c) => {
      const filter = filterJson(c.req.valid("json"));
      const key = idempotencyKey(c.req.header("idempotency-key"));
      const id = await asAdmin(deps, c, async (tx) => {
        try {
          const [r] = await tx<{ id: string }[]>`
            select public.webhook_bulk_retry(${filter as never}::jsonb, ${key}) as id`;
          return r!.id;
        } catch (err) {
          throw mapRetryError(err);
        }
      });
      // The admin's transaction has committed; the batches run as the server.
      return c.json(await continueRetry(deps.sql, id, budgetOf(deps.config, RETRY_REQUEST_BUDGET_MS)), 202);
    },
  ),
  route(
    {
      method: "get",
      path: "/deliveries/retries/:id",
      summary: "One bulk retry and its progress",
      description: "Reading a running one also carries it on for up to a second.",
      tag: "Webhook Logs",
      access: "admin",
      params: retryId,
      responses: {
        200: { description: "The bulk retry", schema: BulkRetry },
        404: { description: "No such bulk retry in the organization" },
      },
    },
    async (c) => {
      const id = c.req.valid("param").id;
      const [row] = await asAdmin(
        deps,
        c,
        (tx) => tx<{ status: string }[]>`select status from public.webhook_bulk_retries where id = ${id}`,
      );
      if (!row) throw notFound("not_found", "No such bulk retry");
      const budget = row.status === "running" ? budgetOf(deps.config, RETRY_POLL_BUDGET_MS) : 0;
      return c.json(await continueRetry(deps.sql, id, budget));
    },
  ),
  route(
    {
      method: "post",
      path: "/deliveries/retries/:id/cancel",
      summary: "Stop a bulk retry",
      description: "After the batch in progress; what it queued already stays queued. Cancelling one " +
        "that has finished changes nothing.",
      tag: "Webhook Logs",
      access: "admin",
      params: retryId,
      responses: {
        200: { description: "The bulk retry, cancelled (or as it finished)", schema: BulkRetry },
        404: { description: "No such bulk retry in the organization" },
      },
    },
    async (c) => {
      const id = c.req.valid("param").id;
      const job = await asAdmin(deps, c, async (tx) => {
        try {
          await tx`select public.webhook_bulk_retry_cancel(${id})`;
        } catch (err) {
          if ((err as { code?: string }).code === "42501") throw notFound("not_found", "No such bulk retry");
          throw fromSqlError(err);
        }
        const [r] = await tx<{ r: BulkRetryRow }[]>`select private.webhook_bulk_retry_json(${id}) as r`;
        return r!.r;
      });
      return c.json(job);
    },
  ),
];
