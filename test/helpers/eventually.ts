/** Calls `probe` every 50 ms until it holds (watches and events arrive asynchronously); fails saying `what` after `ms`. */
export async function eventually(probe: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not within ${ms} ms: ${what}`);
}

export interface EventuallyValueOptions {
  /** Between probes. @default 100 ms */
  readonly everyMs?: number;
  /** What the failure adds after the wait (the daemons' output). @default nothing */
  readonly context?: () => string;
  /** Stops the wait early with this reason (a daemon exited). @default never */
  readonly stop?: () => string | undefined;
}

/**
 * Calls `probe` until it gives a value (watches, daemons and AWS answer asynchronously) and returns it; fails saying
 * `what`, with `context`, after `ms`, or at once when `stop` gives a reason.
 */
export async function eventuallyValue<T>(
  what: string,
  ms: number,
  probe: () => T | undefined | Promise<T | undefined>,
  opts: EventuallyValueOptions = {},
): Promise<T> {
  const deadline = Date.now() + ms;
  const more = () => (opts.context ? `; ${opts.context()}` : '');
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${more()}`);
    const stopped = opts.stop?.();
    if (stopped) throw new Error(`${stopped} while waiting for ${what}${more()}`);
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 100));
  }
}
