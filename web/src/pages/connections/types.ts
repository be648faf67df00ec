import type { paths } from "../../api/client.ts";

export type Overview = paths["/webhooks/connections"]["get"]["responses"][200]["content"][
  "application/json"
];
export type PaymentConnection = Overview["checkout"];
export type WhatsAppNumber = Overview["whatsapp"]["numbers"][number];
export type Failures = PaymentConnection["failures"];
export type PaymentProvider = PaymentConnection["provider"];

export const PROVIDER_NAMES: Record<
  PaymentProvider,
  { title: string; what: string }
> = {
  checkout: {
    title: "Checkout provider (subscriptions)",
    what: "Recurring donations: created, charged, paused, cancelled, failed payments.",
  },
  payments: {
    title: "Card payments (payments and refunds)",
    what: "One-off and recurring card payments, and refund confirmations.",
  },
};
