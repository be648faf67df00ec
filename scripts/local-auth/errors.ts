// Supabase Auth's error responses (internal/api/errors.go): the legacy body {"code": <status>,
// "error_code", "msg"}, or, for clients that send `X-Supabase-Api-Version: 2024-01-01` (supabase-js
// does), {"code": <error_code>, "message"} with that header echoed. Either way `x-sb-error-code`.

export class AuthError extends Error {
  constructor(readonly status: number, readonly errorCode: string, message: string) {
    super(message);
  }
}

export const badRequest = (code: string, msg: string) => new AuthError(400, code, msg);
export const forbidden = (code: string, msg: string) => new AuthError(403, code, msg);
export const internal = (msg: string) => new AuthError(500, "unexpected_failure", msg);

const API_VERSION_HEADER = "X-Supabase-Api-Version";

/** The API version the client asked for, if it is 2024-01-01 or later (the only newer one there is). */
function apiVersion(req: Request): string | undefined {
  const asked = req.headers.get(API_VERSION_HEADER);
  if (!asked || !/^\d{4}-\d{2}-\d{2}$/.test(asked)) return undefined;
  return asked >= "2024-01-01" ? "2024-01-01" : undefined;
}

export function authErrorResponse(req: Request, err: AuthError): Response {
  const headers = new Headers({ "content-type": "application/json" });
  const version = apiVersion(req);
  const code = err.errorCode || (err.status === 500 ? "unexpected_failure" : "unknown");
  if (err.errorCode) headers.set("x-sb-error-code", err.errorCode);
  if (version) {
    headers.set(API_VERSION_HEADER, version);
    return new Response(JSON.stringify({ code, message: err.message }), { status: err.status, headers });
  }
  return new Response(JSON.stringify({ code: err.status, error_code: code, msg: err.message }), {
    status: err.status,
    headers,
  });
}

/** A successful JSON answer (Supabase Auth echoes the API version on errors only). */
export function authJson(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
