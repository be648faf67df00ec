// The one HTTP client of outbound webhooks: an undici Agent whose connection step is the target check.
// Our `lookup` is the only DNS path: undici asks it for the addresses of every new connection, and it
// resolves the name once, refuses the connection when any address is blocked (webhook_targets.ts) and
// hands back only approved ones, so nothing resolves the name again between check and connect (DNS
// rebinding). IP literals never reach it; the engine checks them first. TLS is verified against the
// URL's host name whatever address was used; connections are kept alive per origin; redirects are
// never followed. docs/architecture.md#target-safety-at-connect-time
import { Agent } from "undici";
import { resolveTarget, type TargetPolicy } from "../_shared/webhook_targets.ts";

/** A connection refused by the target check; its message is the rule, never an address. */
export const TARGET_REFUSED = "ETARGETREFUSED";
/** A host's checked addresses (or its refusal) are reused this long. */
const LOOKUP_CACHE_MS = 30_000;

type LookupCallback = (
  err: Error | null,
  address?: string | { address: string; family: number }[],
  family?: number,
) => void;

export interface TransportOptions extends TargetPolicy {
  /** Most time for a status line and headers, and again for a body. */
  timeoutMs: number;
  /** Extra trusted CA certificates (PEM), for tests with their own CA. */
  ca?: string[];
}

export function createAgent(options: TransportOptions): Agent {
  const cache = new Map<string, { until: number; verdict: Awaited<ReturnType<typeof resolveTarget>> }>();
  const lookup = (host: string, opts: { all?: boolean }, callback: LookupCallback) => {
    const now = Date.now();
    const cached = cache.get(host);
    const verdict = cached && cached.until > now
      ? Promise.resolve(cached.verdict)
      : resolveTarget(host, options)
        .then((v) => {
          if (cache.size > 10_000) cache.clear();
          cache.set(host, { until: now + LOOKUP_CACHE_MS, verdict: v });
          return v;
        });
    verdict.then((v) => {
      if (!v.ok) return callback(Object.assign(new Error(v.reason), { code: TARGET_REFUSED }));
      // IPv4 first: the address family most receivers serve reliably.
      const addresses = [...v.addresses].sort((a, b) => Number(a.includes(":")) - Number(b.includes(":")))
        .map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
      if (opts?.all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    }, (err) => callback(err instanceof Error ? err : new Error(String(err))));
  };
  return new Agent({
    // Each attempt's own deadline (send.ts) bounds its headers and body; undici's would add two
    // timers per request for nothing.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      timeout: options.timeoutMs,
      lookup,
      ...(options.ca ? { ca: options.ca } : {}),
    } as Record<string, unknown>,
  });
}
