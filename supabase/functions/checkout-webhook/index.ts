// The deployed entry point: serves app.ts (tests and the dev server import the app instead).
// @see docs/architecture.md#components
import { runtimeDeps } from "../_shared/app.ts";
import { createApp } from "./app.ts";

Deno.serve(createApp(runtimeDeps()).fetch);
