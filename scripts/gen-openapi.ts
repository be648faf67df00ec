// Writes the configuration API's OpenAPI document (generated from the route declarations and their zod
// schemas) to docs/webhooks-openapi.json. A test fails when the committed file is out of date.
//   npm run openapi
import { API_VERSION, routes } from "../supabase/functions/webhooks/app.ts";
import { openApiDocument } from "../supabase/functions/webhooks/openapi.ts";
import type { AppDeps } from "../supabase/functions/_shared/app.ts";

export function generate(): string {
  // Declarations only: no route handler runs, so no database or configuration is needed.
  const specs = routes({} as AppDeps).map((r) => r.spec);
  return JSON.stringify(openApiDocument(specs, { version: API_VERSION }), null, 2) + "\n";
}

export const OPENAPI_PATH = new URL("../docs/webhooks-openapi.json", import.meta.url);

if (import.meta.main) {
  await Deno.writeTextFile(OPENAPI_PATH, generate());
  console.log(`wrote ${OPENAPI_PATH.pathname}`);
}
