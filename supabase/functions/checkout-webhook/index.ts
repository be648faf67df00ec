// The deployed entry point: serves app.ts (tests and the dev server import the app instead).
// @see docs/architecture.md#components
import { runtimeDeps } from "../_shared/app.ts";
import { logPoolCheck } from "../_shared/pools.ts";
import { createApp } from "./app.ts";

const deps = runtimeDeps();
// At start: can its pool log in? Said in the log now, and by GET /checkout-webhook/health whenever asked.
logPoolCheck("checkout-webhook", deps);
Deno.serve(createApp(deps).fetch);
