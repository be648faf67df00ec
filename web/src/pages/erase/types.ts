// The erasure API's shapes, from the generated schema, and the words for what an erasure counts.
import type { paths } from "../../api/client.ts";

export type Candidate = paths["/webhooks/members/search"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type Erasure = paths["/webhooks/erasures/{id}"]["get"]["responses"][200]["content"][
  "application/json"
];

const KINDS: Record<string, string> = {
  members: "member record",
  attendance: "attendance rows",
  donations_unlinked: "donations kept without a name",
  recurring_donations_unlinked: "recurring donations kept without a name",
  workflow_runs_unlinked: "workflow runs kept without a name",
  whatsapp_conversations: "WhatsApp conversations",
  whatsapp_messages: "WhatsApp messages",
  whatsapp_receipts: "WhatsApp receipts",
  inbound_webhook_log: "payment and WhatsApp log entries",
  webhook_events: "webhook events",
  webhook_deliveries_ended: "webhook deliveries not sent",
  webhook_attempts: "webhook responses",
  mails: "e-mails",
  invitations: "invitations",
};

export const STAGES: Record<Erasure["stage"], string> = {
  whatsapp: "WhatsApp conversations",
  inbound_log: "payment and WhatsApp logs",
  events: "webhook events",
  attempts: "webhook responses",
  mail: "e-mails",
  settle: "webhook deliveries in flight",
  done: "done",
};

/** "12 webhook events, 3 e-mails, ..." for the kinds an erasure touched. */
export function describeCounts(counts: Erasure["counts"]): string {
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${KINDS[k] ?? k}`);
  return parts.length ? parts.join(", ") : "nothing";
}
