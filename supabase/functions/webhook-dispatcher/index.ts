import { runtimeDeps } from "../_shared/app.ts";
import { logPoolCheck } from "../_shared/pools.ts";
import { createApp } from "./app.ts";

// The Edge Runtime sends `beforeunload` shortly before it shuts the worker down (wall clock, CPU or
// memory limit): background runs stop claiming; what they had claimed is leased and goes out again
// once the lease runs out if it could not be recorded.
const shutdown = new AbortController();
addEventListener("beforeunload", () => shutdown.abort());

const deps = runtimeDeps();
// At start: can its pool log in? Said in the log now, and by GET /webhook-dispatcher/health whenever asked.
logPoolCheck("webhook-dispatcher", deps);
Deno.serve(createApp(deps, { shutdown: shutdown.signal }).fetch);
