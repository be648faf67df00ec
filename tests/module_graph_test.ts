// Every deployed function is self-contained: its module graph, as `deno info` resolves it
// from its index.ts, holds only files of its own folder and of _shared/, and nothing under _shared/
// imports a function folder. Supabase deploys each function with the files it imports; a function that
// reached into another's folder would ship (and run) that function's code.
import { assert, assertEquals } from "./helpers/assert.ts";

const functionsDir = new URL("../supabase/functions/", import.meta.url);

async function functionNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(functionsDir)) {
    if (e.isDirectory && !e.name.startsWith("_") && !e.name.startsWith(".")) names.push(e.name);
  }
  return names.sort();
}

async function localModules(entry: URL): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry.href],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: { specifier: string }[] };
  return info.modules.map((m) => m.specifier).filter((s) => s.startsWith("file://"));
}

Deno.test("each function's module graph is its own folder and _shared/ only", async () => {
  const names = await functionNames();
  assert(names.length >= 5, `found functions: ${names.join(", ")}`);
  const shared = new URL("_shared/", functionsDir).href;
  for (const name of names) {
    const own = new URL(`${name}/`, functionsDir).href;
    const modules = await localModules(new URL(`${name}/index.ts`, functionsDir));
    assert(modules.length > 1, `${name}: resolved ${modules.length} modules`);
    const foreign = modules.filter((m) => !m.startsWith(own) && !m.startsWith(shared));
    assertEquals(foreign, [], `${name} imports files outside its folder and _shared/`);
  }
});

Deno.test("no file under _shared/ imports a function folder", async () => {
  const shared = new URL("_shared/", functionsDir);
  const files: URL[] = [];
  const walk = async (dir: URL) => {
    for await (const e of Deno.readDir(dir)) {
      const url = new URL(e.name + (e.isDirectory ? "/" : ""), dir);
      if (e.isDirectory) await walk(url);
      else if (e.name.endsWith(".ts")) files.push(url);
    }
  };
  await walk(shared);
  assert(files.length > 5);
  const offending: string[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      const spec = m[1]!;
      if (!spec.startsWith(".")) continue;
      const target = new URL(spec, file).href;
      if (!target.startsWith(shared.href)) offending.push(`${file.pathname} -> ${spec}`);
    }
  }
  assertEquals(offending, []);
});
