// The event catalogue, for the settings UI's event picker and for integrators.
// @see docs/events/README.md
import { z } from "zod";
import { asCaller } from "../actor.ts";
import { route, type RouteFactory } from "../route.ts";
import { EVENT_CATALOGUE } from "../catalogue.ts";
import { EventType } from "../schemas.ts";

const EventTypeInfo = z.object({
  type: EventType,
  description: z.string(),
  example: z.record(z.string(), z.unknown()),
  table: z.string().describe("The table whose row is `data.row`"),
  fires: z.string().describe("When the event is raised (Markdown)"),
});

const catalogue = () => Object.entries(EVENT_CATALOGUE).map(([type, e]) => ({ type, ...e }));

export const eventTypeRoutes: RouteFactory = (deps) => [
  route(
    {
      method: "get",
      path: "/event-types",
      summary: "The events an endpoint can subscribe to",
      description: "Each with what it means, when it fires and an example body. (The example shows the " +
        "first of them.)",
      tag: "Events",
      access: "authenticated",
      responses: {
        200: {
          description: "The catalogue",
          schema: z.object({ data: z.array(EventTypeInfo) }),
          example: { data: catalogue().slice(0, 1) },
        },
      },
    },
    async (c) => {
      // Nothing of the organization's, yet still only for live sessions and keys, like every route.
      await asCaller(deps, c, () => Promise.resolve());
      return c.json({ data: catalogue() });
    },
  ),
];
