/**
 * The scheduler of a pinned regression: it releases the calls in the order fast-check printed for the shrunk
 * schedule (task ids count the calls in the order they were scheduled, from 1), and once that order is used up, or
 * names a call the code no longer makes (the runtime changed), the oldest call waiting. fast-check's own
 * `schedulerFor` throws in both cases; a regression must keep running on fixed code to show that the invariant holds.
 *
 * Like fast-check's scheduler (`waitNext`), it waits until the released call's continuation has run and then lets
 * the microtasks settle (fast-check waits 50 ticks of quiet) before the world takes its next step: the reconciles'
 * next calls are then scheduled, and numbered, in the order they were when the schedule was found.
 */
export class OrderedScheduler {
  private readonly waiting: Array<{ readonly id: number; readonly release: () => Promise<unknown> }> = [];
  private nextId = 1;
  private step = 0;

  constructor(private readonly order: readonly number[]) {}

  public schedule<T>(task: Promise<T>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => this.waiting.push({ id, release: () => task.then(resolve, reject) }));
  }

  public count(): number {
    return this.waiting.length;
  }

  public async waitNext(n: number): Promise<void> {
    for (let i = 0; i < n && this.waiting.length; i++) {
      const wanted = this.order[this.step++];
      const at = Math.max(
        0,
        this.waiting.findIndex((t) => t.id === wanted),
      );
      await this.waiting.splice(at, 1)[0].release();
      for (let tick = 0; tick < QUIET_TICKS; tick++) await Promise.resolve();
    }
  }
}

/** Microtask ticks fast-check's scheduler lets pass, with nothing new scheduled, before it resolves a wait. */
const QUIET_TICKS = 50;
