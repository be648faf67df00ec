// Mail the local sign-in sends after it has answered (a password reset's), one at a time in the order
// asked, so the answer's timing never depends on the mail server. Bounded: past `max` waiting mails a
// new one is refused (logged by the caller) rather than held without limit.
export class MailOutbox {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;

  constructor(readonly max = 1_000) {}

  /** Mails added and not yet sent (or failed). */
  get waiting(): number {
    return this.#waiting;
  }

  /** Queues `send`; `failed` hears of its error (or of the outbox being full). */
  add(send: () => Promise<unknown> | undefined, failed: (err: unknown) => void): void {
    if (this.#waiting >= this.max) {
      failed(new Error(`mail outbox full (${this.max} waiting)`));
      return;
    }
    this.#waiting++;
    this.#tail = this.#tail.then(async () => {
      try {
        await send();
      } catch (err) {
        failed(err);
      } finally {
        this.#waiting--;
      }
    });
  }

  /** Resolves once every mail added so far has been sent or has failed. */
  settled(): Promise<void> {
    return this.#tail;
  }
}
