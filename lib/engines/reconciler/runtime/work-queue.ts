/**
 * controller-runtime's work queue, for cluster names: a key is queued at most once however often it is added, a key
 * being processed is never handed out again until `done` (an add meanwhile re-queues it after), keys can be added
 * after a delay (RequeueAfter), and a key that keeps failing is delayed exponentially per key (rate-limited requeue),
 * until `forget`.
 */
export interface WorkQueueOptions {
  /** First per-key retry delay. @default 1 s */
  readonly baseDelayMs?: number;
  /** Per-key retry delay cap. @default 5 min */
  readonly maxDelayMs?: number;
  /** Clock. @default Date.now */
  readonly now?: () => number;
  /**
   * Delayed keys join the queue by themselves (a timer). Without, they join when `tryGet`/`get` look, and the caller
   * sleeps until `nextAt()` itself (`reconcile --once` on an injected clock). @default true
   */
  readonly timers?: boolean;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, number>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private timer?: NodeJS.Timeout;
  private shut = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly now: () => number;
  private readonly timers: boolean;

  constructor(opts: WorkQueueOptions = {}) {
    this.baseDelayMs = opts.baseDelayMs ?? 1000;
    this.maxDelayMs = opts.maxDelayMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
    this.timers = opts.timers ?? true;
  }

  public add(key: string): void {
    if (this.shut || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.delayed.delete(key);
    if (this.processing.has(key)) return; // re-queued by done()
    this.queue.push(key);
    this.hand();
  }

  /** Adds the key once `ms` have passed; an earlier add wins. */
  public addAfter(key: string, ms: number): void {
    if (this.shut) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.now() + ms;
    const existing = this.delayed.get(key);
    if (existing !== undefined && existing <= at) return;
    this.delayed.set(key, at);
    this.schedule();
  }

  /** Adds the key after its own exponential delay (1 s, 2 s, 4 s … capped), for errors that are not the key's fault. */
  public addRateLimited(key: string): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (n - 1));
    this.addAfter(key, delay);
    return delay;
  }

  /** The key succeeded: its rate-limit history is cleared. */
  public forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key to process; waits for one. undefined once shut down. */
  public get(): Promise<string | undefined> {
    const key = this.take();
    if (key !== undefined || this.shut) return Promise.resolve(key);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** The next key ready now, without waiting; undefined when none is (delayed keys whose time has come are ready). */
  public tryGet(): string | undefined {
    return this.shut ? undefined : this.take();
  }

  /** When the earliest delayed key is due (clock time); undefined when none is delayed. */
  public nextAt(): number | undefined {
    return this.delayed.size ? Math.min(...this.delayed.values()) : undefined;
  }

  /** Keys queued or delayed, and not being processed. */
  public get waiting(): number {
    return this.queue.length + [...this.delayed.keys()].filter((k) => !this.dirty.has(k)).length;
  }

  /** Processing of `key` ended: if it was added meanwhile, it is queued again. */
  public done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.queue.includes(key)) {
      this.queue.push(key);
      this.hand();
    }
  }

  public shutDown(): void {
    this.shut = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private take(): string | undefined {
    this.promote();
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.dirty.delete(key);
    this.processing.add(key);
    return key;
  }

  private hand(): void {
    while (this.waiters.length && this.queue.length) {
      const key = this.take();
      if (key === undefined) break;
      this.waiters.shift()?.(key);
    }
  }

  /** Delayed keys whose time has come join the queue. */
  private promote(): void {
    const now = this.now();
    for (const [key, at] of this.delayed) {
      if (at > now) continue;
      this.delayed.delete(key);
      if (this.dirty.has(key)) continue;
      this.dirty.add(key);
      if (!this.processing.has(key)) this.queue.push(key);
    }
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.delayed.size === 0 || this.shut || !this.timers) return;
    const next = Math.min(...this.delayed.values());
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.promote();
        this.hand();
        this.schedule();
      },
      Math.max(0, next - this.now()),
    );
    this.timer.unref();
  }
}
