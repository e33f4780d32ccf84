import { ReconcilerDeps } from './context';
import { Controller } from './controller';

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
  let nextResync = 0;
  let current: Promise<unknown> = Promise.resolve();
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
        const { outcomes } = (await current) as Awaited<ReturnType<Controller['runPass']>>;
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
    await Promise.race([current.catch(() => undefined), new Promise((r) => setTimeout(r, opts.graceMs ?? 20_000).unref())]);
  }
}
