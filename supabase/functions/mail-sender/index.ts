import { runtimeDeps } from "../_shared/app.ts";
import { createApp } from "./app.ts";

Deno.serve(createApp(runtimeDeps()).fetch);
