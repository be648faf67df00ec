// Card-payment provider webhooks (refunds, captured and recurring payments): POST
// /payments-webhook[/<organization_id>], and POST /payments-webhook/replay for the configuration API.
// @see docs/inbound-webhooks.md#checkout-and-card-payments
import { paymentFunction } from "../_shared/inbound/payment_function.ts";
import { paymentsSpec } from "./events.ts";

export const { receiver, createApp } = paymentFunction("payments-webhook", paymentsSpec);
