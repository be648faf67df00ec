// Summarizes a V8 sampling heap profile (dispatcher_child.ts with BENCH_HEAP_PROFILE=file) by the
// function that allocated and by module: bytes allocated (sampled, collected objects included), as MiB,
// as a share, and with --per=N per unit of work (e.g. bytes per delivery).
//   deno run -R scripts/bench/heapprofile.ts /tmp/x.heapprofile [--top=20] [--per=22000]
import { moduleOf, profileArgs } from "./cpuprofile.ts";

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const { files, top, per } = profileArgs(
  "deno run -R scripts/bench/heapprofile.ts FILE.heapprofile [--top=20] [--per=N]",
);

for (const path of files) {
  const { head } = JSON.parse(Deno.readTextFileSync(path)) as { head: HeapNode };
  const byFn = new Map<string, number>();
  const byMod = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let all = 0;
  const walk = (n: HeapNode) => {
    const f = n.callFrame;
    const mod = moduleOf(f.url, f.functionName);
    if (n.selfSize > 0) {
      all += n.selfSize;
      add(
        byFn,
        `${f.functionName || "(anonymous)"} ${mod}${f.url ? `:${f.lineNumber + 1}` : ""}`,
        n.selfSize,
      );
      add(byMod, mod, n.selfSize);
    }
    for (const c of n.children) walk(c);
  };
  walk(head);
  const mib = (b: number) => (b / 1048576).toFixed(1).padStart(8);
  const pct = (b: number) => `${(100 * b / all).toFixed(1).padStart(5)}%`;
  const perUnit = (b: number) => (per ? `${(b / per).toFixed(0).padStart(7)} B` : "");
  console.log(
    `${path}: ${mib(all).trim()} MiB allocated (sampled)${
      per ? `, ${(all / per).toFixed(0)} B per unit` : ""
    }`,
  );
  for (const [title, m] of [["By module", byMod], ["By function", byFn]] as const) {
    console.log(`\n${title}, top ${top} by bytes allocated (MiB, %${per ? ", per unit" : ""})`);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${mib(v)} ${pct(v)} ${perUnit(v)}  ${k}`);
    }
  }
}
