// docs/api/index.html, the rendered reference of the configuration API, must be what the pinned renderer
// makes of docs/webhooks-openapi.json now, and must load nothing from the network when opened: it is
// read from a checkout or served as is, by people who may be offline or behind a strict proxy. Every
// operation in it reads well: a short summary, and realistic examples that its schemas accept.
import type { z } from "zod";
import { assert, assertEquals } from "./helpers/assert.ts";
import { API_REFERENCE, renderApiReference } from "../scripts/gen-docs.ts";
import { CHROMIUM, launchBrowser } from "../web/tests/helpers/browser.ts";
import { document, routes } from "../supabase/functions/webhooks/app.ts";
import type { AppDeps } from "../supabase/functions/_shared/app.ts";
import type { RouteSpec } from "../supabase/functions/webhooks/route.ts";

type Schema = {
  $ref?: string;
  example?: unknown;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};
type Media = { schema: Schema; example?: unknown };
type Operation = {
  summary: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

const doc = document() as unknown as Doc;
const resolve = (s: Schema): Schema =>
  s.$ref ? resolve(doc.components.schemas[s.$ref.split("/").pop()!]!) : s;

/** The example the reference shows for a body: the media type's own, or its schema's. */
const exampleOf = (m: Media): unknown => m.example ?? resolve(m.schema).example;

/**
 * Keys of `value` its documented schema does not name, as paths: zod's parse lets unknown keys of an
 * output object through, so an example could keep a field the API no longer has.
 */
export function undocumentedKeys(value: unknown, schema: Schema, path = "$"): string[] {
  const s = resolve(schema);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) {
    const found = branches.map((b) => undocumentedKeys(value, b, path));
    return found.find((f) => f.length === 0) ?? found[0]!;
  }
  if (Array.isArray(value)) {
    return s.items ? value.flatMap((v, i) => undocumentedKeys(v, s.items!, `${path}[${i}]`)) : [];
  }
  if (value === null || typeof value !== "object") return [];
  const properties: Record<string, Schema> = {};
  let open = s.additionalProperties;
  for (const part of [s, ...(s.allOf ?? []).map(resolve)]) {
    Object.assign(properties, part.properties);
    open ??= part.additionalProperties;
  }
  if (Object.keys(properties).length === 0) return []; // a record: any key
  return Object.entries(value).flatMap(([k, v]) =>
    properties[k]
      ? undocumentedKeys(v, properties[k], `${path}.${k}`)
      : open
      ? typeof open === "object" ? undocumentedKeys(v, open, `${path}.${k}`) : []
      : [`${path}.${k}`]
  );
}

/** What is wrong with one declared example, or nothing. */
function exampleProblems(what: string, media: Media | undefined, schema: z.ZodType): string[] {
  const example = media && exampleOf(media);
  if (example === undefined) return [`${what} has no example`];
  const parsed = schema.safeParse(example);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => `${what}'s example: ${i.path.join(".") || "(root)"}: ${i.message}`);
  return [
    ...problems,
    ...undocumentedKeys(example, media!.schema).map((k) => `${what}'s example: ${k} is not documented`),
  ];
}

function operationOf(spec: RouteSpec): Operation {
  const path = "/webhooks" + spec.path.replace(/:([A-Za-z_]+)/g, "{$1}");
  const op = doc.paths[path]?.[spec.method];
  assert(op, `${spec.method} ${path} is in the document`);
  return op;
}

Deno.test("every operation has a short summary and examples its schemas accept", () => {
  const problems: string[] = [];
  let examples = 0;
  for (const { spec } of routes({} as AppDeps)) {
    const name = `${spec.method.toUpperCase()} ${spec.path}`;
    const op = operationOf(spec);
    if (op.summary.length > 60) {
      problems.push(
        `${name}: summary is ${op.summary.length} characters (at most 60; the rest goes in description)`,
      );
    }
    if (spec.body) {
      problems.push(
        ...exampleProblems(`${name} request`, op.requestBody?.content["application/json"], spec.body),
      );
      examples++;
    }
    for (const [status, res] of Object.entries(spec.responses)) {
      if (Number(status) >= 300) continue;
      if (!res.schema) {
        if (Number(status) !== 204) {
          problems.push(`${name} ${status}: a response without a schema (204 has none)`);
        }
        continue;
      }
      problems.push(
        ...exampleProblems(
          `${name} ${status}`,
          op.responses[status]?.content?.["application/json"],
          res.schema,
        ),
      );
      examples++;
    }
  }
  assertEquals(problems, [], "see RouteSpec in supabase/functions/webhooks/route.ts");
  assert(examples > 60, `${examples} examples checked`);
});

