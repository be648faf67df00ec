// The configuration API, typed from docs/webhooks-openapi.json (schema.d.ts is generated from it by
// `npm run gen:api`, and a test fails when it is stale), so the pages cannot drift from the API.
// @see docs/configuration-api.md#routes
import createClient, { type Middleware } from "openapi-fetch";
import { SUPABASE_ANON_KEY, SUPABASE_URL } from "../config.ts";
import type { components, paths } from "./schema.d.ts";
import { auth } from "./auth.ts";

export type { components, paths };

/** An API error in words, with the field errors of a 400 kept for the form that caused it. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly fields: { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

type Listener = (e: ApiError) => void;
const listeners = new Set<Listener>();
/** The session layer hears every 401/403, to end an expired session or a removed membership. */
export function onAuthProblem(fn: Listener): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

const withSession: Middleware = {
  async onRequest({ request }) {
    const { data } = await auth.getSession();
    const token = data.session?.access_token;
    if (token) request.headers.set("authorization", `Bearer ${token}`);
    request.headers.set("apikey", SUPABASE_ANON_KEY);
    return request;
  },
};

export const api = createClient<paths>({
  baseUrl: `${SUPABASE_URL}/functions/v1`,
});
api.use(withSession);

interface ErrorBody {
  error?: {
    code?: string;
    message?: string;
    details?: { fields?: { field: string; message: string }[] };
  };
}

const WORDS: Record<string, string> = {
  admin_required: "Only administrators of this organization can do this.",
  no_active_organization: "You are not signed in to an organization.",
  token_expired: "Your session has expired. Sign in again.",
  invalid_token: "Your session is no longer valid. Sign in again.",
  missing_token: "You are signed out. Sign in again.",
  not_found: "It no longer exists (it may have been deleted).",
  endpoint_disabled:
    "This endpoint is disabled, so nothing is sent to it: its card says why. Enable it there, then try again.",
};

/** Turns an openapi-fetch result into its data, or throws an ApiError that says what went wrong. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (e) {
    throw new ApiError(
      `Could not reach the server (${
        e instanceof Error ? e.message : String(e)
      }). Check your connection and try again.`,
      0,
      "network",
    );
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  const body = (error ?? {}) as ErrorBody;
  const code = body.error?.code ?? `http_${response.status}`;
  const fields = body.error?.details?.fields ?? [];
  const message = WORDS[code] ?? body.error?.message ??
    `The server answered ${response.status} ${response.statusText}.`;
  const err = new ApiError(message, response.status, code, fields);
  if (response.status === 401 || response.status === 403) {
    for (const fn of listeners) {
      fn(err);
    }
  }
  throw err;
}

export type Endpoint = paths["/webhooks/endpoints"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type Delivery = paths["/webhooks/deliveries"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type DeliveryDetail = paths["/webhooks/deliveries/{id}"]["get"]["responses"][200]["content"][
  "application/json"
];
export type EventTypeInfo = paths["/webhooks/event-types"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type ApiKey = paths["/webhooks/api-keys"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type InboundEntry = paths["/webhooks/inbound-log"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type InboundDetail = paths["/webhooks/inbound-log/{id}"]["get"]["responses"][200]["content"][
  "application/json"
];
export type DeliveryStatus = Delivery["status"];

/** GET /webhooks/me: who is signed in, the active organization and every membership. */
export type Me = paths["/webhooks/me"]["get"]["responses"][200]["content"]["application/json"];
export type Attempt = DeliveryDetail["attempts"][number];
export type Activity = paths["/webhooks/endpoints/{id}/activity"]["get"]["responses"][200][
  "content"
][
  "application/json"
];
export type TargetPolicy = paths["/webhooks/endpoints"]["get"]["responses"][200]["content"][
  "application/json"
][
  "target_policy"
];
export type AuditEntry = paths["/webhooks/audit-log"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type PlatformOrganization = paths["/webhooks/platform/organizations"]["get"]["responses"][200][
  "content"
]["application/json"]["data"][number];
export type PlatformAdmin = paths["/webhooks/platform/admins"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
