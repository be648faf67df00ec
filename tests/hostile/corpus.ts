// The hostile-input corpus (corpus.json) and a seeded generator of mutated bodies, shared by the
// hostile-input suite. The same seed always yields the same cases, so a failure can be replayed with
// HOSTILE_SEED=<seed>.
export interface HostileCase {
  name: string;
  body: Uint8Array;
}

interface CorpusFile {
  cases: { name: string; body?: string; base64?: string }[];
  generated: { name: string; generate: string; size: number }[];
}

const enc = new TextEncoder();

function build(kind: string, size: number): string {
  switch (kind) {
    case "nest-array":
      return "[".repeat(size) + "]".repeat(size);
    case "nest-object":
      return '{"a":'.repeat(size) + "1" + "}".repeat(size);
    case "huge-string":
      return `{"event":"charged","subscription_id":"${"x".repeat(size)}"}`;
    case "many-keys":
      return "{" + Array.from({ length: size }, (_, i) => `"k${i}":${i}`).join(",") + "}";
    default:
      throw new Error(`unknown generator ${kind}`);
  }
}

export async function loadCorpus(): Promise<HostileCase[]> {
  const file = JSON.parse(await Deno.readTextFile(new URL("./corpus.json", import.meta.url))) as CorpusFile;
  const out: HostileCase[] = file.cases.map((c) => ({
    name: c.name,
    body: c.base64 !== undefined
      ? Uint8Array.from(atob(c.base64), (ch) => ch.charCodeAt(0))
      : enc.encode(c.body ?? ""),
  }));
  for (const g of file.generated) out.push({ name: g.name, body: enc.encode(build(g.generate, g.size)) });
  return out;
}

/** mulberry32: small, fast and good enough to pick mutations reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NASTY = [
  "",
  "\u0000",
  "\ud83d\ude4f",
  "\u202e",
  "'; drop table members; --",
  "%00",
  "\\",
  '"',
  "9".repeat(40),
  "-1",
  "1e999",
  "null",
  "[]",
  "{}",
  "\u00e9\u0301",
];

/** Mutates a valid JSON body: replaces values with wrong types or nasty strings, drops keys, truncates, flips bytes. */
export function mutations(valid: unknown, count: number, seed: number): HostileCase[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: HostileCase[] = [];
  for (let i = 0; i < count; i++) {
    const clone = structuredClone(valid) as unknown;
    const paths: (string | number)[][] = [];
    const walk = (v: unknown, path: (string | number)[]) => {
      paths.push(path);
      if (Array.isArray(v)) v.forEach((x, j) => walk(x, [...path, j]));
      else if (v && typeof v === "object") { for (const [k, x] of Object.entries(v)) walk(x, [...path, k]); }
    };
    walk(clone, []);
    const target = pick(paths.filter((p) => p.length > 0));
    const kind = pick(["type", "nasty", "drop", "truncate", "flip"] as const);
    let text: string;
    if (target && (kind === "type" || kind === "nasty" || kind === "drop")) {
      const parent = target.slice(0, -1).reduce<unknown>(
        (o, k) => (o as Record<string | number, unknown>)[k],
        clone,
      ) as
        | Record<string | number, unknown>
        | unknown[];
      const key = target.at(-1)!;
      if (kind === "drop") {
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else delete (parent as Record<string, unknown>)[key];
      } else {
        (parent as Record<string | number, unknown>)[key] = kind === "nasty"
          ? pick(NASTY)
          : pick([null, true, 0, -1, 1.5, 2 ** 63, "x", [], {}, [null], { a: 1 }]);
      }
      text = JSON.stringify(clone);
    } else {
      text = JSON.stringify(clone);
      if (kind === "truncate") text = text.slice(0, Math.floor(rand() * text.length));
    }
    const body = enc.encode(text);
    if (kind === "flip" && body.length > 0) {
      const at = Math.floor(rand() * body.length);
      body[at] = body[at]! ^ (1 << Math.floor(rand() * 8));
    }
    out.push({ name: `seed ${seed} #${i} ${kind} ${target?.join(".") ?? ""}`, body });
  }
  return out;
}
