// `supabase functions deploy` resolves a function's bare imports ("hono", "zod", ...) only through the
// import map its [functions.<name>] block in supabase/config.toml names (or a deno.json in the function's
// folder, or supabase/functions/import_map.json); the repository's deno.json, which points everything
// else at import_map.json, is not read. So each function must name a map, and its module graph must
// type-check with that map and nothing else, as the deploy bundler will see it.
import { assert, assertEquals } from "./helpers/assert.ts";
import { parse } from "smol-toml";

const root = new URL("../", import.meta.url);
const supabaseDir = new URL("supabase/", root);

async function functionNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(new URL("functions/", supabaseDir))) {
    if (e.isDirectory && !e.name.startsWith("_") && !e.name.startsWith(".")) names.push(e.name);
  }
  return names.sort();
}

/**
 * `deno check` of entry points with no configuration file, only the given import map (if any): those
 * that share a map in one run, so the modules they share are checked once.
 */
async function checkAlone(entries: URL[], importMap?: URL) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "check",
      "--quiet",
      "--no-config",
      ...(importMap ? ["--import-map", importMap.pathname] : []),
      ...entries.map((e) => e.pathname),
    ],
    cwd: "/", // nowhere near the repository's deno.json
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { ok: out.success, text: new TextDecoder().decode(out.stderr) };
}

Deno.test("every function names an import map in supabase/config.toml, and its graph checks with only that map", async () => {
  const config = parse(await Deno.readTextFile(new URL("config.toml", supabaseDir))) as {
    functions?: Record<string, { import_map?: string; entrypoint?: string }>;
  };
  const names = await functionNames();
  assert(names.length >= 5, names.join(", "));
  const byMap = new Map<string, { names: string[]; entries: URL[] }>();
  for (const name of names) {
    const block = config.functions?.[name];
    assert(block?.import_map, `[functions.${name}] names no import_map in supabase/config.toml`);
    // The CLI reads these paths relative to supabase/.
    const group = byMap.get(block.import_map) ?? { names: [], entries: [] };
    group.names.push(name);
    group.entries.push(new URL(block.entrypoint ?? `./functions/${name}/index.ts`, supabaseDir));
    byMap.set(block.import_map, group);
  }
  for (const [map, { names, entries }] of byMap) {
    const { ok, text } = await checkAlone(entries, new URL(map, supabaseDir));
    assert(ok, `${names.join(", ")}: does not check with ${map} alone:\n${text}`);
  }
});

Deno.test("without an import map a function's bare imports do not resolve (the check above is not vacuous)", async () => {
  const { ok, text } = await checkAlone([new URL("functions/webhooks/index.ts", supabaseDir)]);
  assertEquals(ok, false);
  assert(/hono|zod/.test(text), text);
});
