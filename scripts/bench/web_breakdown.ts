// Where the settings UI's bytes go: a production build with source maps, each byte of the minified
// JavaScript attributed to the package (or web/src folder) it came from, through the source map.
// Gzip does not split by module, so each group's gzip column is its own code gzipped alone (an upper
// bound: shared words compress better together), and the share column scales those to the real total.
// Run: deno run -A scripts/bench/web_breakdown.ts [--files]   (no database needed)
import { gzipSync } from "node:zlib";
import { buildWeb } from "../../web/tests/helpers/browser.ts";

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...B64].map((c, i) => [c, i]));

/** One segment's fields from its Base64 VLQ text. */
function decodeVlq(text: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of text) {
    const d = DIGIT.get(c)!;
    value += (d & 31) << shift;
    if (d & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}

// --files: one row per source file instead of per package or folder.
const byFile = Deno.args.includes("--files");

/** The group a source belongs to: an npm package, or a folder of web/src. */
function group(source: string): string {
  if (byFile) return source.replace(/^.*?(node_modules\/|web\/src\/)/, "");
  const nm = source.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = source.slice(nm + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const src = source.indexOf("web/src/");
  if (src >= 0) {
    const rest = source.slice(src + "web/src/".length).split("/");
    return rest.length > 2 ? `src/${rest[0]}/${rest[1]}` : `src/${rest.length > 1 ? rest[0] : "(root)"}`;
  }
  return "(other)";
}

/** Every piece of generated code, keyed by group; code no mapping covers is "(unmapped)". */
function attribute(code: string, map: { sources: string[]; mappings: string }): Map<string, string[]> {
  const pieces = new Map<string, string[]>();
  const add = (g: string, text: string) => {
    if (text) (pieces.get(g) ?? pieces.set(g, []).get(g)!).push(text);
  };
  const lines = code.split("\n");
  let sourceIndex = 0;
  map.mappings.split(";").forEach((lineMap, lineNo) => {
    const line = lines[lineNo] ?? "";
    let column = 0;
    let start = 0;
    let current = "(unmapped)";
    for (const seg of lineMap ? lineMap.split(",") : []) {
      const f = decodeVlq(seg);
      column += f[0]!;
      add(current, line.slice(start, column));
      start = column;
      if (f.length >= 4) {
        sourceIndex += f[1]!;
        current = group(map.sources[sourceIndex]!);
      } else {
        current = "(unmapped)";
      }
    }
    add(current, line.slice(start) + "\n");
  });
  return pieces;
}

const dist = await buildWeb("http://127.0.0.1:54321", "breakdown", { args: ["--sourcemap"] });
try {
  const rows: { name: string; raw: number; gz: number }[] = [];
  let total = { raw: 0, gz: 0 };
  const enc = new TextEncoder();
  for await (const f of Deno.readDir(`${dist}/assets`)) {
    if (!f.name.endsWith(".js")) continue;
    const code = await Deno.readTextFile(`${dist}/assets/${f.name}`);
    const bytes = enc.encode(code);
    total = { raw: total.raw + bytes.length, gz: total.gz + gzipSync(bytes, { level: 9 }).length };
    const map = JSON.parse(await Deno.readTextFile(`${dist}/assets/${f.name}.map`));
    for (const [name, texts] of attribute(code, map)) {
      const b = enc.encode(texts.join(""));
      rows.push({ name, raw: b.length, gz: gzipSync(b, { level: 9 }).length });
    }
  }
  const byName = new Map<string, { raw: number; gz: number }>();
  for (const r of rows) {
    const o = byName.get(r.name) ?? { raw: 0, gz: 0 };
    byName.set(r.name, { raw: o.raw + r.raw, gz: o.gz + r.gz });
  }
  const sumGz = [...byName.values()].reduce((s, r) => s + r.gz, 0);
  const w = Math.max(34, ...[...byName.keys()].map((n) => n.length));
  const kb = (n: number) => (n / 1024).toFixed(1).padStart(7);
  console.log(`${"group".padEnd(w)}    raw kB  alone gz kB  share of gz kB`);
  for (const [name, r] of [...byName].sort((a, b) => b[1].gz - a[1].gz)) {
    console.log(`${name.padEnd(w)} ${kb(r.raw)}      ${kb(r.gz)}         ${kb((r.gz / sumGz) * total.gz)}`);
  }
  console.log(
    `${"total JavaScript".padEnd(w)} ${kb(total.raw)}      ${kb(total.gz)} (gzip -9 of the chunks)`,
  );
} finally {
  await Deno.remove(dist, { recursive: true });
}
