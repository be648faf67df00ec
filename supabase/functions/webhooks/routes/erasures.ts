// Erasing a person: an admin finds a member of the organization by e-mail, phone or name, erases them,
// and follows the erasure to its end; the records of past erasures stay (who, when, how many rows of
// each kind, never what was erased). The work itself is SQL (20261125110000_person_erasure.sql):
// public.erase_member() as the admin, then bounded batches as the server, here while the request's
// time allows and after that by the every-minute cron job. People only: API keys cannot read members.
// @see docs/configuration-api.md#erasing-a-person and docs/monitoring.md#erasing-a-person
import { z } from "zod";
import type { Sql } from "../../_shared/db.ts";
import { AppError, notFound } from "../../_shared/errors.ts";
import { recordAudit } from "../audit.ts";
import { asAdmin } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";

/** How long one request keeps erasing before it answers (the database does the work; the rest is cron's). */
export const ERASURE_REQUEST_BUDGET_MS = 2000;
const BATCH_SIZE = 500;

const Candidate = z.object({
  id: z.uuid(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string().nullable(),
  primary_phone: z.string().nullable(),
  created_at: z.string(),
});

const Erasure = z.object({
  id: z.uuid(),
  member_id: z.uuid().describe(
    "The id the erased member had; the member row itself is gone",
  ),
  requested_by: z.uuid().nullable().describe("The admin who erased them"),
  requested_at: z.string(),
  finished_at: z.string().nullable(),
  status: z.enum(["running", "done"]),
  stage: z.enum([
    "whatsapp",
    "inbound_log",
    "events",
    "attempts",
    "money",
    "mail",
    "leftovers",
    "settle",
    "done",
  ]).describe("The kind of rows being worked through"),
  steps: z.number().int().describe("Batches done so far"),
  counts: z.record(z.string(), z.number().int()).describe(
    "Rows removed, redacted or kept for someone else, per kind (members, attendance, whatsapp_messages, " +
      "inbound_webhook_log, webhook_events, webhook_deliveries_ended, webhook_attempts, " +
      "donations_pseudonymized, mails, invitations, shared_kept, ...)",
  ),
  leftovers: z.record(
    z.string(),
    z.object({
      count: z.number().int(),
      ids: z.array(z.uuid()).describe("At most 20 of them"),
    }),
  ).describe(
    "Rows the erasure kept that may still hold something of the person, per table, for the admin to look " +
      "at: rows recorded as someone else's too (only the person's link left them), and rows a search for " +
      "their e-mail, phone and provider ids found that were recorded as someone else's or nobody's " +
      "(inbound_webhook_log, webhook_deliveries (what receivers answered), whatsapp_conversations, " +
      "whatsapp_messages, donations, mails, ...)",
  ),
}).openapi("Erasure", {
  example: {
    id: "5f0e6c1e-3b7a-4c55-9a39-0d4b6b7f2a10",
    member_id: "bbbbbbbb-0000-4000-8000-000000000001",
    requested_by: "aaaaaaaa-0000-4000-8000-000000000001",
    requested_at: "2026-11-28T09:00:00.000Z",
    finished_at: "2026-11-28T09:00:00.420Z",
    status: "done",
    stage: "done",
    steps: 9,
    counts: {
      members: 1,
      webhook_events: 4,
      inbound_webhook_log: 2,
      donations_pseudonymized: 1,
      shared_kept: 1,
    },
    leftovers: {
      webhook_deliveries: {
        count: 1,
        ids: ["7d1c2f3e-8a9b-4c0d-9e1f-2a3b4c5d6e7f"],
      },
    },
  },
});
type ErasureRow = z.infer<typeof Erasure>;

const Search = z.object({
  q: z.string().trim().min(2).max(200).describe(
    "Part of an e-mail address, a name or a phone number",
  ),
});
const CreateErasure = z.object({ member_id: z.uuid() }).strict()
  .openapi({ example: { member_id: "bbbbbbbb-0000-4000-8000-000000000001" } });
const ERASURE_COLUMNS = `id, member_id, requested_by, requested_at, finished_at,
  case when finished_at is null then 'running' else 'done' end as status, stage, steps, counts, leftovers`;

/**
 * Runs batches of one erasure as the server until it is done, another caller holds it, or the budget is
 * spent; each batch is its own short transaction. Returns the record as it stands.
 */
export async function continueErasure(
  sql: Sql,
  erasureId: string,
  budgetMs: number,
): Promise<ErasureRow> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const [row] = await sql<{ progress: ErasureRow | null }[]>`
      select private.erasure_step(${erasureId}, ${BATCH_SIZE}) as progress`;
    const progress = row?.progress;
    if (!progress || progress.status === "done" || Date.now() >= deadline) {
      if (progress) return progress;
      const [current] = await sql<
        { e: ErasureRow }[]
      >`select private.erasure_json(${erasureId}) as e`;
      return current!.e;
    }
  }
}

