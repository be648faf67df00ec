// The event catalogue, for the settings UI's event picker and for integrators.
import { z } from "zod";
import { route, type RouteFactory } from "../route.ts";
import { EVENT_CATALOGUE } from "../catalogue.ts";
import { EventType } from "../schemas.ts";

const EventTypeInfo = z.object({
  type: EventType,
  description: z.string(),
  example: z.record(z.string(), z.unknown()),
});

export const eventTypeRoutes: RouteFactory = () => [
  route(
    {
      method: "get",
      path: "/event-types",
      summary: "The events an endpoint can subscribe to, each with an example body",
      tag: "Events",
      access: "authenticated",
      responses: {
        200: { description: "The catalogue", schema: z.object({ data: z.array(EventTypeInfo) }) },
      },
    },
    (c) =>
      Promise.resolve(
        c.json({ data: Object.entries(EVENT_CATALOGUE).map(([type, e]) => ({ type, ...e })) }),
      ),
  ),
];
