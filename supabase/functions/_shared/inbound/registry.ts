// Both payment receivers' specs, for code that handles log rows of either provider (replay).
import { checkoutSpec } from "../../checkout-webhook/events.ts";
import { paymentsSpec } from "../../payments-webhook/events.ts";
import type { SpecRegistry } from "./replay.ts";

export const paymentWebhookSpecs: SpecRegistry = { checkout: checkoutSpec, payments: paymentsSpec };
