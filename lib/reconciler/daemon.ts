import { ReconcilerDeps } from './context';
import { Controller, PassResult } from './controller';

export interface DaemonOptions {
  /** Full pass over every object this often, whatever the events said. @default 10 min */
  readonly resyncMs?: number;
  /** On stop, wait this long for work in hand before giving up on it. @default 20 s */
  readonly graceMs?: number;
  /** Called after each pass (for /readyz). */
  readonly onPass?: () => void;
}

/**
 * The watch loop: reacts to object changes, requeues what the workflow asked
 * for, and resyncs everything periodically. Level-based, so a missed event or
 * a restart only delays work, never loses it.
 */
export async function runDaemon(controller: Controller, deps: ReconcilerDeps, signal: AbortSignal, opts: DaemonOptions = {}): Promise<void> {
  const resyncMs = opts.resyncMs ?? 10 * 60_000;
  const due = new Map<string, number>();
  let wake: () => void = () => undefined;
  const stopWatch = deps.store.watch((name) => {
    due.set(name, 0);
    wake();
  });
  signal.addEventListener('abort', () => wake(), { once: true });
  const stopped = new Promise<undefined>((r) => (signal.aborted ? r(undefined) : signal.addEventListener('abort', () => r(undefined), { once: true })));
  let nextResync = 0;
  let current: Promise<PassResult> | undefined;
  try {
    while (!signal.aborted) {
      const now = Date.now();
      let names: Set<string> | undefined;
      if (now >= nextResync) {
        nextResync = now + resyncMs;
        due.clear();
      } else {
        names = new Set([...due].filter(([, t]) => t <= now).map(([n]) => n));
        for (const n of names) due.delete(n);
      }
      if (!names || names.size > 0) {
        current = controller.runPass(names, () => signal.aborted);
        // On SIGTERM stop at once: the pass's waits see the same signal and write what they hold within the grace period.
        const pass = await Promise.race([current, stopped]);
        if (!pass) break;
        const { outcomes } = pass;
        current = undefined;
        for (const [name, o] of outcomes) if (o.requeueAfterMs !== undefined) due.set(name, Date.now() + o.requeueAfterMs);
        opts.onPass?.();
        continue;
      }
      const next = Math.min(nextResync, ...due.values());
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(10, Math.min(next - Date.now(), 60_000)));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  } finally {
    stopWatch();
    // Work in hand gets the grace period to write its status; a wait cut short resumes on the next start.
    if (current) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((r) => (timer = setTimeout(r, opts.graceMs ?? 20_000)));
      await Promise.race([current.catch(() => undefined), grace]);
      clearTimeout(timer);
    }
  }
}
