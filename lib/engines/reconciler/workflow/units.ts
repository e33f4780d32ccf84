import { StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterStatus } from '../../../model/cluster/schema/status';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { stackUnits } from '../../../model/cluster/pools/pools';
import { CONDITIONS } from './conditions';
import { sharedUnit } from './context';
import { Outcome } from './outcomes';
import { TaskContext } from './task-context';

// How a cluster's reconcile goes over its stacks (reconcile-cluster.ts runs the workflow once per stack): which pools
// have stacks of their own, when a pool's stack may be looked at, and the cluster's one outcome from its stacks'.

/** The pools with stacks of their own (every pool but `default`, which lives in the shared stack). */
export function poolNames(cluster: WorkerCluster): string[] {
  return stackUnits(cluster).flatMap((u) => (u.shared || u.pool === undefined ? [] : [u.pool]));
}

/**
 * The shared stack has been created (a pool's stack imports its exports): seen now, else as last recorded. One being
 * created, never created, rolled back from its create or being deleted has no exports to import.
 */
export function sharedReady(stack: StackSummary | undefined, status: ClusterStatus): boolean {
  const state = stack?.status ?? (status.stackId ? status.stackStatus : undefined);
  return state !== undefined && !/^(CREATE_(IN_PROGRESS|FAILED)|ROLLBACK_|DELETE_|REVIEW_)/.test(state);
}

/** A pool's stack waits for the shared stack to exist: said on its entry, looked at again after a poll. */
export function waitForShared(ctx: TaskContext<'pollMs'>, shared: StackSummary | undefined): Outcome {
  const message = `waiting for the shared stack ${sharedUnit(ctx.record.name).stackName} (${shared?.status ?? 'not created yet'}): the pool's stack imports its values`;
  ctx.recorder.stage({ observedGeneration: ctx.generation }, CONDITIONS.progressing('WaitingForSharedStack', message));
  return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
}

/** Which of two outcomes says more about the cluster: an error over a wait over a settled one. */
const RANK: Readonly<Record<Outcome['result'], number>> = {
  conflict: 9,
  stalled: 8,
  failed: 7,
  outdated: 7,
  transient: 6,
  waiting: 5,
  recorded: 5,
  backoff: 4,
  held: 3,
  paused: 3,
  drifted: 3,
  applied: 2,
  'no-changes': 1,
  unchanged: 0,
  invalid: 9,
  'dry-run': 0,
  deleted: 0,
};

/**
 * The cluster's outcome from its stacks' outcomes: the one that says most (an error over a wait over a success), the
 * shared stack's fields (checksum, rollout) kept, the soonest requeue any stack asked for, and each pool's result.
 */
export function merged(shared: Outcome, pools: readonly { pool: string; outcome: Outcome }[]): Outcome {
  const all = [shared, ...pools.map((p) => p.outcome)];
  const worst = all.reduce((a, b) => (RANK[b.result] > RANK[a.result] ? b : a));
  const requeues = all.flatMap((o) => (o.requeueAfterMs === undefined ? [] : [o.requeueAfterMs]));
  const message =
    worst === shared
      ? shared.message
      : `pool ${pools.find((p) => p.outcome === worst)?.pool ?? '?'}: ${worst.message ?? worst.result}`;
  return {
    ...shared,
    result: worst.result,
    reason: worst.reason ?? shared.reason,
    message,
    requeueAfterMs: requeues.length ? Math.min(...requeues) : undefined,
    stackInProgress: all.some((o) => o.stackInProgress) || undefined,
    pools: [
      ...(shared.pools ?? []),
      ...pools.map((p) => ({ pool: p.pool, result: p.outcome.result, message: p.outcome.message })),
    ],
  };
}
