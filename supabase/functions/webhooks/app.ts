// Configuration API for the settings area and automation platforms.
import type { Hono } from "hono";
import { type AppDeps, newApp } from "../_shared/app.ts";

export function createApp(deps: AppDeps): Hono {
  return newApp("webhooks", deps);
}
