// Checkout (subscription) provider webhooks: POST /checkout-webhook[/<organization_id>], and
// POST /checkout-webhook/replay for the configuration API (replay secret).
// @see docs/inbound-webhooks.md#checkout-and-card-payments
import { paymentFunction } from "../_shared/inbound/payment_function.ts";
import { checkoutSpec } from "./events.ts";

export const { receiver, createApp } = paymentFunction("checkout-webhook", checkoutSpec);
