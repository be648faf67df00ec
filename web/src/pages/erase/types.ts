// The erasure API's shapes, from the generated schema, and the words for what an erasure counts.
import type { paths } from "../../api/client.ts";

export type Candidate = paths["/webhooks/members/search"]["get"]["responses"][200]["content"][
  "application/json"
]["data"][number];
export type Erasure = paths["/webhooks/erasures/{id}"]["get"]["responses"][200]["content"][
  "application/json"
];

/** Each kind in words: one, and more than one. */
const KINDS: Record<string, [string, string]> = {
  members: ["member record", "member records"],
  attendance: ["attendance row", "attendance rows"],
  donations_unlinked: [
    "donation kept without a name",
    "donations kept without a name",
  ],
  recurring_donations_unlinked: [
    "recurring donation kept without a name",
    "recurring donations kept without a name",
  ],
  workflow_runs_unlinked: [
    "workflow run kept without a name",
    "workflow runs kept without a name",
  ],
  whatsapp_conversations: ["WhatsApp conversation", "WhatsApp conversations"],
  whatsapp_messages: ["WhatsApp message", "WhatsApp messages"],
  whatsapp_receipts: ["WhatsApp receipt", "WhatsApp receipts"],
  inbound_webhook_log: [
    "payment or WhatsApp log entry",
    "payment and WhatsApp log entries",
  ],
  webhook_events: ["webhook event", "webhook events"],
  webhook_deliveries_ended: [
    "webhook delivery not sent",
    "webhook deliveries not sent",
  ],
  webhook_attempts: ["webhook response", "webhook responses"],
  mails: ["e-mail", "e-mails"],
  invitations: ["invitation", "invitations"],
  donations_pseudonymized: [
    "donation's payment id removed",
    "donations' payment ids removed",
  ],
  recurring_donations_pseudonymized: [
    "recurring donation's subscription id removed",
    "recurring donations' subscription ids removed",
  ],
  donation_refunds_pseudonymized: [
    "refund's ids removed",
    "refunds' ids removed",
  ],
  shared_kept: [
    "row kept for someone else it also concerns",
    "rows kept for someone else they also concern",
  ],
};

/** Where rows that may still mention the person were found, in words. */
const LEFTOVER_KINDS: Record<string, string> = {
  inbound_webhook_log: "payment and WhatsApp logs",
  webhook_deliveries: "webhook deliveries",
  whatsapp_conversations: "WhatsApp conversations",
  whatsapp_messages: "WhatsApp messages",
  whatsapp_message_receipts: "WhatsApp receipts",
  donations: "donations",
  recurring_donations: "recurring donations",
  mails: "e-mails",
  organization_invitations: "invitations",
};

export const STAGES: Record<Erasure["stage"], string> = {
  whatsapp: "WhatsApp conversations",
  inbound_log: "payment and WhatsApp logs",
  events: "webhook events",
  attempts: "webhook responses",
  money: "donations' payment ids",
  mail: "e-mails",
  leftovers: "a search for anything left",
  settle: "webhook deliveries in flight",
  done: "done",
};

/** "12 webhook events, 1 e-mail, ..." for the kinds an erasure touched. */
export function describeCounts(counts: Erasure["counts"]): string {
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([k, n]) =>
    `${n} ${KINDS[k]?.[n === 1 ? 0 : 1] ?? k}`
  );
  return parts.length ? parts.join(", ") : "nothing";
}

/** "2 in webhook deliveries, 1 in e-mails" for what the search found and left unchanged; "" for none. */
export function describeLeftovers(leftovers: Erasure["leftovers"]): string {
  return Object.entries(leftovers).filter(([, l]) => l.count > 0).map(([k, l]) =>
    `${l.count} in ${LEFTOVER_KINDS[k] ?? k}`
  ).join(", ");
}
