// People joining and leaving organizations, through the SQL functions of 20261122100300_invitations.sql
// run as the caller (they check who may do what); the token is the invitation, never an account's
// e-mail address; API keys cannot manage people. One address gets at most one invitation mail a minute
// (and a few a day): the 429 says when the next can go, and the list says it for each open invitation.
// @see docs/authentication.md#joining-and-leaving-invitations
import { z } from "@hono/zod-openapi";
import { AppError, notFound } from "../../_shared/errors.ts";
import { type ActorEnv, asAdmin, asCaller, organizationSuspended } from "../actor.ts";
import type { AppDeps } from "../../_shared/app.ts";
import type { Context } from "hono";
import type { Tx } from "../../_shared/db.ts";
import { route, type RouteFactory } from "../route.ts";
import { fromSqlError } from "../sql_errors.ts";

const Role = z.enum(["admin", "staff"]);

const Invitation = z.object({
  id: z.uuid(),
  email: z.string(),
  role: Role,
  status: z.enum(["pending", "accepted", "revoked", "expired"]),
  invited_by: z.uuid().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  accepted_at: z.string().nullable(),
  accepted_by: z.uuid().nullable(),
  revoked_at: z.string().nullable(),
  resend_available_at: z.string().nullable().describe(
    "When another invitation mail to this address can go (resend, or invite again); null: now, or the " +
      "invitation is no longer open",
  ),
}).openapi({
  example: {
    id: "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f",
    email: "grace@firstchurch.example",
    role: "staff",
    status: "pending",
    invited_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
    created_at: "2026-11-28T09:00:00.000Z",
    expires_at: "2026-12-05T09:00:00.000Z",
    accepted_at: null,
    accepted_by: null,
    revoked_at: null,
    resend_available_at: "2026-11-28T09:01:00.000Z",
  },
});
const CreatedInvitation = z.object({
  id: z.uuid(),
  organization_id: z.uuid(),
  email: z.string(),
  role: Role,
  token: z.string().describe("Send it to the invitee; shown only in this response, stored hashed"),
  created_at: z.string(),
  expires_at: z.string(),
}).openapi({
  example: {
    id: "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f",
    organization_id: "0c0ffee0-1234-4abc-8def-0123456789ab",
    email: "grace@firstchurch.example",
    role: "staff",
    token: "inv_4b9f0c2e7d1a8b3c6e5f4a2d1c0b9a8e7f6d5c4b3a2918f7e6d5c4b3a2918f7e",
    created_at: "2026-11-28T09:00:00.000Z",
    expires_at: "2026-12-05T09:00:00.000Z",
  },
});
export const InvitationToken = z.object({
  token: z.string().min(1).max(200).describe("The token from the invitation link (inv_...)"),
}).strict();
const CreateInvitation = z.object({
  email: z.email().max(320),
  role: Role.default("staff"),
}).strict().openapi({ example: { email: "grace@firstchurch.example", role: "staff" } });
const Membership = z.object({ organization_id: z.uuid(), role: Role });

// The reference's examples (tests parse each with its schema).
const ORG = "0c0ffee0-1234-4abc-8def-0123456789ab";
export const TOKEN = "inv_4b9f0c2e7d1a8b3c6e5f4a2d1c0b9a8e7f6d5c4b3a2918f7e6d5c4b3a2918f7e";

const INVITATION_COLUMNS = `id, email, role,
  case when accepted_at is not null then 'accepted' when revoked_at is not null then 'revoked'
       when expires_at <= now() then 'expired' else 'pending' end as status,
  invited_by, created_at, expires_at, accepted_at, accepted_by, revoked_at,
  case when accepted_at is null and revoked_at is null then private.invitation_mail_available_at(email)
  end as resend_available_at`;

/** "in 45 seconds", "in 3 minutes", "in 5 hours": how long until `at`. */
function waitInWords(at: Date, now = new Date()): string {
  const seconds = Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
  if (seconds < 120) return `in ${seconds} seconds`;
  if (seconds < 120 * 60) return `in ${Math.ceil(seconds / 60)} minutes`;
  return `in ${Math.ceil(seconds / 3600)} hours`;
}

/**
 * The per-address mail limit (private.mail_recipient_next_at) as a 429 at the `email` field, saying when
 * the next mail can go: in words, as `details.retry_at` and as Retry-After.
 */
function recipientLimited(detail: string | undefined): AppError {
  const at = new Date(detail ?? "");
  const retryAt = Number.isNaN(at.getTime()) ? new Date(Date.now() + 60_000) : at;
  const message = `This address was sent an invitation recently; another can go ${waitInWords(retryAt)}`;
  return new AppError(
    429,
    "recipient_limited",
    message,
    { retry_at: retryAt.toISOString(), fields: [{ field: "email", message }] },
    { "retry-after": String(Math.max(1, Math.ceil((retryAt.getTime() - Date.now()) / 1000))) },
  );
}

