// A route is its declaration (used for routing and for the OpenAPI document) plus its handler.
import type { Context } from "hono";
import type { AppDeps } from "../_shared/app.ts";
import type { ActorEnv } from "./actor.ts";
import type { RouteSpec } from "./openapi.ts";

export interface Route {
  spec: RouteSpec;
  handler: (c: Context<ActorEnv>) => Promise<Response>;
}

export type RouteFactory = (deps: AppDeps) => Route[];

export const route = (spec: RouteSpec, handler: Route["handler"]): Route => ({ spec, handler });
