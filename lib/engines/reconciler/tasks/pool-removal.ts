import { isInProgress, StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterStatus, getCondition } from '../../../model/cluster/schema/status';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { DEFAULT_POOL, stackUnits } from '../../../model/cluster/pools/pools';
import { CONDITIONS } from '../workflow/conditions';
import { sharedUnit } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { rollingIn } from './pool-gates';
import { TaskContext } from '../workflow/task-context';

// When the stack of a pool removed from the object is deleted. Deleting it terminates the pool's nodes, so a removal
// is a roll of that pool: it starts only once every other stack of the cluster is settled and Ready (a pool added in
// the same change, as a rename does, is created and Ready first, so the cluster never goes without that capacity),
// and it counts against spec.rollout.maxConcurrentPools like any roll (pool-gates.ts counts it for the others).

/** What the removals of one reconcile know of the cluster as its object now is. */
export interface RemovalScope {
  /** The object's pools with stacks of their own (the shared stack is always looked at too). */
  readonly pools: readonly string[];
  /** The pool the shared stack holds (`default`), if any. */
  readonly sharedPool: string | undefined;
  /** spec.rollout.maxConcurrentPools. */
  readonly maxConcurrentPools: number;
}

/**
 * The scope from the validated object, or, when the shared stack's fast path did not validate it (the bytes it last
 * applied, so valid), from the object as read, with the schema's default of one pool at a time.
 */
export function removalScope(cluster: WorkerCluster | undefined, raw: unknown, pools: readonly string[]): RemovalScope {
  if (cluster)
    return {
      pools,
      sharedPool: stackUnits(cluster)[0].pool,
      maxConcurrentPools: cluster.spec.rollout.maxConcurrentPools,
    };
  const spec = (raw as { spec?: { pools?: unknown; rollout?: { maxConcurrentPools?: unknown } } } | undefined)?.spec;
  const named = Array.isArray(spec?.pools)
    ? spec.pools.some((p: unknown) => (p as { name?: unknown } | null)?.name === DEFAULT_POOL)
    : true; // spec.pool: the one pool, default, in the shared stack
  const max = spec?.rollout?.maxConcurrentPools;
  return {
    pools,
    sharedPool: named ? DEFAULT_POOL : undefined,
    maxConcurrentPools: typeof max === 'number' && Number.isInteger(max) && max >= 1 ? max : 1,
  };
}

/** One condition of a removal: what it waits for, in an operator's words, or undefined when it need not wait. */
export type RemovalCheck = (ctx: TaskContext<never>, scope: RemovalScope) => string | undefined;

/** A stack of the cluster as its status records it: the top level (the shared stack) or a pool's entry. */
type Recorded = Pick<ClusterStatus, 'stackId' | 'stackStatus' | 'controller' | 'conditions'>;

/** A stack that exists and was created (one being created, never created or rolled back from its create was not). */
const created = (s: Recorded | undefined) =>
  s?.stackId !== undefined &&
  s.stackStatus !== undefined &&
  !/^(CREATE_(IN_PROGRESS|FAILED)|ROLLBACK_|REVIEW_|DELETE_)/.test(s.stackStatus);

/**
 * Why a stack of the cluster is not settled and Ready, or undefined when it is. `readyAnyway`: its Ready condition does
 * not speak for the stack itself (see clusterSettled).
 */
function unsettled(s: Recorded, readyAnyway = false): string | undefined {
  if (s.stackStatus && isInProgress(s.stackStatus) && s.stackStatus !== 'REVIEW_IN_PROGRESS') return s.stackStatus;
  if (s.controller?.executing) return `change set ${s.controller.executing.changeSet} executing`;
  const ready = getCondition({ conditions: s.conditions }, 'Ready');
  if (readyAnyway || ready?.status === 'True') return undefined;
  return `Ready=${ready?.status ?? 'unknown'}: ${ready?.reason ?? 'not reconciled yet'}`;
}

const listed = (items: readonly string[], one: string, many: string) =>
  `${items.join(', ')} ${items.length === 1 ? one : many}`;