/** What the invitation functions raise, as API errors. */
function invitationError(err: unknown): unknown {
  const { code, hint, detail } = (err ?? {}) as { code?: string; hint?: string; detail?: string };
  if (code === "P0002") return notFound("not_found", "No such open invitation or membership for you");
  if (code === "23505") return new AppError(409, "already_member", "Already a member of this organization");
  if (code === "54000" && hint === "recipient_limit") return recipientLimited(detail);
  if (code === "54000" && hint === "young_organization") {
    return new AppError(
      429,
      "too_many_invitations",
      "An organization less than a day old can send 50 invitations a day; invite more tomorrow",
    );
  }
  if (code === "54000") {
    return new AppError(
      429,
      "too_many_invitations",
      "This organization queued 2,400 mails in the last 24 hours; invite more later",
    );
  }
  if (code === "55000" && hint === "organization_suspended") return organizationSuspended();
  if (code === "55000") {
    return new AppError(
      409,
      "last_admin",
      "The last admin of an organization cannot leave or stop being admin; make another member admin first",
    );
  }
  return fromSqlError(err);
}

/**
 * Someone may have signed up with the invitee's address before its owner did, choosing the password
 * (Supabase Auth keeps it when the owner confirms): a new password first ends that.
 */
const newPasswordRequired = () =>
  new AppError(
    409,
    "new_password_required",
    "This account was created before its e-mail address was confirmed, so its password may not be yours: " +
      "set a new password (this signs out every other device), then accept the invitation",
  );

/** As the signed-in user, whatever organization their token names (invitees are not members yet). */
async function asUser<T>(deps: AppDeps, c: Context<ActorEnv>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await asCaller(deps, c, (tx) => fn(tx));
  } catch (err) {
    throw invitationError(err);
  }
}

const id = { id: z.uuid() };

/** Invites (or invites again) as the admin of `tx`; the mail goes in the same transaction. */
async function createInvitation(tx: Tx, email: string, role: string) {
  try {
    const [r] = await tx<{ invitation: z.infer<typeof CreatedInvitation> }[]>`
      select public.create_invitation(${email}, ${role}) as invitation`;
    return r!.invitation;
  } catch (err) {
    throw invitationError(err);
  }
}

const MAIL_LIMIT =
  "One address gets at most one invitation mail a minute and five a day from this organization, and " +
  "invitations from at most ten established organizations (a day old or more) and three new ones a day, " +
  "counted apart so new organizations cannot use up an established one's: `recipient_limited`, with " +
  "`details.retry_at`, Retry-After and `details.fields` naming `email`";

