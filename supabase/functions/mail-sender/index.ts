// The deployed entry point: serves app.ts (tests and the dev server import the app instead).
// @see docs/architecture.md#components
import { runtimeDeps } from "../_shared/app.ts";
import { logPoolCheck } from "../_shared/pools.ts";
import { createApp } from "./app.ts";

// The Edge Runtime sends `beforeunload` shortly before it shuts the worker down: a background run stops
// claiming; mails it had claimed but not recorded go out again once their lease runs out.
const shutdown = new AbortController();
addEventListener("beforeunload", () => shutdown.abort());

const deps = runtimeDeps();
// At start: can its pool log in? Said in the log now, and by GET /mail-sender/health whenever asked.
logPoolCheck("mail-sender", deps);
Deno.serve(createApp(deps, { shutdown: shutdown.signal }).fetch);
