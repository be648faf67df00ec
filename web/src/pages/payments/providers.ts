import type { paths } from "../../api/client.ts";

export type Provider = NonNullable<
  NonNullable<
    paths["/webhooks/inbound-log"]["get"]["parameters"]["query"]
  >["provider"]
>;
// The providers this page is about (the filter offers them); labels also for others the log may hold.
export const PAYMENT_PROVIDERS = [
  "checkout",
  "payments",
] as const satisfies readonly Provider[];
export const PROVIDERS: Record<string, string | undefined> = {
  checkout: "Checkout (subscriptions)",
  payments: "Card payments",
  whatsapp: "WhatsApp",
};
