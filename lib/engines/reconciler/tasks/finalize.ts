import { firstFailure, StackSummary } from '../../../model/ports/cloudformation-port';
import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { STACK_FINALIZER } from '../../../platform/kube/resource';
import { workerStackName } from '../../../core/naming';
import { CONDITIONS } from '../workflow/conditions';
import { TASK } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { Start } from '../workflow/state';
import { task } from '../workflow/task';
import { busy, retryRequested } from './prepare';
import { claimOf, objectName } from './claim';
import { RemovalScope, waitToRemovePool } from './pool-removal';
import { teardownOrder } from '../../deploy/teardown';
import { DepsOf, TaskContext } from '../workflow/task-context';

/** spec.deletionPolicy as the object says it, before validation (a deleted object may no longer validate). */
export function deletionPolicy(raw: unknown): 'Retain' | 'Delete' {
  return (raw as { spec?: { deletionPolicy?: unknown } } | undefined)?.spec?.deletionPolicy === 'Delete'
    ? 'Delete'
    : 'Retain';
}

/** What deleteOne reads: the fleet's slots, the poll interval, the events on the object. */
const DELETE_ONE_DEPS = ['slots', 'pollMs', 'events'] as const;
/** What deleteStack reads (the object's deletion): deleteOne's, a dry run, the events. */
const DELETE_STACK_DEPS = [...DELETE_ONE_DEPS, 'dryRun'] as const;
/** What removePoolStack reads (not a task: reconcile-cluster.ts calls it for each removed pool). */
type RemovePoolStackDeps = DepsOf<typeof DELETE_ONE_DEPS> | 'dryRun';

/**
 * 0. The object's finalizer, and its deletion (stores that hold deletions: Kubernetes). First in the workflow, before
 * the fast path, because a deletion does not change the object's content.
 *
 * - Not being deleted: `Delete` holds the finalizer `worker-stacks.io/stack` (added before the first stack
 *   operation), `Retain` does not (removed when the policy changes back). The reconcile goes on.
 * - Deleted with `Retain` (or without our finalizer): nothing; the stack stays, as with the file store.
 * - Deleted with `Delete`: the stack is deleted and watched without a waiter (requeue); once it is gone the
 *   finalizer is removed and the API server removes the object. A DELETE_FAILED stack keeps the finalizer and says
 *   why (the first failing resource) in Stalled=DeleteFailed; `worker-stacks retry` tries the delete again.
 */
export const finalize = task<Start>()({
  name: TASK.finalize,
  deps: [...DELETE_STACK_DEPS, 'store'],
  when: (ctx) =>
    ctx.deps.store.setFinalizer !== undefined &&
    (ctx.record.deletionRequested === true || hasFinalizer(ctx) !== (deletionPolicy(ctx.record.raw) === 'Delete')),
  async run(ctx, s) {
    const store = ctx.deps.store;
    const setFinalizer = (n: string, f: string, present: boolean): Promise<void> => {
      if (!store.setFinalizer)
        throw new Error("the store's finalizers are missing: the workflow ran finalize without them");
      return store.setFinalizer(n, f, present);
    };
    const name = ctx.record.name;
    const wanted = deletionPolicy(ctx.record.raw) === 'Delete';
    if (!ctx.record.deletionRequested) {
      if (ctx.deps.dryRun) return undefined;
      await setFinalizer(name, STACK_FINALIZER, wanted);
      // The object changed (a new resourceVersion): look again with a fresh read rather than write status on a stale one.
      return {
        result: 'recorded',
        requeueAfterMs: 0,
        message: `finalizer ${STACK_FINALIZER} ${wanted ? 'added' : 'removed'} (spec.deletionPolicy ${wanted ? 'Delete' : 'Retain'})`,
      };
    }
    if (!hasFinalizer(ctx)) return { result: 'unchanged', message: await withoutFinalizer(ctx, wanted) };
    if (!wanted) {
      if (!ctx.deps.dryRun) await setFinalizer(name, STACK_FINALIZER, false);
      return { result: 'unchanged', message: 'object deleted; its stack is retained (spec.deletionPolicy Retain)' };
    }
    return deleteStack(ctx, s, setFinalizer);
  },
});

/**
 * What became of the stack of an object deleted without our finalizer (a last look between the finalizer's removal
 * and the object's), said as it is: with Delete, the stack was deleted before the finalizer went (or an operator
 * removed the finalizer to keep it); with Retain, it is kept.
 */
