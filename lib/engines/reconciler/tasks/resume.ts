import { firstFailure, isComplete, isRolledBack } from '../../../model/ports/cloudformation-port';
import { IMPORT_REFUSAL, WAIT_FOR_IMPORTS_DEPS, waitForImports } from './pool-gates';
import { CONDITIONS } from '../workflow/conditions';
import { classifyError } from '../workflow/classify';
import { TASK } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { Observed } from '../workflow/state';
import { need, task } from '../workflow/task';
import { busy, liveChecksum, short } from './prepare';
import { alarmRollback, signalShortfall } from './roll-verdict';
import { failureReason, lastOperation, RECORD_SUCCESS_DEPS, recordFailure, recordSuccess } from './record-outcome';
import { TaskContext } from '../workflow/task-context';

// The resume and record workflows' first tasks, out of apply.ts (whose tasks change the stack): these look at a stack
// whose operation is under way or over and never start one. Recording our own execute has its own rules (it survives
// restarts and stale listings: what it records comes from the change set and the stack as read after it, never from
// what was asked for), which the apply path does not need.

/**
 * Resume path, 1. A stack in progress is never touched: note it and look again after one poll interval. The worker
 * is free meanwhile; the next look comes from the pass's listing (one call per region, not one per stack).
 */
export const wait = task<Observed>()({
  name: TASK.wait,
  deps: ['pollMs'],
  run(ctx, o) {
    const stack = need(o.stack, 'the stack in progress');
    if (ctx.status.stackStatus !== stack.status)
      o.log.info({ stack: stack.name, stackStatus: stack.status }, `stack ${stack.name} is ${stack.status}`);
    const executing = ctx.recorder.controller.executing;
    // A roll that keeps the config (a new image, a release's launch template) says its cause, as its start did.
    const cause = ctx.status.pendingRoll && ctx.status.pendingRoll !== 'config' ? ` (${ctx.status.pendingRoll})` : '';
    const message = executing
      ? `stack is ${stack.status}: rolling the nodes to config ${short(executing.checksum)}${cause}`
      : `stack is ${stack.status}`;
    ctx.recorder.stage(
      { stackStatus: stack.status, stackId: stack.id, stackName: stack.name },
      CONDITIONS.progressing(executing ? 'ChangeSetExecuting' : 'WaitingForStack', message),
    );
    return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
  },
});

/**
 * Resume path, 2. The change set this reconciler executed may have ended: record what the stack reports. Never from a
 * read older than the execute: the change set's own ExecutionStatus says whether the operation is ours and over
 * (EXECUTE_COMPLETE / EXECUTE_FAILED), and the stack is then described afresh, so a listing taken before the execute
 * (or one that lags) can neither record success nor a failure. The checksum recorded is the one the live stack
 * carries, never the one that was asked for; the cause of a rollback is read from the stack's own events for that
 * operation, so it survives a restart.
 */
export const recordExecution = task<Observed, Pick<Observed, 'stack' | 'live' | 'described'>>()({
  name: TASK.recordExecution,
  deps: [...RECORD_SUCCESS_DEPS, ...WAIT_FOR_IMPORTS_DEPS, 'slots', 'pollMs'],
  async run(ctx, o) {
    const executing = need(ctx.recorder.controller.executing, 'the change set executing');
    const name = ctx.unit.stackName;
    // A change set that is not there (or a stack that is not) is undefined; a throttled or timed-out answer is not an
    // answer: it goes to the error path (requeued, our execution still on record), never read as "gone" (which, with
    // a stale look at the stack, would record a failure of an operation still running and start another on it).
    const cs = await ctx.region.cfn
      .describeChangeSet(o.stack?.id ?? ctx.status.stackId ?? name, executing.changeSet)
      .catch((e: unknown) => {
        if (classifyError(e).kind === 'transient') throw e;
        return undefined;
      });
    const executingMessage = `stack ${o.stack?.status ?? name}: change set ${executing.changeSet} is executing (rolling to config ${short(executing.checksum)})`;
    // Ours and not over (whatever a listing says): look again. CloudFormation may show the stack's old status for a moment.
    if (cs?.executionStatus === 'EXECUTE_IN_PROGRESS') return inProgress(ctx, executingMessage);
    if (cs?.executionStatus === 'AVAILABLE') {
      // Never executed (a crash, or a throttled call, between the status write and the call): the apply path finds it by name.
      ctx.recorder.stage({}, [], { executing: undefined });
      if (o.described) return undefined;
      const stack = await ctx.region.cfn.describeStack(name);
      return { stack, live: stack ? await liveChecksum(ctx, stack) : undefined, described: true };
    }
    // Over, or unknown (the change set is gone): the stack as it is now, never as a listing showed it.
    const stack = o.described ? o.stack : await ctx.region.cfn.describeStack(name);
    if (stack && busy(stack)) return inProgress(ctx, executingMessage);
    const live = o.described ? o.live : stack ? await liveChecksum(ctx, stack) : undefined;
    const fresh = { ...o, stack, live, described: true };
    // Proof that the completed operation is ours: the change set says so, or (it is gone) the stack changed after the execute.
    const ours = cs
      ? cs.executionStatus === 'EXECUTE_COMPLETE'
      : Boolean(stack?.lastUpdated && stack.lastUpdated >= executing.startedAt) || stack?.status === 'CREATE_COMPLETE';
    if (stack && isComplete(stack.status) && ours && live === executing.checksum)
      return recordSuccess(ctx, fresh, 'applied', executing.fingerprint);
    if (stack && isComplete(stack.status) && ours && live === undefined)
      return recordFailure(
        ctx,
        fresh,
        'ReconcileFailed',
        `stack ${stack.name} is ${stack.status} but reports no ConfigChecksum; nothing is recorded that was not seen live`,
      );
    const events = stack ? lastOperation(await ctx.region.cfn.operationEvents(stack.id), stack.name) : [];
    const cause = firstFailure(events);
    const status = stack?.status ?? 'STACK_GONE';
    // The nodes' own verdict (signals) or a rollback alarm, when the events give one, says more than a resource status.
    const gate = signalShortfall(events) ?? alarmRollback(events);
    const why =
      gate ??
      (cause
        ? `${cause.logicalId} (${cause.resourceType}) ${cause.status}: ${cause.reason ?? ''}`.trim()
        : (stack?.statusReason ?? 'no failure event found'));
    const kept = isRolledBack(status)
      ? `; the previous config ${short(live ?? ctx.status.cloudConfigChecksum)} stays live`
      : '';
    if (IMPORT_REFUSAL.test(why)) return waitForImports(ctx, fresh, `stack ${status}: ${why}${kept}`);
    return recordFailure(ctx, fresh, failureReason(status), `stack ${status}: ${why}${kept}`);
  },
});

/** Our operation is still running: the slot stays held, and the stack is looked at again after a poll. */
function inProgress(ctx: TaskContext<'slots' | 'pollMs'>, message: string): Outcome {
  ctx.deps.slots?.observed(ctx.unit.slot, true);
  return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
}
