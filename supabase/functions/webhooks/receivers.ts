// Replay of logged inbound payloads happens in the receiver function that owns them (its live code
// path: POST /<function>/replay with the bearer INBOUND_REPLAY_SECRET). The configuration API checks
// who may replay what and asks, and deploys none of the receivers' code.
import type { Config } from "../_shared/config.ts";
import { AppError, notFound, serviceUnavailable } from "../_shared/errors.ts";

export const INBOUND_PROVIDERS = ["checkout", "payments", "whatsapp"] as const;
export type InboundProvider = typeof INBOUND_PROVIDERS[number];

const FUNCTION_OF: Record<InboundProvider, string> = {
  checkout: "checkout-webhook",
  payments: "payments-webhook",
  whatsapp: "messaging-webhook",
};

export interface ReplayOutcome {
  log_id: string;
  status: "processed" | "duplicate" | "unmatched" | "failed" | "skipped";
  outcome?: string;
  reason?: string;
}

const REPLAY_TIMEOUT_MS = 120_000;

export async function askReceiverToReplay(
  config: Config,
  provider: InboundProvider,
  request: { organization_id: string; log_id?: string },
): Promise<ReplayOutcome[]> {
  if (!config.functionsUrl || !config.replaySecret) {
    throw serviceUnavailable(
      "Replay is not configured (SUPABASE_FUNCTIONS_URL or SUPABASE_URL, INBOUND_REPLAY_SECRET)",
    );
  }
  let res: Response;
  try {
    res = await fetch(`${config.functionsUrl}/${FUNCTION_OF[provider]}/replay`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${config.replaySecret}` },
      body: JSON.stringify(request),
      redirect: "manual",
      signal: AbortSignal.timeout(REPLAY_TIMEOUT_MS),
    });
  } catch {
    throw serviceUnavailable(`The ${FUNCTION_OF[provider]} function did not answer; retry later`);
  }
  const body = await res.json().catch(() => null) as { data?: ReplayOutcome[] } | null;
  if (res.status === 404) throw notFound("not_found", "No such log entry");
  if (!res.ok || !Array.isArray(body?.data)) {
    throw new AppError(502, "replay_failed", `The ${FUNCTION_OF[provider]} function answered ${res.status}`);
  }
  return body.data;
}
