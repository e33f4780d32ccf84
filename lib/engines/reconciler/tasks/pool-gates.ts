import { stackUnits } from '../../../model/cluster/pools/pools';
import { isInProgress } from '../../../model/ports/cloudformation-port';
import { ClusterStatus, ControllerBookkeeping, PoolStatus } from '../../../model/cluster/schema/status';
import { CONDITIONS } from '../workflow/conditions';
import { Outcome } from '../workflow/outcomes';
import { Observed } from '../workflow/state';
import { liveStatus } from './prepare';
import { DepsOf, TaskContext } from '../workflow/task-context';

// What a pool's stack waits for besides its own stack: the cluster's other pools rolling (maxConcurrentPools), and
// the cluster's other stacks when CloudFormation refuses an export change (the apply tasks and a pool's removal ask these).

/**
 * The cluster's other pools whose nodes are rolling: a change set of ours executing toward another roll key than the
 * one its stack carries (a new config, image, instance types …; as recorded before the execute, so a crash or a
 * restart still counts it; an execution recorded by a release before roll keys compares config checksums), or a pool
 * removed from the object whose stack is in progress (being deleted, its nodes terminated: tasks/pool-removal.ts). The
 * shared stack counts only when it holds a pool (default).
 */
export function rollingPools(ctx: TaskContext<never>, o: Observed): string[] {
  const units = stackUnits(o.cluster);
  return rollingIn(ctx.recorder.clusterStatus, {
    current: units.flatMap((u) => (u.pool === undefined ? [] : [u.pool])),
    sharedPool: units[0].pool,
    self: ctx.unit.pool,
  });
}

/** Which pools of a cluster roll now, as its status says (see rollingPools); a removed pool is named as such. */
export function rollingIn(
  all: ClusterStatus,
  cluster: {
    /** The pools in the object (the shared stack's `default` among them when it holds one). */
    readonly current: readonly string[];
    /** The pool the shared stack holds (default), if any. */
    readonly sharedPool: string | undefined;
    /** The pool asking (its own stack never counts); undefined: the shared stack asks. */
    readonly self: string | undefined;
  },
): string[] {
  const rolling = (s: {
    readonly cloudConfigChecksum?: string;
    readonly rollKey?: string;
    readonly controller?: ControllerBookkeeping;
  }) => {
    const e = s.controller?.executing;
    if (!e) return false;
    // As judged before the execute (the live key may have been unreadable: a drift repair over someone else's
    // template rolls by its config); an execution recorded before that judgement compares the keys, or the checksums.
    if (typeof e.rolls === 'boolean') return e.rolls;
    return e.rollKey && s.rollKey ? e.rollKey !== s.rollKey : e.checksum !== s.cloudConfigChecksum;
  };
  const current = new Set(cluster.current);
  // A removed pool's entry keeps the executing change set it had (nothing records its end), so it counts by its stack
  // alone, as its removal last saw it: in progress (deleted, or still rolling before its deletion) or not. A stack that
  // failed to delete (DELETE_FAILED) or waits to be deleted replaces no node and holds no other pool back.
  const removing = (p: PoolStatus) =>
    p.stackStatus !== undefined && isInProgress(p.stackStatus) && p.stackStatus !== 'REVIEW_IN_PROGRESS';
  return [
    ...(cluster.self !== undefined && cluster.sharedPool !== undefined && rolling(all) ? [cluster.sharedPool] : []),
    ...(all.pools ?? [])
      .filter((p) => p.name !== cluster.self)
      .flatMap((p) =>
        current.has(p.name) ? (rolling(p) ? [p.name] : []) : removing(p) ? [`${p.name} (being removed)`] : [],
      ),
  ];
}

/**
 * CloudFormation's refusal to remove (or change) an export another stack still imports, or to import one not exported
 * yet: the cluster's other stacks must be applied first (a pool's stack that stops importing, or the shared stack
 * that starts exporting). Not a failure of these inputs.
 */
export const IMPORT_REFUSAL = /cannot be (deleted|updated) as it is in use by|No export named \S+ found/i;

/** What waitForImports reads: the backoff's base, the clock. */
export const WAIT_FOR_IMPORTS_DEPS = ['backoff', 'now'] as const;

/**
 * Waits for the cluster's other stacks: nothing is counted, and the same inputs are tried again after a backoff (not
 * every poll: an update that got as far as rolling nodes before the refusal must not roll them every few seconds).
 */
export function waitForImports(
  ctx: TaskContext<DepsOf<typeof WAIT_FOR_IMPORTS_DEPS>>,
  f: Observed,
  why: string,
): Outcome {
  const c = ctx.recorder.controller;
  const delay = ctx.deps.backoff.baseMs;
  const message = `${why} (waiting for the cluster's other stacks to be applied first; trying again after ${delay} ms)`;
  ctx.recorder.stage(
    {
      ...(f.stack ? liveStatus(ctx, f.stack, f.live) : {}),
      observedGeneration: ctx.generation,
      desiredChecksum: f.config.checksum,
    },
    CONDITIONS.progressing('WaitingForImports', message),
    {
      executing: undefined,
      failedFingerprint: f.fingerprint,
      failures: c.failedFingerprint === f.fingerprint ? c.failures : 0,
      retryAfter: new Date(ctx.deps.now().getTime() + delay).toISOString(),
    },
  );
  f.log.info({}, message);
  return { result: 'waiting', requeueAfterMs: delay, message };
}
