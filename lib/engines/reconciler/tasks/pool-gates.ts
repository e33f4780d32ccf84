import { stackUnits } from '../../../model/cluster/pools';
import { ControllerBookkeeping } from '../../../model/cluster/status';
import { CONDITIONS } from '../workflow/conditions';
import { Outcome, ReconcileContext } from '../workflow/context';
import { Observed } from '../workflow/state';
import { liveStatus } from './prepare';

// What a pool's stack waits for besides its own stack: the cluster's other pools rolling (maxConcurrentPools), and
// the cluster's other stacks when CloudFormation refuses an export change (the apply tasks ask these).

/**
 * The cluster's other pools whose nodes are rolling: a change set of ours executing toward another roll key than the
 * one its stack carries (a new config, image, instance types …; as recorded before the execute, so a crash or a
 * restart still counts it; an execution recorded by a release before roll keys compares config checksums). The shared
 * stack counts only when it holds a pool (default); a pool no longer in the object never counts.
 */
export function rollingPools(ctx: ReconcileContext, o: Observed): string[] {
  const all = ctx.recorder.clusterStatus;
  const rolling = (s: {
    readonly cloudConfigChecksum?: string;
    readonly rollKey?: string;
    readonly controller?: ControllerBookkeeping;
  }) => {
    const e = s.controller?.executing;
    if (!e) return false;
    return e.rollKey && s.rollKey ? e.rollKey !== s.rollKey : e.checksum !== s.cloudConfigChecksum;
  };
  const units = stackUnits(o.cluster);
  const shared = units[0].pool;
  // A pool removed from the object is not rolled but deleted (its entry stays until its stack is gone, and keeps the
  // executing change set it had): it is no pool the cluster could lose to a roll, and never holds the others back.
  const current = new Set(units.map((u) => u.pool));
  return [
    ...(ctx.unit.pool !== undefined && shared !== undefined && rolling(all) ? [shared] : []),
    ...(all.pools ?? [])
      .filter((p) => p.name !== ctx.unit.pool && current.has(p.name) && rolling(p))
      .map((p) => p.name),
  ];
}

/**
 * CloudFormation's refusal to remove (or change) an export another stack still imports, or to import one not exported
 * yet: the cluster's other stacks must be applied first (a pool's stack that stops importing, or the shared stack
 * that starts exporting). Not a failure of these inputs.
 */
export const IMPORT_REFUSAL = /cannot be (deleted|updated) as it is in use by|No export named \S+ found/i;

/**
 * Waits for the cluster's other stacks: nothing is counted, and the same inputs are tried again after a backoff (not
 * every poll: an update that got as far as rolling nodes before the refusal must not roll them every few seconds).
 */
export function waitForImports(ctx: ReconcileContext, f: Observed, why: string): Outcome {
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
