// Writes what is generated from the configuration API's declarations: its OpenAPI document (from the
// route declarations and their zod schemas) to docs/webhooks-openapi.json, and from the event catalogue
// the database's list of event types (private.webhook_event_types()) and their example bodies
// (private.webhook_event_examples(), for test deliveries) into the migrations that define them.
// A test fails when any committed file is out of date.
//   npm run openapi
import { document } from "../supabase/functions/webhooks/app.ts";
import { EVENT_CATALOGUE, EVENT_TYPES } from "../supabase/functions/webhooks/catalogue.ts";

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

export const EVENT_EXAMPLES_MIGRATION = new URL(
  "../supabase/migrations/20261122130300_outbound_webhook_operations.sql",
  import.meta.url,
);

const EVENT_EXAMPLES_BODY =
  /(create function private\.webhook_event_examples\(\) returns jsonb\n[^$]*\$\$\n)[^]*?(\n\$\$;)/;

/** The migration's text with the body of private.webhook_event_examples() written from the catalogue. */
export function withEventExamples(migration: string): string {
  if (!EVENT_EXAMPLES_BODY.test(migration)) throw new Error("private.webhook_event_examples() not found");
  const examples = Object.fromEntries(Object.entries(EVENT_CATALOGUE).map(([t, e]) => [t, e.example]));
  const json = JSON.stringify(examples, null, 2).replaceAll("\n", "\n  ");
  return migration.replace(
    EVENT_EXAMPLES_BODY,
    (_m, head, tail) => `${head}  select $json$${json}$json$::jsonb${tail}`,
  );
}

if (import.meta.main) {
  await Deno.writeTextFile(OPENAPI_PATH, generate());
  for (
    const [file, write] of [[EVENT_TYPES_MIGRATION, withEventTypes], [
      EVENT_EXAMPLES_MIGRATION,
      withEventExamples,
    ]] as const
  ) {
    await Deno.writeTextFile(file, write(await Deno.readTextFile(file)));
  }
  console.log(
    `wrote ${OPENAPI_PATH.pathname}, ${EVENT_TYPES_MIGRATION.pathname} and ${EVENT_EXAMPLES_MIGRATION.pathname}`,
  );
}
