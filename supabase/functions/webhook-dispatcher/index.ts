import { runtimeDeps } from "../_shared/app.ts";
import { logPoolCheck } from "../_shared/pools.ts";
import { createApp } from "./app.ts";

// The Edge Runtime sends `beforeunload` shortly before it shuts the worker down (wall clock, CPU or
// memory limit): background runs stop claiming, give back what they claimed and had not sent, and
// record what they sent (engine.ts RunOptions.signal); scripts/edge-runtime.ts plays this on SIGTERM.
const shutdown = new AbortController();
addEventListener("beforeunload", () => shutdown.abort());

const deps = runtimeDeps();
// At start: can its pool log in? Said in the log now, and by GET /webhook-dispatcher/health whenever asked.
logPoolCheck("webhook-dispatcher", deps);
Deno.serve(createApp(deps, { shutdown: shutdown.signal }).fetch);
