import { getCondition } from '../../../model/cluster/schema/status';
// How a reconcile's result is recorded: a failure (bounded retries, then Stalled) or a success (Ready on what the
// stack reports live), and the words for a stack that did not complete. Shared by the apply tasks and the workflow's
// one error path.
import { StackEvent, StackSummary } from '../../../model/ports/cloudformation-port';
import { stackVersion } from './roll-key';
import { backoffDelay } from '../workflow/backoff';
import { CONDITIONS, Reason } from '../workflow/conditions';
import { configDigests } from '../workflow/config-changes';
import { DEFAULT_MAX_UPDATE_ATTEMPTS } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { Found, Observed } from '../workflow/state';
import { liveStatus, short } from './prepare';
import { DepsOf, TaskContext } from '../workflow/task-context';

/** What recordFailure reads: the bound on attempts, the backoff between them, the clock. */
export const RECORD_FAILURE_DEPS = ['maxUpdateAttempts', 'backoff', 'now'] as const;

/**
 * Records a failure of these inputs. A failure the reconciler can retry is Degraded and retried with backoff until
 * --max-update-attempts, then the cluster stops (Stalled) until its inputs change or an operator runs `retry`:
 * never a loop that re-rolls nodes. `stall` stops at once (retrying cannot help).
 */
export function recordFailure(
  ctx: TaskContext<DepsOf<typeof RECORD_FAILURE_DEPS>>,
  f: Found,
  reason: Reason,
  message: string,
  opts: { readonly stall?: boolean; readonly stalledReason?: Reason } = {},
): Outcome {
  const c = ctx.recorder.controller;
  const failures = (c.failedFingerprint === f.fingerprint ? (c.failures ?? 0) : 0) + 1;
  const max = ctx.deps.maxUpdateAttempts ?? DEFAULT_MAX_UPDATE_ATTEMPTS;
  const stall = opts.stall || failures >= max;
  const delay = backoffDelay(failures, ctx.deps.backoff);
  // Ready says whether what is live is what is desired: another config, or other inputs than those applied (an image
  // change keeps the checksum), is not Ready; the reason and message are the failure's, never a stale "executing".
  const liveDiffers =
    f.live === undefined ||
    f.live !== f.config?.checksum ||
    (f.fingerprint !== undefined && c.inputsFingerprint !== f.fingerprint) ||
    // A Ready that still says an operation runs is stale now whatever is live (the simulator found one kept after an
    // image roll rolled back, by a new leader whose inputs were those last applied).
    IN_PROGRESS_READY.has(getCondition(ctx.status, 'Ready')?.reason ?? '');
  const patch = {
    ...(f.stack ? liveStatus(ctx, f.stack, f.live) : {}),
    observedGeneration: ctx.generation,
    desiredChecksum: f.config?.checksum,
  };
  const bookkeeping = {
    failures,
    failedFingerprint: f.fingerprint,
    retryAfter: stall ? undefined : new Date(ctx.deps.now().getTime() + delay).toISOString(),
    executing: undefined,
  };
  if (stall) {
    const why = opts.stall
      ? message
      : `${message}; failed ${failures} times with these inputs, stopped (fix the object, or run worker-stacks retry ${ctx.record.name})`;
    ctx.recorder.stage(
      patch,
      CONDITIONS.stalled(opts.stalledReason ?? (opts.stall ? reason : stalledReasonFor(reason)), why, {
        ready: liveDiffers ? false : undefined,
      }),
      bookkeeping,
    );
    f.log.error({ reason, failures, stalled: true }, why);
    return { result: 'stalled', message: why };
  }
  ctx.recorder.stage(
    patch,
    CONDITIONS.degraded(reason, `${message}; attempt ${failures} of ${max}, next after ${bookkeeping.retryAfter}`, {
      ready: liveDiffers ? false : undefined,
    }),
    bookkeeping,
  );
  f.log.error({ reason, failures }, message);
  return { result: 'failed', message, requeueAfterMs: delay };
}

/** Ready's reasons while an operation runs: a failure's write never leaves them. */
const IN_PROGRESS_READY: ReadonlySet<string> = new Set(['ChangeSetExecuting', 'WaitingForStack']);

/** A rolled-back update that keeps failing stops as UpdateFailed; other failures keep their own reason. */
function stalledReasonFor(reason: Reason): Reason {
  return reason === 'UpdateRolledBack' || reason === 'CreateRolledBack' || reason === 'ChangeSetFailed'
    ? 'UpdateFailed'
    : reason;
}

/**
 * The events of the stack's latest operation (from its "User Initiated" start on), so that a failure
 * is explained by its own events and never by an older failure still in the stack's history.
 */
export function lastOperation(events: readonly StackEvent[], stackName: string | undefined): readonly StackEvent[] {
  const isStart = (e: StackEvent) =>
    e.logicalId === stackName &&
    e.resourceType === 'AWS::CloudFormation::Stack' &&
    /_IN_PROGRESS$/.test(e.status) &&
    e.reason === 'User Initiated';
  let start = events.length - 1;
  while (start >= 0 && !isStart(events[start])) start--;
  return start < 0 ? events : events.slice(start);
}

