// The deployed entry point: serves app.ts (tests and the dev server import the app instead).
// @see docs/architecture.md#components
import { runtimeDeps } from "../_shared/app.ts";
import { createApp } from "./app.ts";

// The Edge Runtime sends `beforeunload` shortly before it shuts the worker down: a background run stops
// claiming; mails it had claimed but not recorded go out again once their lease runs out.
const shutdown = new AbortController();
addEventListener("beforeunload", () => shutdown.abort());

Deno.serve(createApp(runtimeDeps(), { shutdown: shutdown.signal }).fetch);
