// CORS as Supabase's local gateway answers it, for pages served from another local port (the settings
// UI): any http(s) origin on localhost / 127.0.0.1 / [::1] may call /auth/v1 and /functions/v1, with the
// headers it asks for. Other origins get no CORS headers, so browsers keep them out.
const LOCAL_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/;
const EXPOSED = "X-Supabase-Api-Version, x-sb-error-code, Content-Length, Content-Range, Location";

export function isLocalOrigin(origin: string | null): origin is string {
  return origin !== null && LOCAL_ORIGIN.test(origin);
}

export function withLocalCors<A extends unknown[]>(
  handler: (req: Request, ...rest: A) => Response | Promise<Response>,
): (req: Request, ...rest: A) => Promise<Response> {
  return async (req, ...rest) => {
    const origin = req.headers.get("origin");
    const allowed = isLocalOrigin(origin);
    if (req.method === "OPTIONS" && req.headers.has("access-control-request-method")) {
      const headers = new Headers({ vary: "Origin" });
      if (allowed) {
        headers.set("access-control-allow-origin", origin);
        headers.set("access-control-allow-methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
        headers.set(
          "access-control-allow-headers",
          req.headers.get("access-control-request-headers") ?? "authorization, apikey, content-type",
        );
        headers.set("access-control-allow-credentials", "true");
        headers.set("access-control-max-age", "3600");
      }
      return new Response(null, { status: allowed ? 204 : 403, headers });
    }
    const res = await handler(req, ...rest);
    if (!allowed) return res;
    const out = new Response(res.body, res);
    out.headers.set("access-control-allow-origin", origin);
    out.headers.set("access-control-allow-credentials", "true");
    out.headers.set("access-control-expose-headers", EXPOSED);
    out.headers.append("vary", "Origin");
    return out;
  };
}
