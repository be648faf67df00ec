// The configuration API served on loopback the way it is deployed: a server pool and a user pool
// (connected as edge_user, which can only become anon or authenticated), user tokens verified with the test key, and beside it the inbound receivers
// its replay routes ask (inbound_stack.ts), under /functions/v1/<name> on one port.
import { startInboundStack } from "./inbound_stack.ts";

export async function startWebhooksApi(env: Record<string, string> = {}) {
  const stack = await startInboundStack(env);
  return { base: stack.base("webhooks"), deps: stack.deps, close: () => stack.close() };
}

/** Headers of a signed-in person's JSON request. */
export const asBearer = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
});

/** One request to the API; the body parsed when it is JSON. */
export async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data: unknown = null;
  try {
    data = JSON.parse(text);
  } catch { /* empty or not JSON */ }
  // deno-lint-ignore no-explicit-any
  return { status: res.status, text, data: data as any };
}
