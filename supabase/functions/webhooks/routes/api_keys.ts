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

export const apiKeyRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/api-keys",
      summary: "List the organization's API keys (never the keys themselves)",
      tag: "API keys",
      access: "user",
      refusal: "API keys cannot manage API keys",
      responses: { 200: { description: "Keys, newest first", schema: z.object({ data: z.array(ApiKey) }) } },
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
      summary: "Create an API key for automation platforms; the key is returned once",
      tag: "API keys",
      access: "user",
      refusal: "API keys cannot manage API keys",
      body: CreateApiKey,
      responses: { 201: { description: "The new key, with the key itself", schema: CreatedApiKey } },
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
      responses: { 200: { description: "The revoked key", schema: ApiKey } },
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
