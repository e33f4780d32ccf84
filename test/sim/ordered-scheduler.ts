/**
 * The scheduler of a pinned regression: it releases the calls in the order fast-check printed for the shrunk
 * schedule (task ids count the calls in the order they were scheduled, from 1), and once that order is used up, or
 * names a call the code no longer makes (the runtime changed), the oldest call waiting. fast-check's own
 * `schedulerFor` throws in both cases; a regression must keep running on fixed code to show that the invariant holds.
 */
export class OrderedScheduler {
  private readonly waiting: Array<{ readonly id: number; readonly release: () => void }> = [];
  private nextId = 1;
  private step = 0;

  constructor(private readonly order: readonly number[]) {}

  public schedule<T>(task: Promise<T>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) =>
      this.waiting.push({ id, release: () => void task.then(resolve, reject) }),
    );
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
      this.waiting.splice(at, 1)[0].release();
      await Promise.resolve();
    }
  }
}
