// Small statistics helpers shared by the benchmarks.
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function summarize(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return {
    n: s.length,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    max: s.at(-1) ?? NaN,
  };
}

export function machine(): string {
  const cpus = (() => {
    try {
      return Deno.readTextFileSync("/proc/cpuinfo").split("\n").filter((l) => l.startsWith("processor"))
        .length;
    } catch {
      return "?";
    }
  })();
  return `${Deno.build.os}/${Deno.build.arch}, ${cpus} cores, Deno ${Deno.version.deno}, shared machine`;
}

export const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