/**
 * The roll keys as read, once our change set completed: the stack now holds the template whose key was read as desired,
 * so that key is the live one (what `rollout status` and the channel census read as the image a cluster runs), for
 * this version of the stack. Without it, a stack whose version does not move (no lastUpdated) kept the key read
 * before the roll (found on moto: a cluster rolled back to a held release was said to run the release it had left).
 */
function liveRollKeys(ctx: TaskContext<never>, current: boolean, stack: StackSummary) {
  const keys = ctx.recorder.controller.rollKeys;
  const applied = ctx.recorder.controller.executing?.rollKey;
  if (!current || !keys?.desired || applied === undefined || keys.desired.key !== applied) return {};
  return { rollKeys: { ...keys, live: keys.desired, stack: stackVersion(stack) } };
}

/**
 * The roll key the stack carries after our change set completed: the one it applied (status.controller.executing),
 * else (no change set was needed) the one read from the live template by this reconcile. Nothing is pending then.
 */
function appliedRollKey(ctx: TaskContext<never>, current: boolean) {
  const applied = ctx.recorder.controller.executing?.rollKey ?? ctx.status.rollKey;
  if (!current || !applied) return {};
  return { rollKey: applied, desiredRollKey: applied, pendingRoll: undefined };
}

/** Condition reason for a stack that did not complete. */
export function failureReason(status: string): Reason {
  const known: Record<string, Reason> = {
    UPDATE_ROLLBACK_COMPLETE: 'UpdateRolledBack',
    ROLLBACK_COMPLETE: 'CreateRolledBack',
    UPDATE_ROLLBACK_FAILED: 'UpdateRollbackFailed',
    DELETE_FAILED: 'DeleteFailed',
    ROLLBACK_FAILED: 'RollbackFailed',
    STACK_GONE: 'StackDeleted',
  };
  return known[status] ?? 'ReconcileFailed';
}

/** What recordSuccess reads: recordFailure's (a stack without a checksum), and the key of the inputs it records. */
export const RECORD_SUCCESS_DEPS = [...RECORD_FAILURE_DEPS, 'code', 'images'] as const;

/** Ready: what the stack reports is live, for these inputs. The checksum comes from the stack, never from the request. */
export async function recordSuccess(
  ctx: TaskContext<DepsOf<typeof RECORD_SUCCESS_DEPS>>,
  o: Observed,
  result: 'applied' | 'no-changes',
  fingerprint: string,
): Promise<Outcome> {
  const stack = o.stack ?? (await ctx.region.cfn.describeStack(ctx.unit.stackName));
  const live = o.live ?? stack?.outputs.ConfigChecksum;
  const { config } = o;
  if (!stack || !live)
    return recordFailure(
      ctx,
      o,
      'ReconcileFailed',
      `stack ${stack?.name ?? ctx.record.name} reports no ConfigChecksum; nothing is recorded that was not seen live`,
    );
  // From what the stack did, not from what was recorded while watching it.
  const reason =
    result === 'no-changes' ? 'UpToDate' : stack.status === 'CREATE_COMPLETE' ? 'StackCreated' : 'StackUpdated';
  const current = fingerprint === o.fingerprint;
  ctx.recorder.stage(
    {
      ...liveStatus(ctx, stack, live),
      desiredChecksum: config.checksum,
      observedGeneration: ctx.generation,
      paused: undefined,
      // A roll that ended is no longer held; an older status's node key is dropped (the roll keys replaced it).
      rollout:
        current && live === config.checksum && ctx.status.rollout
          ? { ...ctx.status.rollout, appliedNodeKey: undefined, stagedChecksum: undefined, heldSince: undefined }
          : ctx.status.rollout,
      ...appliedRollKey(ctx, current),
    },
    current
      ? CONDITIONS.ready(reason, `stack ${stack.status}, config ${short(live)} live`)
      : CONDITIONS.progressing(
          'ChangeSetExecuting',
          `stack ${stack.status} on an earlier version of the object; applying the current one`,
        ),
    {
      inputsFingerprint: fingerprint,
      appliedInputsKey: current ? ctx.derivedKey : undefined,
      configDigests: live === config.checksum ? configDigests(config.node) : ctx.recorder.controller.configDigests,
      failures: 0,
      retryAfter: undefined,
      failedFingerprint: undefined,
      recoveryAttempts: 0,
      executing: undefined,
      ...liveRollKeys(ctx, current, stack),
    },
  );
  o.log.info(
    { stackChecksum: live, stackStatus: stack.status },
    result === 'applied' ? 'stack applied; live checksum recorded' : 'no changes; live checksum recorded',
  );
  // The object moved on while the stack rolled: apply the newer inputs at once.
  return current ? { result } : { result: 'recorded', requeueAfterMs: 0 };
}
