// Writes what is generated from the configuration API's declarations: its OpenAPI document (from the
// route declarations and their zod schemas) to docs/webhooks-openapi.json, and the database's list of
// event types (from the event catalogue) into the migration that defines private.webhook_event_types().
// A test fails when either committed file is out of date.
//   npm run openapi
import { document } from "../supabase/functions/webhooks/app.ts";
import { EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";

export function generate(): string {
  return JSON.stringify(document(), null, 2) + "\n";
}

export const OPENAPI_PATH = new URL("../docs/webhooks-openapi.json", import.meta.url);
export const EVENT_TYPES_MIGRATION = new URL(
  "../supabase/migrations/20261122130000_outbound_webhook_tables.sql",
  import.meta.url,
);

const EVENT_TYPES_BODY =
  /(create function private\.webhook_event_types\(\) returns text\[\]\n[^$]*\$\$\n)[^$]*(\$\$;)/;

/** The migration's text with the body of private.webhook_event_types() written from the catalogue. */
export function withEventTypes(migration: string): string {
  if (!EVENT_TYPES_BODY.test(migration)) throw new Error("private.webhook_event_types() not found");
  const list = EVENT_TYPES.map((t) => `    '${t}'`).join(",\n");
  return migration.replace(
    EVENT_TYPES_BODY,
    (_m, head, tail) => `${head}  select array[\n${list}\n  ]\n${tail}`,
  );
}

if (import.meta.main) {
  await Deno.writeTextFile(OPENAPI_PATH, generate());
  await Deno.writeTextFile(
    EVENT_TYPES_MIGRATION,
    withEventTypes(await Deno.readTextFile(EVENT_TYPES_MIGRATION)),
  );
  console.log(`wrote ${OPENAPI_PATH.pathname} and ${EVENT_TYPES_MIGRATION.pathname}`);
}