/** A pool added with the removal (a rename, say) is created and Ready first: the cluster keeps that capacity. */
const addedPoolsFirst: RemovalCheck = (ctx, scope) => {
  const all = ctx.recorder.clusterStatus;
  const waiting = scope.pools.flatMap((pool) => {
    const entry = all.pools?.find((p) => p.name === pool);
    if (created(entry)) return [];
    const state =
      entry?.stackStatus ??
      (entry?.controller?.executing
        ? 'being created'
        : `not created yet${entry ? `: ${getCondition({ conditions: entry.conditions }, 'Progressing')?.reason ?? ''}` : ''}`);
    return [`pool ${pool} (${state})`];
  });
  return waiting.length ? `${listed(waiting, 'is', 'are')} created and Ready first` : undefined;
};

/**
 * Every other stack of the cluster is settled and Ready: none in progress, no change set of ours executing, Ready=True.
 * The shared stack's own Ready is its top level's, unless that says only that pools are not (PoolsNotReady: each pool
 * is looked at on its own here). A shared stack that waits for the pools' stacks to stop importing an export
 * (WaitingForImports) waits for this very removal: it does not hold it back.
 */
const clusterSettled: RemovalCheck = (ctx, scope) => {
  const all = ctx.recorder.clusterStatus;
  const own =
    getCondition(all, 'Ready')?.reason === 'PoolsNotReady' ||
    getCondition(all, 'Progressing')?.reason === 'WaitingForImports';
  const shared = unsettled(all, own);
  const waiting = [
    ...(shared ? [`the shared stack ${sharedUnit(ctx.record.name).stackName} (${shared})`] : []),
    ...scope.pools.flatMap((pool) => {
      const entry = all.pools?.find((p) => p.name === pool);
      const why = entry ? unsettled(entry) : 'not reconciled yet';
      return why ? [`pool ${pool} (${why})`] : [];
    }),
  ];
  return waiting.length ? `${listed(waiting, 'is', 'are')} settled and Ready` : undefined;
};

/** A removal is a roll: it starts while fewer than spec.rollout.maxConcurrentPools of the other pools roll. */
const concurrentPools: RemovalCheck = (ctx, scope) => {
  const others = rollingIn(ctx.recorder.clusterStatus, {
    current: [...(scope.sharedPool ? [scope.sharedPool] : []), ...scope.pools],
    sharedPool: scope.sharedPool,
    self: ctx.unit.pool,
  });
  const max = scope.maxConcurrentPools;
  if (others.length < max) return undefined;
  const which =
    others.length === 1 ? `${others[0]} is no longer rolling` : `fewer than ${max} of ${others.join(', ')} roll`;
  return `${which} (spec.rollout.maxConcurrentPools ${max})`;
};

/**
 * What a removal waits for, in the order an operator would see them settle; a further condition of a removal (the
 * fleet rollout's wave, say) is one more entry.
 */
export const REMOVAL_CHECKS: readonly RemovalCheck[] = [addedPoolsFirst, clusterSettled, concurrentPools];

/** The first thing the removal of the pool of `ctx` waits for, or undefined: its stack may be deleted now. */
export function removalWaitsFor(ctx: TaskContext<never>, scope: RemovalScope): string | undefined {
  for (const check of REMOVAL_CHECKS) {
    const why = check(ctx, scope);
    if (why) return why;
  }
  return undefined;
}

/**
 * The gate before a removed pool's stack is deleted: undefined, delete it now; else the wait, said on the pool's entry
 * (Progressing, WaitingToRemovePool, naming what it waits for) and looked at again after a poll, never blocking.
 */
export function waitToRemovePool(
  ctx: TaskContext<'pollMs'>,
  stack: StackSummary,
  scope: RemovalScope,
): Outcome | undefined {
  const why = removalWaitsFor(ctx, scope);
  if (!why) return undefined;
  const message = `pool ${ctx.unit.pool ?? '?'} was removed from the object: its stack ${stack.name} is deleted, its nodes terminated, once ${why}`;
  ctx.recorder.stage(
    { stackStatus: stack.status, stackId: stack.id },
    CONDITIONS.progressing('WaitingToRemovePool', message),
  );
  return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
}