export const erasureRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/members/search",
      summary: "Find members by e-mail, phone or name (admins)",
      description: "To erase one: only the organization's own members are searched.",
      tag: "Privacy",
      access: "user",
      refusal: "API keys cannot read members",
      query: Search,
      responses: {
        200: {
          description: "At most 20 members, by name",
          schema: z.object({ data: z.array(Candidate) }),
          example: {
            data: [{
              id: "bbbbbbbb-0000-4000-8000-000000000001",
              first_name: "Sheena",
              last_name: "Nelson",
              email: "sheena.nelson@mail.example",
              primary_phone: "+44 7700 900123",
              created_at: "2026-03-14T11:20:00.000Z",
            }],
          },
        },
      },
    },
    async (c) => {
      const q = c.req.valid("query").q;
      // A query of digits and phone punctuation also matches the normalized number.
      const digits = /^[\d\s()+.\-\/]+$/.test(q) ? q.replace(/\D/g, "") : "";
      const data = await asAdmin(
        deps,
        c,
        (tx) =>
          tx<z.infer<typeof Candidate>[]>`
          select id, first_name, last_name, email, primary_phone, created_at
          from public.members m
          where strpos(lower(coalesce(m.email, '')), lower(${q})) > 0
             or strpos(lower(m.first_name || ' ' || m.last_name), lower(${q})) > 0
             or (length(${digits}) >= 3 and strpos(coalesce(m.primary_phone_normalized, ''), ${digits}) > 0)
          order by lower(m.last_name), lower(m.first_name), m.id
          limit 20`,
      );
      return c.json({ data });
    },
  ),
  route(
    {
      method: "post",
      path: "/erasures",
      summary: "Erase a member everywhere (admins); cannot be undone",
      tag: "Privacy",
      access: "user",
      refusal: "API keys cannot erase people",
      body: CreateErasure,
      responses: {
        201: {
          description: "Erased: every copy found is gone",
          schema: Erasure,
        },
        202: {
          description:
            "Erasing: the member row is gone, the rest continues in batches (poll GET /erasures/{id})",
          schema: Erasure,
        },
        404: { description: "No such member in the organization" },
        429: {
          description: "20 erasures of the organization are running; erase more once they finish",
        },
      },
    },
    async (c) => {
      const memberId = c.req.valid("json").member_id;
      const erasureId = await asAdmin(deps, c, async (tx, { organizationId }) => {
        try {
          const [r] = await tx<
            { id: string }[]
          >`select public.erase_member(${memberId}) as id`;
          // The erasure's id alone: its record (GET /erasures/{id}) names the member; the audit log
          // keeps nothing of the person, not even the id an erasure leaves in its own record only.
          await recordAudit(
            tx,
            organizationId,
            "member.erasure_requested",
            { type: "erasure", id: r!.id },
            {},
          );
          return r!.id;
        } catch (err) {
          if ((err as { code?: string }).code === "P0002") {
            throw notFound("not_found", "No such member");
          }
          if ((err as { code?: string }).code === "54000") {
            throw new AppError(
              429,
              "too_many_erasures",
              "20 erasures are running; erase more once they finish",
            );
          }
          throw fromSqlError(err);
        }
      });
      // The admin's transaction has committed: the member row is gone. The rest runs as the server.
      const erasure = await continueErasure(
        deps.sql,
        erasureId,
        ERASURE_REQUEST_BUDGET_MS,
      );
      return c.json(erasure, erasure.status === "done" ? 201 : 202);
    },
  ),
  route(
    {
      method: "get",
      path: "/erasures",
      summary: "The organization's erasures, newest first (admins)",
      tag: "Privacy",
      access: "user",
      refusal: "API keys cannot read erasures",
      responses: {
        200: {
          description: "Erasures",
          schema: z.object({ data: z.array(Erasure) }),
          example: {
            data: [{
              id: "6a1f7d2f-4c8b-4d66-8b4a-1e5c7c8f3b21",
              member_id: "bbbbbbbb-0000-4000-8000-000000000002",
              requested_by: "aaaaaaaa-0000-4000-8000-000000000001",
              requested_at: "2026-11-28T10:30:00.000Z",
              finished_at: null,
              status: "running",
              stage: "events",
              steps: 3,
              counts: { members: 1, whatsapp_messages: 500, inbound_webhook_log: 12 },
              leftovers: {},
            }],
          },
        },
      },
    },
    async (c) => {
      const data = await asAdmin(deps, c, (tx) =>
        tx.unsafe(
          `select ${ERASURE_COLUMNS} from public.member_erasures order by requested_at desc, id limit 200`,
        ));
      return c.json({ data });
    },
  ),
  route(
    {
      method: "get",
      path: "/erasures/:id",
      summary: "One erasure and its progress (admins)",
      tag: "Privacy",
      access: "user",
      refusal: "API keys cannot read erasures",
      params: { id: z.uuid() },
      responses: {
        200: { description: "The erasure", schema: Erasure },
        404: { description: "No such erasure in the organization" },
      },
    },
    async (c) => {
      const erasureId = c.req.valid("param").id;
      const [row] = await asAdmin(
        deps,
        c,
        (tx) =>
          tx.unsafe(
            `select ${ERASURE_COLUMNS} from public.member_erasures where id = $1`,
            [erasureId],
          ),
      );
      if (!row) throw notFound("not_found", "No such erasure");
      return c.json(row);
    },
  ),
];
