// One dispatcher run at a time per isolate. A run's CPU budget is measured on the whole process
// (budget.ts): two runs side by side in one worker would each be charged the other's work and together
// overrun the platform's limit. A run posted while another is going (the next cron minute, a wake-up,
// the successor its predecessor asked for) waits for it and then has the CPU clock to itself; one posted
// while a run already waits joins that one, whose plan is widened to cover both, so wake-ups arriving
// during a long run never pile up into a chain of runs. docs/architecture.md#the-runs-budget-on-a-hosted-project

/** What a run is asked to do (a POST's body, with the budget already bounded). */
export interface RunPlan {
  budgetMs: number;
  stopWhenIdle: boolean;
  idleGraceMs?: number;
  maxDeliveries?: number;
}

/** Both requests' work: the longer budget and grace, polling unless both stop when idle, no cap unless both have one. */
export function widen(into: RunPlan, also: RunPlan): void {
  into.budgetMs = Math.max(into.budgetMs, also.budgetMs);
  into.stopWhenIdle &&= also.stopWhenIdle;
  if (into.idleGraceMs !== undefined || also.idleGraceMs !== undefined) {
    into.idleGraceMs = Math.max(into.idleGraceMs ?? 0, also.idleGraceMs ?? 0);
  }
  into.maxDeliveries = into.maxDeliveries === undefined || also.maxDeliveries === undefined
    ? undefined
    : Math.max(into.maxDeliveries, also.maxDeliveries);
}

export interface Submitted<T> {
  result: Promise<T>;
  /** True when the request joined a run already waiting (no run of its own). */
  joined: boolean;
}

export class OneRunAtATime<T> {
  /** The last run started or waiting; settles (never rejects) when it ends. */
  private last: Promise<void> | undefined;
  private waiting: { plan: RunPlan; result: Promise<T> } | undefined;

  /** Runs `run(plan)` now, after the run going, or as part of the run already waiting. */
  submit(plan: RunPlan, run: (plan: RunPlan) => Promise<T>): Submitted<T> {
    if (this.waiting) {
      widen(this.waiting.plan, plan);
      return { result: this.waiting.result, joined: true };
    }
    let result: Promise<T>;
    if (this.last === undefined) result = run(plan);
    else {
      const entry = { plan: { ...plan } } as { plan: RunPlan; result: Promise<T> };
      entry.result = this.last.then(() => {
        if (this.waiting === entry) this.waiting = undefined;
        return run(entry.plan);
      });
      this.waiting = entry;
      result = entry.result;
    }
    const settled: Promise<void> = result.then(() => {}, () => {}).then(() => {
      if (this.last === settled) this.last = undefined;
    });
    this.last = settled;
    return { result, joined: false };
  }

  /** Whether a run is going or waiting. */
  get busy(): boolean {
    return this.last !== undefined;
  }
}
