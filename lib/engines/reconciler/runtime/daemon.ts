import * as fs from 'node:fs';
import { ReconcilerDeps } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { Controller } from './controller';
import { DaemonPass } from './pass';
import { WorkQueue } from './work-queue';

export interface DaemonOptions {
  /** Every cluster is queued this often, whatever the events said. @default 10 min */
  readonly resyncMs?: number;
  /** On stop, wait this long for reconciles in hand before giving up on them. @default 20 s */
  readonly graceMs?: number;
  /** Reconciles running at the same time. @default 4 */
  readonly workers?: number;
  /** Called when the first pass is done (every object reconciled once: /readyz) and when each resync's pass is. */
  readonly onPass?: () => void;
  /** Called with each reconcile's result (logs and metrics are the controller's; this is for tests and the bench). */
  readonly onOutcome?: (name: string, result: string) => void;
}

/**
 * The daemon: a work queue of cluster names fed by the store's watch, a watch on the config templates, requeues the
 * workflow asks for, and a periodic resync. Workers take one name at a time and never wait on a stack (a stack in
 * progress is requeued and looked at again after a poll interval), so an edit to one cluster is acted on at once
 * however many stacks are rolling. Level-based: a missed event or a restart only delays work, never loses it.
 */
export async function runDaemon(
  controller: Controller,
  deps: ReconcilerDeps,
  signal: AbortSignal,
  opts: DaemonOptions = {},
): Promise<void> {
  const queue = new WorkQueue({ baseDelayMs: deps.backoff.baseMs, maxDelayMs: deps.backoff.maxMs });
  // One scheduling path: the first pass and every resync queue every object (controller-runtime's initial list);
  // a pass is done when each of its keys has been reconciled once (then its `pass done` line, and onPass).
  const passes = new Set<DaemonPass>();
  const addAll = async () => {
    try {
      const pass = await controller.queuePass(queue);
      if (pass.size === 0) return passDone();
      passes.add(pass);
    } catch (e) {
      deps.log.error({ err: String(e) }, 'could not list the cluster objects; retrying at the next resync');
    }
  };
  const passDone = () => opts.onPass?.();
  const reconciled = async (key: string, outcome: Outcome | undefined) => {
    for (const p of [...passes]) {
      if (await p.reconciled(key, outcome)) {
        passes.delete(p);
        passDone();
      }
    }
  };
  const stopWatch = deps.store.watch((name) => queue.add(name));
  // Everything that feeds a stack is watched: an edited config template re-renders every cluster (unchanged ones cost a hash).
  const stopTemplates = watchTemplates(deps.templatesDir, () => {
    controller.refreshTemplates();
    void addAll();
  });
  // A policy edit (`rollout resume`, a new wave) can release held clusters: every cluster is looked at again.
  const stopPolicies = controller.watchPolicies(() => void addAll());
  // A wave that rolled, settled or lost its halt releases clusters held behind it: they are looked at now, not at
  // their recheck (the fleet rollout's wave watch says which).
  const stopWake = controller.onWake((names) => names.forEach((n) => queue.add(n)));
  const resync = setInterval(() => void addAll(), opts.resyncMs ?? 10 * 60_000);
  // Not unref'd: the resync keeps the process alive while the daemon runs, whatever else does (no --port, nothing
  // requeued, a store whose watch holds no handle); cleared on stop.
  signal.addEventListener('abort', () => queue.shutDown(), { once: true });
  deps.log.info(
    { workers: opts.workers ?? 4, resyncMs: opts.resyncMs ?? 10 * 60_000, pollMs: deps.pollMs },
    'reconciler started',
  );

  // The fleet gauges follow the store, refreshed at most once a second after reconciles (not once per reconcile).
  let gauges: NodeJS.Timeout | undefined;
  const refreshGauges = () => {
    gauges ??= setTimeout(() => {
      gauges = undefined;
      void controller.observeFleet(new Map(), []);
    }, 1000);
  };
  const inHand = new Set<Promise<void>>();
  const worker = async () => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const job = (async () => {
        let outcome: Outcome | undefined;
        try {
          outcome = shouldStop() ? undefined : await controller.reconcileKey(key);
          opts.onOutcome?.(key, outcome?.result ?? 'removed');
          if (!outcome) {
            queue.forget(key);
            return;
          }
          // The daemon honours every RequeueAfter (a backoff, a hold's recheck); a transient error backs off per key.
          if (outcome.result === 'transient') queue.addRateLimited(key);
          else {
            queue.forget(key);
            if (outcome.requeueAfterMs !== undefined) queue.addAfter(key, outcome.requeueAfterMs);
          }
        } catch (e) {
          deps.log.error({ cluster: key, err: String(e) }, 'reconcile failed unexpectedly; requeued');
          queue.addRateLimited(key);
        } finally {
          queue.done(key);
          refreshGauges();
          await reconciled(key, outcome).catch((e: unknown) =>
            deps.log.warn({ err: String(e) }, 'could not end the pass'),
          );
        }
      })();
      inHand.add(job);
      await job;
      inHand.delete(job);
    }
  };
  const shouldStop = () => signal.aborted;
  try {
    await addAll();
    const stopped = new Promise((r) =>
      signal.aborted ? r(undefined) : signal.addEventListener('abort', r, { once: true }),
    );
    // On a stop, the reconciles in hand get the grace period below, not however long a hung one takes.
    if (!signal.aborted)
      await Promise.race([Promise.all(Array.from({ length: Math.max(1, opts.workers ?? 4) }, worker)), stopped]);
  } finally {
    clearInterval(resync);
    if (gauges) clearTimeout(gauges);
    stopWatch();
    stopTemplates();
    stopPolicies();
    stopWake();
    queue.shutDown();
    // Reconciles in hand get the grace period to write their status; none of them waits on a stack.
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((r) => (timer = setTimeout(r, opts.graceMs ?? 20_000)));
    await Promise.race([Promise.all([...inHand]), grace]);
    clearTimeout(timer);
    deps.log.info({}, 'reconciler stopped');
  }
}

