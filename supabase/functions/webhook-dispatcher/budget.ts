// How much one run may still claim. A hosted Edge Function has a CPU-time limit per request, background
// work included: the run measures its own CPU time and stops claiming once what it used, plus what the
// rows it holds and the next claim would cost at the rate measured so far, reaches its budget less a
// margin kept for recording the last results and asking for the next run. Optionally a row cap too.
// docs/architecture.md#the-runs-budget-on-a-hosted-project
import process from "node:process";

export interface Progress {
  /** Rows claimed in this run. */
  claimed: number;
  /** Their outcomes recorded. */
  recorded: number;
  /** Rows claimed (or being claimed) whose outcome is not recorded yet. */
  held: number;
}

/** Share of the CPU budget kept for what follows the last claim. */
export const CPU_MARGIN = 0.25;
/** Assumed CPU cost of a delivery until the run has measured its own: a cold process's first take ~4 ms. */
export const FIRST_ESTIMATE_MS = 2;

/** This process's CPU time in ms (user + system); elapsed time where the runtime cannot tell. */
export const processCpuMs: () => number = (() => {
  try {
    process.cpuUsage();
    return () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
  } catch {
    return () => performance.now();
  }
})();

export class RunBudget {
  private readonly cpuStart: number;

  constructor(
    private readonly limits: { cpuMs?: number; maxRows?: number },
    private readonly cpuMs = processCpuMs,
  ) {
    this.cpuStart = cpuMs();
  }

  /** CPU time used since the run began. */
  get cpuUsed(): number {
    return this.cpuMs() - this.cpuStart;
  }

  /** Rows a claim may take now; 0 once spent. A run that has claimed nothing may take one: chains progress. */
  allowance(p: Progress): number {
    const left = Math.max(0, Math.min(this.rowsLeft(p), this.cpuRowsLeft(p)));
    return p.claimed === 0 ? Math.max(1, left) : left;
  }

  /** What ran out, if anything. */
  spent(p: Progress): "rows" | "cpu" | undefined {
    if (this.rowsLeft(p) <= 0) return "rows";
    return p.claimed > 0 && this.cpuRowsLeft(p) <= 0 ? "cpu" : undefined;
  }

  private rowsLeft(p: Progress): number {
    return (this.limits.maxRows ?? Infinity) - p.claimed;
  }

  private cpuRowsLeft(p: Progress): number {
    if (this.limits.cpuMs === undefined) return Infinity;
    const used = this.cpuUsed;
    // Per recorded row, over everything used so far: start-up and rows in flight count too, so the
    // estimate errs high while the run is young.
    const perRow = p.recorded > 0 ? used / p.recorded : FIRST_ESTIMATE_MS;
    return Math.floor((this.limits.cpuMs * (1 - CPU_MARGIN) - used) / perRow) - p.held;
  }
}
