// The configuration API served on loopback the way it is deployed: a server pool and a user pool
// (connected as edge_user, which can only become anon or authenticated), user tokens verified with the test key, and beside it the inbound receivers
// its replay routes ask (inbound_stack.ts), under /functions/v1/<name> on one port.
import { startInboundStack } from "./inbound_stack.ts";

export async function startWebhooksApi(env: Record<string, string> = {}) {
  const stack = await startInboundStack(env);
  return { base: stack.base("webhooks"), deps: stack.deps, close: () => stack.close() };
}