async function withoutFinalizer(ctx: TaskContext<never>, wanted: boolean): Promise<string> {
  if (!wanted) return 'object deleted; its stack is retained (spec.deletionPolicy Retain)';
  const stackName = workerStackName(objectName(ctx.record));
  const stack = ctx.clients ? await ctx.region.cfn.describeStack(stackName) : undefined;
  return !stack || stack.status === 'DELETE_COMPLETE'
    ? `object deleted; its stack ${stackName} is deleted (spec.deletionPolicy Delete)`
    : `object deleted without the finalizer ${STACK_FINALIZER}: its stack ${stackName} is left as it is (${stack.status})`;
}

function hasFinalizer(ctx: TaskContext<never>): boolean {
  return ctx.record.finalizers?.includes(STACK_FINALIZER) ?? false;
}

async function deleteStack(
  ctx: TaskContext<DepsOf<typeof DELETE_STACK_DEPS>>,
  s: Start,
  setFinalizer: (name: string, finalizer: string, present: boolean) => Promise<void>,
): Promise<Outcome> {
  const name = ctx.record.name;
  const stackName = workerStackName(objectName(ctx.record));
  if (!ctx.clients) {
    ctx.recorder.stage(
      {},
      CONDITIONS.stalled(
        'DeleteFailed',
        `spec.region is not a region: the stack ${stackName} cannot be found to delete; delete it by hand, then remove the finalizer ${STACK_FINALIZER}`,
      ),
    );
    return { result: 'stalled', message: 'no region to delete the stack in' };
  }
  const stacks = teardownOrder(
    objectName(ctx.record),
    ctx.record.raw,
    (ctx.recorder.clusterStatus.pools ?? []).map((p) => p.stackName),
  );
  if (ctx.deps.dryRun)
    return { result: 'dry-run', message: `would delete stack ${stacks.join(', ')} (spec.deletionPolicy Delete)` };
  // The pools' own stacks first: they import the shared stack's exports, which CloudFormation keeps while imported.
  for (const stack of stacks) {
    const pending = await deleteOne(ctx, s, stack);
    if (pending) return pending;
  }
  // The event first: once the finalizer is gone, so is the object.
  await ctx.deps.events
    ?.emit(name, {
      type: 'Normal',
      reason: 'StackDeleted',
      message: `stack ${stackName} deleted (spec.deletionPolicy Delete); the object goes`,
    })
    .catch(() => undefined);
  await setFinalizer(name, STACK_FINALIZER, false);
  s.log.info({ stack: stackName }, 'stack deleted; finalizer removed');
  return { result: 'deleted', message: `stack ${stackName} deleted` };
}

/**
 * A pool removed from the object (its entry still in status.pools): its own stack is deleted, as the object now says
 * (nothing of the other stacks is touched; the shared stack may then drop the exports the pool imported). That
 * terminates the pool's nodes, so it waits for the rest of the cluster as a roll does (tasks/pool-removal.ts).
 * Undefined once the stack is gone (its entry goes), else the outcome of this look. A paused cluster or a dry run
 * deletes nothing.
 */
export async function removePoolStack(
  ctx: TaskContext<RemovePoolStackDeps>,
  s: Start,
  paused: boolean,
  scope: RemovalScope,
): Promise<Outcome | undefined> {
  const stackName = ctx.unit.stackName;
  if (ctx.deps.dryRun || paused) {
    const message = `pool ${ctx.unit.pool ?? '?'} was removed from the object: ${paused ? 'paused, so ' : ''}would delete its stack ${stackName}`;
    return { result: ctx.deps.dryRun ? 'dry-run' : 'paused', message };
  }
  const outcome = await deleteOne(ctx, s, stackName, {
    why: `pool ${ctx.unit.pool ?? '?'} was removed from the object`,
    slot: ctx.unit.slot,
    gate: (stack) => waitToRemovePool(ctx, stack, scope),
  });
  // Gone: it holds no other pool back for the rest of this reconcile (its entry goes at the end of it).
  if (!outcome) ctx.recorder.stage({ stackStatus: undefined });
  return outcome;
}