/** Calls `onChange` (debounced) when anything under the templates directory changes. Returns a stop function. */
export function watchTemplates(dir: string, onChange: () => void, debounceMs = 200): () => void {
  let timer: NodeJS.Timeout | undefined;
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { recursive: true, persistent: false }, () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
  } catch {
    // No recursive watch on this platform: the periodic resync still picks template edits up.
  }
  return () => {
    if (timer) clearTimeout(timer);
    watcher?.close();
  };
}

/** What the daemon needs of leader election (lib/platform/kube/leader-election.ts). */
export interface Leadership {
  /** Campaigns until the signal; resolves once stopped (and the lease released). */
  run(signal: AbortSignal): Promise<void>;
  subscribe(fn: (leading: boolean) => void): () => void;
}

/**
 * The daemon, run only while this replica leads: started when it acquires the lease, stopped (its work in hand given
 * the grace period) when it loses it, started again if it wins it back. On the process's stop the daemon stops
 * first, then the lease is released, so a successor never overlaps work in hand.
 */
export async function runDaemonWhileLeading(
  controller: Controller,
  deps: ReconcilerDeps,
  signal: AbortSignal,
  opts: DaemonOptions,
  leader: Leadership,
): Promise<void> {
  const campaign = new AbortController();
  let term: AbortController | undefined;
  let running: Promise<void> = Promise.resolve();
  const unsubscribe = leader.subscribe((leading) => {
    if (!leading) {
      deps.log.warn({}, 'leadership lost: no new AWS writes; reconciles in hand end');
      return term?.abort();
    }
    const mine = (term = new AbortController());
    deps.log.info({}, 'leadership acquired: reconciling');
    running = running
      .then(() =>
        mine.signal.aborted || signal.aborted
          ? undefined
          : runDaemon(controller, deps, AbortSignal.any([mine.signal, signal]), opts),
      )
      .catch((e: unknown) => deps.log.error({ err: String(e) }, 'the daemon failed'));
  });
  const stop = () => {
    term?.abort();
    void running.finally(() => campaign.abort());
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  try {
    await leader.run(campaign.signal);
    await running;
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', stop);
  }
}