export const invitationRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/invitations",
      summary: "List the organization's invitations, newest first (admins)",
      tag: "People",
      access: "user",
      refusal: "API keys cannot manage people",
      responses: {
        200: {
          description: "Invitations",
          schema: z.object({ data: z.array(Invitation) }),
          example: {
            data: [
              {
                id: "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f",
                email: "grace@firstchurch.example",
                role: "staff",
                status: "pending",
                invited_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
                created_at: "2026-11-28T09:00:00.000Z",
                expires_at: "2026-12-05T09:00:00.000Z",
                accepted_at: null,
                accepted_by: null,
                revoked_at: null,
                resend_available_at: "2026-11-28T09:01:00.000Z",
              },
              {
                id: "4c5d6e7f-8091-4a2b-9c3d-4e5f6a7b8c9d",
                email: "samuel@firstchurch.example",
                role: "admin",
                status: "accepted",
                invited_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
                created_at: "2026-11-20T15:30:00.000Z",
                expires_at: "2026-11-27T15:30:00.000Z",
                accepted_at: "2026-11-20T16:02:11.000Z",
                accepted_by: "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b",
                revoked_at: null,
                resend_available_at: null,
              },
            ],
          },
        },
      },
    },
    async (c) => {
      const data = await asAdmin(deps, c, (tx) =>
        tx.unsafe(
          `select ${INVITATION_COLUMNS} from public.organization_invitations order by created_at desc, id limit 500`,
        ));
      return c.json({ data });
    },
  ),
  route(
    {
      method: "post",
      path: "/invitations",
      summary: "Invite an e-mail address with a role (admins)",
      description: "The invitation mail goes with its link; the token is also returned here, once.",
      tag: "People",
      access: "user",
      refusal: "API keys cannot manage people",
      body: CreateInvitation,
      responses: {
        201: { description: "The invitation with its token", schema: CreatedInvitation },
        409: { description: "The address already belongs to a member" },
        429: {
          description: `${MAIL_LIMIT}; or the organization queued 2,400 mails in the last 24 hours, or is ` +
            "less than a day old and sent 50 invitations today (`too_many_invitations`)",
        },
      },
    },
    async (c) => {
      const input = c.req.valid("json");
      const created = await asAdmin(deps, c, (tx) => createInvitation(tx, input.email, input.role));
      return c.json(created, 201);
    },
  ),
  route(
    {
      method: "post",
      path: "/invitations/:id/resend",
      summary: "Send an invitation again (admins)",
      description: "An open or expired one: a new invitation with a new link replaces it.",
      tag: "People",
      access: "user",
      refusal: "API keys cannot manage people",
      params: id,
      responses: {
        201: {
          description: "The new invitation with its token (the old link stops working)",
          schema: CreatedInvitation,
        },
        404: { description: "No open or expired invitation with this id in the organization" },
        409: { description: "The address has become a member meanwhile" },
        429: { description: MAIL_LIMIT },
      },
    },
    async (c) => {
      const invitationId = c.req.valid("param").id;
      const created = await asAdmin(deps, c, async (tx) => {
        const [old] = await tx<{ email: string; role: string }[]>`
          select email, role from public.organization_invitations
          where id = ${invitationId} and accepted_at is null and revoked_at is null`;
        if (!old) throw notFound("not_found", "No open or expired invitation with this id");
        return await createInvitation(tx, old.email, old.role);
      });
      return c.json(created, 201);
    },
  ),
  route(
    {
      method: "delete",
      path: "/invitations/:id",
      summary: "Revoke an open invitation (admins); its token stops working",
      tag: "People",
      access: "user",
      refusal: "API keys cannot manage people",
      params: id,
      responses: {
        200: { description: "The revoked invitation", schema: Invitation },
        404: { description: "No open invitation with this id in the organization" },
      },
    },
    async (c) => {
      const invitationId = c.req.valid("param").id;
      const row = await asAdmin(deps, c, async (tx) => {
        try {
          await tx`select public.revoke_invitation(${invitationId})`;
        } catch (err) {
          throw invitationError(err);
        }
        const [r] = await tx.unsafe(
          `select ${INVITATION_COLUMNS} from public.organization_invitations where id = $1`,
          [invitationId],
        );
        return r;
      });
      return c.json(row);
    },
  ),
  route(
    {
      method: "post",
      path: "/invitations/accept",
      summary: "Accept an invitation with its token",
      description: "The token from the link that was sent. Any signed-in account may accept it: the token " +
        "is the invitation.",
      tag: "People",
      access: "user",
      refusal: "API keys cannot join or leave organizations",
      body: InvitationToken,
      bodyExample: { token: TOKEN },
      responses: {
        200: {
          description:
            "The membership created. Your active organization does not change; switch to it if you like.",
          schema: Membership,
          example: { organization_id: ORG, role: "staff" },
        },
        403: {
          description: "The organization is suspended by the platform's administrators " +
            "(`organization_suspended`): nothing joins it until it is resumed",
        },
        404: { description: "No such open invitation (unknown, expired, revoked or used)" },
        409: {
          description: "Already a member (`already_member`); or the account existed unconfirmed when the " +
            "invitation went out (`new_password_required`): set a new password (Supabase Auth's " +
            "`PUT /auth/v1/user`, which ends the account's other sessions), then accept again",
        },
      },
    },
    async (c) => {
      const { token } = c.req.valid("json");
      const membership = await asUser(deps, c, async (tx) => {
        const [r] = await tx<{ membership: z.infer<typeof Membership> & { new_password_required?: true } }[]>`
          select public.accept_invitation(${token}) as membership`;
        return r!.membership;
      });
      // Answered after the transaction: it keeps the record of which password the account had.
      if (membership.new_password_required) throw newPasswordRequired();
      return c.json(membership);
    },
  ),
  route(
    {
      method: "post",
      path: "/memberships/:organization_id/leave",
      summary: "Leave an organization you belong to (the last admin cannot)",
      tag: "People",
      access: "user",
      refusal: "API keys cannot join or leave organizations",
      params: { organization_id: z.uuid() },
      responses: {
        200: {
          description: "No longer a member",
          schema: z.object({ organization_id: z.uuid() }),
          example: { organization_id: ORG },
        },
        404: { description: "Not a member of that organization" },
        409: { description: "You are its last admin" },
      },
    },
    async (c) => {
      const organizationId = c.req.valid("param").organization_id;
      await asUser(deps, c, (tx) => tx`select public.leave_organization(${organizationId})`);
      return c.json({ organization_id: organizationId });
    },
  ),
];