/** How deleteOne deletes a stack, besides the object's deletion (spec.deletionPolicy Delete). */
interface DeleteOptions {
  /** Why the stack goes, in its messages. @default spec.deletionPolicy Delete */
  readonly why?: string;
  /** The stack's fleet slot, when this run owns it (a removed pool's stack): held while the stack is in progress. */
  readonly slot?: string;
  /** Asked once the stack is settled, before DeleteStack: an outcome is a wait, and nothing is deleted this time. */
  readonly gate?: (stack: StackSummary) => Outcome | undefined;
}

/** Deletes one stack of the object: undefined once it is gone, else the outcome of this look (waiting, stalled). */
async function deleteOne(
  ctx: TaskContext<DepsOf<typeof DELETE_ONE_DEPS>>,
  s: Start,
  stackName: string,
  { why = 'spec.deletionPolicy Delete', slot, gate }: DeleteOptions = {},
): Promise<Outcome | undefined> {
  const name = ctx.record.name;
  const stack = await ctx.region.cfn.describeStack(stackName);
  if (slot) ctx.deps.slots?.observed(slot, Boolean(stack && stack.status !== 'DELETE_COMPLETE' && busy(stack)));
  if (!stack || stack.status === 'DELETE_COMPLETE') return undefined;
  // Another object's stack (tasks/claim.ts) is never deleted for this one: to this object it is as good as gone.
  const claimed = claimOf(ctx.record, stack, { stackId: stackIdOf(ctx, stackName), executing: false });
  if (claimed.kind === 'refused') {
    if (slot) ctx.deps.slots?.observed(slot, false);
    s.log.warn({ stack: stackName, reason: claimed.reason }, `not deleting ${stackName} (${why}): ${claimed.message}`);
    return undefined;
  }
  if (busy(stack)) {
    ctx.recorder.stage(
      { stackStatus: stack.status },
      CONDITIONS.progressing(
        'DeletingStack',
        `stack ${stackName} is ${stack.status}; deleted once it settles (${why})`,
      ),
    );
    return { result: 'waiting', requeueAfterMs: ctx.pollMs, message: `stack ${stackName} is ${stack.status}` };
  }
  if (stack.status === 'DELETE_FAILED' && !retryRequested(ctx)) {
    const failing = firstFailure(await ctx.region.cfn.operationEvents(stack.id));
    const why = failing
      ? `${failing.logicalId} ${failing.status}: ${failing.reason ?? 'no reason given'}`
      : (stack.statusReason ?? 'no reason given');
    const message = `stack ${stackName} is DELETE_FAILED (${why}); the finalizer worker-stacks.io/stack keeps the object: deal with the resource, then run worker-stacks retry ${name} (or remove the finalizer to keep the stack)`;
    ctx.recorder.stage({ stackStatus: stack.status, stackId: stack.id }, CONDITIONS.stalled('DeleteFailed', message));
    await ctx.deps.events?.emit(name, { type: 'Warning', reason: 'DeleteFailed', message }).catch(() => undefined);
    return { result: 'stalled', message };
  }
  const waiting = gate?.(stack);
  if (waiting) return waiting;
  // A new token per attempt (an operator's retry included), the same one for a repeated look at the same attempt.
  const attempt = retryRequested(ctx) ? (ctx.record.retryRequest ?? 'first') : 'first';
  const message = `deleting stack ${stackName} (${why})`;
  await ctx.region.cfn.deleteStack(stack.id, `ws-delete-${sha256Hex(`${stack.id}\0${attempt}`).slice(0, 32)}`);
  // Staged once CloudFormation took it: the stack is being deleted now (a removed pool's counts as rolling for the
  // others, pool-gates.ts), and a call that failed left nothing to say so.
  ctx.recorder.stage(
    { stackStatus: 'DELETE_IN_PROGRESS' },
    CONDITIONS.progressing('DeletingStack', message),
    retryRequested(ctx) ? { retryHandled: ctx.record.retryRequest } : undefined,
  );
  if (slot) ctx.deps.slots?.observed(slot, true);
  s.log.info({ stack: stackName }, message);
  return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
}

/** The stack id this object recorded for one of its stacks (the shared stack's at the top level, a pool's in its entry). */
function stackIdOf(ctx: TaskContext<never>, stackName: string): string | undefined {
  const s = ctx.recorder.clusterStatus;
  return s.stackName === stackName ? s.stackId : s.pools?.find((p) => p.stackName === stackName)?.stackId;
}
