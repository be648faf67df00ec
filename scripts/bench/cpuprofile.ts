// Summarizes a V8 .cpuprofile (deno run --cpu-prof-dir=...) by function and by module: self time (the
// function was on top of the stack) and total time (anywhere on the stack, counted once per sample even
// under recursion), as milliseconds and as a share of the busy (non-idle) samples. With --per=N also the
// time per unit of work, e.g. µs per delivery.
//   deno run -R scripts/bench/cpuprofile.ts /tmp/prof/CPU.*.cpuprofile [--top=20] [--per=20000]
// Modules: npm packages by name (npm:postgres, npm:undici), Deno's runtime by extension (ext:deno_node,
// ext:core), project files by path, and V8's own entries ((garbage collector), (program), (idle)).

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileArgs {
  files: string[];
  /** Rows per table. */
  top: number;
  /** Units of work (e.g. deliveries) to divide by; 0 for none. */
  per: number;
}

/** The command line of both profile summaries: files, --top=N, --per=N; exits with `usage` if no file. */
export function profileArgs(usage: string): ProfileArgs {
  const files = Deno.args.filter((a) => !a.startsWith("--"));
  const flag = (name: string, fallback: number) =>
    Number(Deno.args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
  if (files.length === 0) {
    console.error(`usage: ${usage}`);
    Deno.exit(2);
  }
  return { files, top: flag("top", 20), per: flag("per", 0) };
}

const root = new URL("../../", import.meta.url).href;

export function moduleOf(url: string, fn: string): string {
  if (url === "") return fn.startsWith("(") ? fn : "(native / builtin)";
  const npm = url.match(/\/npm\/[^/]+\/((?:@[^/]+\/)?[^/@]+)\//) ??
    url.match(/node_modules\/(?:\.deno\/)?((?:@[^/]+\/)?[^/@]+)/);
  if (npm) return `npm:${npm[1]!.replace(/@[\d.]+.*$/, "")}`;
  if (url.startsWith("ext:")) return `ext:${url.slice(4).split("/")[0]}`;
  if (url.startsWith("node:")) return url;
  if (url.startsWith(root)) return url.slice(root.length);
  return url;
}

function summarize(path: string, { top, per }: ProfileArgs) {
  const p = JSON.parse(Deno.readTextFileSync(path)) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fnKey = (n: ProfileNode) => {
    const f = n.callFrame;
    const mod = moduleOf(f.url, f.functionName);
    return `${f.functionName || "(anonymous)"} ${mod}${f.url ? `:${f.lineNumber + 1}` : ""}`;
  };
  const modKey = (n: ProfileNode) => moduleOf(n.callFrame.url, n.callFrame.functionName);
  const selfFn = new Map<string, number>();
  const totalFn = new Map<string, number>();
  const selfMod = new Map<string, number>();
  const totalMod = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let all = 0;
  let idle = 0;
  // timeDeltas[i] is the time before sample i; the time a sample stands for is the gap after it.
  for (let i = 0; i < p.samples.length; i++) {
    const us = p.timeDeltas[i + 1] ?? 0;
    const leaf = byId.get(p.samples[i]!)!;
    all += us;
    if (leaf.callFrame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    add(selfFn, fnKey(leaf), us);
    add(selfMod, modKey(leaf), us);
    const seenFn = new Set<string>();
    const seenMod = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      if (n.callFrame.functionName === "(root)") break;
      const fk = fnKey(n);
      const mk = modKey(n);
      if (!seenFn.has(fk)) (seenFn.add(fk), add(totalFn, fk, us));
      if (!seenMod.has(mk)) (seenMod.add(mk), add(totalMod, mk, us));
    }
  }
  const busy = all - idle;
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const pct = (us: number) => `${(100 * us / busy).toFixed(1).padStart(5)}%`;
  const perUnit = (us: number) => (per ? `${(us / per).toFixed(1).padStart(7)} µs` : "");
  const table = (
    title: string,
    self: Map<string, number>,
    total: Map<string, number>,
    by: "self" | "total",
  ) => {
    console.log(`\n${title}, top ${top} by ${by} time (ms, % of busy${per ? `, per unit of ${per}` : ""})`);
    const keys = [...(by === "self" ? self : total).entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    console.log(
      `  ${"self ms".padStart(7)} ${"self%".padStart(6)} ${per ? "   self/unit " : ""}` +
        `${"total ms".padStart(8)} ${"total%".padStart(6)}  name`,
    );
    for (const [k] of keys) {
      const s = self.get(k) ?? 0;
      const t = total.get(k) ?? 0;
      console.log(`  ${ms(s)} ${pct(s)} ${perUnit(s)} ${ms(t).padStart(8)} ${pct(t)}  ${k}`);
    }
  };
  console.log(
    `${path}: ${(all / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy, ` +
      `${(idle / 1e6).toFixed(2)} s idle${per ? `; busy ${(busy / per).toFixed(1)} µs per unit` : ""}`,
  );
  table("By module", selfMod, totalMod, "self");
  table("By function", selfFn, totalFn, "self");
  table("By function", selfFn, totalFn, "total");
}

if (import.meta.main) {
  const options = profileArgs("deno run -R scripts/bench/cpuprofile.ts FILE.cpuprofile [--top=20] [--per=N]");
  for (const path of options.files) summarize(path, options);
}