Deno.test("an example with a field its schema lacks, or lacking one it requires, is caught", async () => {
  const { z } = await import("zod");
  const schema = z.object({ id: z.uuid(), items: z.array(z.object({ n: z.number() })) });
  const media = (example: unknown): Media => ({
    example,
    schema: {
      properties: { id: {}, items: { items: { properties: { n: {} } } } },
    },
  });
  const id = "5d6e7f80-9a1b-4c2d-8e3f-4a5b6c7d8e9f";
  assertEquals(exampleProblems("x", media({ id, items: [{ n: 1 }] }), schema), []);
  assertEquals(exampleProblems("x", media({ id, items: [{ n: 1, gone: true }] }), schema), [
    "x's example: $.items[0].gone is not documented",
  ]);
  assertEquals(exampleProblems("x", media({ items: [] }), schema).length, 1);
  assertEquals(exampleProblems("x", { schema: {} }, schema), ["x has no example"]);
});

const LOCAL = /^(file|data|blob|about):/;

Deno.test("docs/api/index.html is rendered from the current OpenAPI document (run `npm run docs`)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "api-reference-" });
  try {
    const fresh = new URL(`file://${dir}/index.html`);
    await renderApiReference(fresh);
    const committed = await Deno.readTextFile(API_REFERENCE);
    // Compared as text but reported briefly: the file is 2.5 MB of mostly inlined JavaScript.
    assert(committed === await Deno.readTextFile(fresh), "docs/api/index.html is stale: run `npm run docs`");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the API reference inlines its scripts and forbids every fetch by policy", async () => {
  const html = await Deno.readTextFile(API_REFERENCE);
  assert(
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none';/.test(html),
    "the page carries a Content-Security-Policy that allows no fetch (scripts/docs/api-reference.hbs)",
  );
  const external = [...html.matchAll(/<(script|link|img|iframe)\b[^>]*\b(src|href)="([^"]*)"/g)]
    .map((m) => m[3]!)
    .filter((url) => !url.startsWith("#") && !LOCAL.test(url));
  assertEquals(external, [], "no element of the page loads a URL");
  assert(html.includes("__redoc_definition"), "the OpenAPI document is embedded");
});

let chromium = true;
try {
  await Deno.stat(CHROMIUM);
} catch {
  chromium = false;
}

Deno.test({
  name: "opened from the file system in Chromium, the reference renders and nothing reaches the network",
  ignore: !chromium, // .ci/run installs Chromium; without it this check is reported as ignored
  async fn() {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const requested: string[] = [];
      const blocked = new Map<string, string>();
      page.on("request", (r) => requested.push(r.url()));
      page.on("requestfailed", (r) => blocked.set(r.url(), r.failure()?.errorText ?? ""));
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      await page.goto(API_REFERENCE.href);
      await page.getByText("Webhook Logs", { exact: true }).first().click();
      await page.getByText("List deliveries, newest first", { exact: false }).first().click();
      await page.getByText("permanently_failed").first().waitFor();
      assertEquals(new URL(page.url()).hash, "#/webhook-logs/paths/~1webhooks~1deliveries/get");
      // The events a receiver gets are in the reference too, each with its body's schema and example.
      await page.getByText("donation.recorded", { exact: true }).first().click();
      await page.getByText("A row is inserted into", { exact: false }).first().waitFor();
      assertEquals(errors, []);
      // Not even a request the page's policy would refuse (the renderer's logo is drawn inline).
      assertEquals(requested.filter((url) => !LOCAL.test(url)), [], "no request leaves the page");
      assertEquals([...blocked.keys()].filter((url) => !LOCAL.test(url)), []);
    } finally {
      await browser.close();
    }
  },
});
