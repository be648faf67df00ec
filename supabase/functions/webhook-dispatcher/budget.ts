// How much one run may still claim. A hosted Edge Function has a CPU-time limit per request, background
// work included: the run measures its own CPU time and stops claiming once what it used, plus what the
// rows it holds and the next claim would cost, reaches its budget less a margin kept for recording the
// last results and asking for the next run. A row's cost is the marginal one, measured from the first
// results on: a run's start (connections, the first claim, code not yet optimized) is paid once and is
// already in what it used; spread over the first rows it made them look ten times dearer, and runs
// stopped after a few hundred deliveries with most of their budget unused. Optionally a row cap too.
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
/** Assumed CPU cost of a delivery until the run has measured its own (about 10x the measured one). */
export const FIRST_ESTIMATE_MS = 2;
/** Rows recorded after the first results before their cost is taken as measured. */
export const SAMPLE_ROWS = 32;
/**
 * How long before a run's budget is spent, at the pace it spends CPU, it asks for its successor: pg_net
 * takes a request up within about a second, and the successor needs a few hundred ms to start.
 */
export const HANDOVER_LEAD_MS = 1500;

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
  /** CPU used and rows recorded when results were first seen: the marginal cost is measured from here. */
  private base: { cpu: number; recorded: number } | undefined;

  private readonly wallStart: number;

  constructor(
    private readonly limits: { cpuMs?: number; maxRows?: number },
    private readonly cpuMs = processCpuMs,
    private readonly now = () => performance.now(),
  ) {
    this.cpuStart = cpuMs();
    this.wallStart = now();
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

  /**
   * Time to ask for a successor: half the row cap claimed; or at least half the usable CPU used and, at
   * the pace the run has spent it, the rest gone within HANDOVER_LEAD_MS. Asked much earlier, the two
   * runs overlap for long, and where they share a process each is charged the other's CPU as well.
   */
  handOver(p: Progress): boolean {
    if (this.limits.maxRows !== undefined && p.claimed * 2 >= this.limits.maxRows) return true;
    if (this.limits.cpuMs === undefined) return false;
    const usable = this.limits.cpuMs * (1 - CPU_MARGIN);
    const used = this.cpuUsed;
    if (used * 2 < usable) return false;
    const perMs = used / Math.max(1, this.now() - this.wallStart);
    return (usable - used) / perMs <= HANDOVER_LEAD_MS;
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
    if (this.base === undefined && p.recorded > 0) this.base = { cpu: used, recorded: p.recorded };
    const sample = this.base ? p.recorded - this.base.recorded : 0;
    const perRow = this.base && sample >= SAMPLE_ROWS ? (used - this.base.cpu) / sample : FIRST_ESTIMATE_MS;
    return Math.floor((this.limits.cpuMs * (1 - CPU_MARGIN) - used) / perRow) - p.held;
  }
}
