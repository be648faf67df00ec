// How the run loop waits: for a ring (a wake-up, a send or a write ended) or a timeout. One waiter at a
// time; a ring with nobody waiting is dropped, so a waiter looks at its state before each wait.
export class Doorbell {
  private waiter: (() => void) | undefined;

  ring(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Resolves true when `ms` passed first, false when rung first. */
  wait(ms?: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(() => {
        this.waiter = undefined;
        resolve(true);
      }, ms);
      this.waiter = () => {
        clearTimeout(timer);
        resolve(false);
      };
    });
  }
}
