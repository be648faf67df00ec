// The OpenAPI document is generated from the route declarations: the committed copy must match, the
// function must serve the same document, and every declared route must be documented.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  EVENT_EXAMPLES_MIGRATION,
  EVENT_TYPES_MIGRATION,
  generate,
  OPENAPI_PATH,
  withEventExamples,
  withEventTypes,
} from "../scripts/gen-openapi.ts";
import { createApp, routes } from "../supabase/functions/webhooks/app.ts";
import type { AppDeps } from "../supabase/functions/_shared/app.ts";
import { closeSql, sql } from "./helpers/db.ts";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";
import { serveFunction } from "./helpers/server.ts";
import { testConfig } from "./helpers/tokens.ts";
import { createSql } from "../supabase/functions/_shared/db.ts";

Deno.test("docs/webhooks-openapi.json is up to date (run `npm run openapi` after changing a route)", async () => {
  assertEquals(await Deno.readTextFile(OPENAPI_PATH), generate());
});

Deno.test("the database's event types are written from the catalogue (run `npm run openapi` after changing it)", async () => {
  const migration = await Deno.readTextFile(EVENT_TYPES_MIGRATION);
  assertEquals(migration, withEventTypes(migration));
  assertEquals(
    (await sql()<{ t: string[] }[]>`select private.webhook_event_types() as t`)[0]?.t,
    EVENT_TYPES,
  );
});

Deno.test("the database's example bodies are written from the catalogue (run `npm run openapi` after changing it)", async () => {
  const migration = await Deno.readTextFile(EVENT_EXAMPLES_MIGRATION);
  assertEquals(migration, withEventExamples(migration));
  const [row] = await sql()<{ examples: Record<string, unknown> }[]>`
    select private.webhook_event_examples() as examples`;
  assertEquals(
    row!.examples,
    Object.fromEntries(Object.entries(EVENT_CATALOGUE).map(([t, e]) => [t, e.example])),
  );
});

Deno.test("the function serves the document, covering every declared route and its schemas", async () => {
  const config = await testConfig();
  const sql = createSql(config.dbUrl, { max: 1 });
  const server = await serveFunction("webhooks", createApp({ config, sql }));
  try {
    const res = await fetch(`${server.base}/openapi.json`);
    assertEquals(res.status, 200);
    const doc = await res.json();
    assertEquals(doc, JSON.parse(generate()));
    assertEquals(doc.openapi, "3.0.3");
    for (const r of routes({} as AppDeps)) {
      const path = "/webhooks" + r.spec.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      const op = doc.paths[path]?.[r.spec.method];
      assert(op, `${r.spec.method} ${path} documented`);
      if (r.spec.body) assert(op.requestBody.content["application/json"].schema.type, `${path} body schema`);
      if (r.spec.access !== "public") assert(op.responses["401"], `${path} documents 401`);
    }
  } finally {
    await server.close();
    await sql.end();
  }
});

Deno.test("cleanup", async () => {
  await closeSql();
});
