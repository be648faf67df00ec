// Organization API keys: admins create (the key is shown once), list and revoke them. A key also ends
// when the admin who made it stops being an admin of the organization (the keys migration's triggers).
// @see docs/authentication.md#api-keys
import { z } from "zod";
import { notFound } from "../../_shared/errors.ts";
import { asAdmin, generateApiKey, hashApiKey } from "../actor.ts";
import { route, type RouteFactory, userOf } from "../route.ts";
import { CreatorDisplay } from "../schemas.ts";

const ApiKey = z.object({
  id: z.uuid(),
  name: z.string(),
  key_prefix: z.string().describe("The first characters of the key, to tell keys apart"),
  created_by: z.uuid().nullable(),
  created_by_display: CreatorDisplay,
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  status: z.enum(["active", "revoked"]).describe("Revoked keys are refused (401 invalid_api_key)"),
  revoked_at: z.string().nullable(),
  revoked_reason: z.string().nullable().describe(
    "Why it was revoked: by an administrator, or because the admin who made it left the organization, " +
      "was removed, stopped being an administrator or had their account deleted",
  ),
});
const CreatedApiKey = ApiKey.extend({
  key: z.string().describe("The key itself. Shown only in this response."),
});
const CreateApiKey = z.object({ name: z.string().trim().min(1).max(100) }).strict();

type ApiKeyRow = z.infer<typeof ApiKey>;
const COLUMNS = `id, name, key_prefix, created_by,
  private.creator_display(organization_id, created_by, null) as created_by_display, created_at, last_used_at,
  case when revoked_at is null then 'active' else 'revoked' end as status, revoked_at, revoked_reason`;
const id = { id: z.uuid() };

// The reference's examples (tests parse each with its schema).
const KEY = "orgkey_GksToRvawhEdqMOD2Hd5sCtAcMDewCzNarbuiMegu78";
const KEY_EXAMPLE = {
  id: "4e5f6a7b-8c9d-4e0f-a1b2-c3d4e5f6a7b8",
  name: "Zapier",
  key_prefix: KEY.slice(0, 14),
  created_by: "1d2e3f40-5162-4738-895a-6b7c8d9e0f1a",
  created_by_display: "Ruth Okafor",
  created_at: "2026-11-21T08:12:00.000Z",
  last_used_at: "2026-11-28T09:58:01.000Z",
  status: "active",
  revoked_at: null,
  revoked_reason: null,
};
const REVOKED_EXAMPLE = {
  ...KEY_EXAMPLE,
  status: "revoked",
  revoked_at: "2026-11-28T10:20:00.000Z",
  revoked_reason: "revoked by an administrator",
};

export const apiKeyRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/api-keys",
      summary: "List the organization's API keys",
      description: "Never the keys themselves: `key_prefix` tells them apart.",
      tag: "API keys",
      access: "user",
      refusal: "API keys cannot manage API keys",
      responses: {
        200: {
          description: "Keys, newest first",
          schema: z.object({ data: z.array(ApiKey) }),
          example: {
            data: [KEY_EXAMPLE, {
              ...REVOKED_EXAMPLE,
              id: "9b8a7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d",
              name: "Make (old)",
              key_prefix: "orgkey_p0Lq7Zx",
              created_by: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
              created_by_display: "removed member",
              created_at: "2026-10-02T14:00:00.000Z",
              last_used_at: "2026-11-10T22:31:45.000Z",
              revoked_at: "2026-11-12T09:00:00.000Z",
              revoked_reason: "its creator left the organization",
            }],
          },
        },
      },
    },
    async (c) => {
      const data = await asAdmin(deps, c, (tx) =>
        tx<ApiKeyRow[]>`
          select ${tx.unsafe(COLUMNS)} from public.organization_api_keys order by created_at desc, id`);
      return c.json({ data });
    },
  ),
  route(
    {
      method: "post",
      path: "/api-keys",
      summary: "Create an API key; the key is returned once",
      description: "For automation platforms (Zapier, Make, n8n): they send it as `X-API-Key`.",
      tag: "API keys",
      access: "user",
      refusal: "API keys cannot manage API keys",
      body: CreateApiKey,
      bodyExample: { name: "Zapier" },
      responses: {
        201: {
          description: "The new key, with the key itself",
          schema: CreatedApiKey,
          example: { ...KEY_EXAMPLE, last_used_at: null, key: KEY },
        },
      },
    },
    async (c) => {
      const actor = userOf(c);
      const input = c.req.valid("json");
      const key = generateApiKey();
      const hash = hashApiKey(key);
      const row = await asAdmin(deps, c, async (tx, { organizationId }) => {
        const [r] = await tx<ApiKeyRow[]>`
          insert into public.organization_api_keys (organization_id, name, key_prefix, key_hash, created_by)
          values (${organizationId}, ${input.name}, ${key.slice(0, 14)}, ${hash}, ${actor.userId})
          returning ${tx.unsafe(COLUMNS)}`;
        return r!;
      });
      return c.json({ ...row, key }, 201);
    },
  ),
  route(
    {
      method: "delete",
      path: "/api-keys/:id",
      summary: "Revoke an API key; requests made with it fail from now on",
      tag: "API keys",
      access: "user",
      refusal: "API keys cannot manage API keys",
      params: id,
      responses: { 200: { description: "The revoked key", schema: ApiKey, example: REVOKED_EXAMPLE } },
    },
    async (c) => {
      const keyId = c.req.valid("param").id;
      const row = await asAdmin(deps, c, async (tx) => {
        const [r] = await tx<ApiKeyRow[]>`
          update public.organization_api_keys set revoked_at = coalesce(revoked_at, now())
          where id = ${keyId}
          returning ${tx.unsafe(COLUMNS)}`;
        return r;
      });
      if (!row) throw notFound("not_found", "No such API key");
      return c.json(row);
    },
  ),
];
