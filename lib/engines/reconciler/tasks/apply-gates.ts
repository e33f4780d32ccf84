import { isComplete, isRolledBack } from '../../../model/ports/cloudformation-port';
import { getCondition } from '../../../model/cluster/schema/status';
import { CONDITIONS } from '../workflow/conditions';
import { DEFAULT_MAX_UPDATE_ATTEMPTS, TASK } from '../workflow/context';
import { Observed, RollKeyed } from '../workflow/state';
import { need, task } from '../workflow/task';
import { isSettled, liveStatus, retryRequested, short } from './prepare';

// The apply workflow's first tasks, out of prepare.ts (the prepare workflow: inputs, validity, what is live): each
// judges what was observed and may end the reconcile before anything in AWS is changed (nothing to do, a backoff or a
// stall, paused, drift only reported, credentials of another account, a dry run). Every write to AWS comes after them.

/** 4. Live equals desired for these inputs on a complete stack: nothing to do. Failed inputs wait for their backoff, or a human. */
export const skipIfUnchanged = task<Observed>()({
  name: TASK.skipIfUnchanged,
  deps: ['code', 'images', 'now', 'maxUpdateAttempts'],
  run(ctx, o) {
    const s = ctx.status;
    const c = ctx.recorder.controller;
    const { stack, live } = o;
    // A stack rolled back to the template these inputs applied (a halted image release, an edit reverted) is settled
    // on it too: without this, every look made a change set with no changes, holding a --concurrency slot each time.
    if (
      stack &&
      (isComplete(stack.status) || isRolledBack(stack.status)) &&
      !o.drift &&
      live === o.config.checksum &&
      c.inputsFingerprint === o.fingerprint
    ) {
      const patch = {
        ...liveStatus(ctx, stack, live),
        desiredChecksum: o.config.checksum,
        observedGeneration: ctx.generation,
        paused: undefined,
        // These inputs are the ones last applied and they are live: no replacement is pending, whatever an attempt of
        // other inputs since recorded (a release halted and rolled back, an edit reverted: else the rollout gate
        // would count this cluster as about to roll for good, and hold the waves after it).
        ...(s.desiredRollKey !== s.rollKey || s.pendingRoll !== undefined
          ? { desiredRollKey: s.rollKey, pendingRoll: undefined }
          : {}),
      };
      // Already Ready for this generation: keep the conditions (and the reason of the last apply), so an unchanged pass writes nothing.
      const conditions = isSettled(s, ctx.generation)
        ? []
        : CONDITIONS.ready('UpToDate', `stack ${stack.status}, config ${short(live)} live`);
      ctx.recorder.stage(patch, conditions, { appliedInputsKey: ctx.derivedKey ?? c.appliedInputsKey });
      return { result: 'unchanged' };
    }
    if (c.failedFingerprint === o.fingerprint && !retryRequested(ctx)) {
      // A stall on a stack state (recovery exhausted, DELETE_FAILED …) lifts when an operator has moved the stack on.
      const stackMoved = (stack?.status ?? 'NONE') !== (s.stackStatus ?? 'NONE');
      if (getCondition(s, 'Stalled')?.status === 'True' && !stackMoved) {
        return {
          result: 'stalled',
          message: `stopped: ${getCondition(s, 'Stalled')?.message} (change the object or run worker-stacks retry ${ctx.record.name})`,
        };
      }
      const retryAt = c.retryAfter ? Date.parse(c.retryAfter) : 0;
      if (retryAt > ctx.deps.now().getTime()) {
        return {
          result: 'backoff',
          requeueAfterMs: retryAt - ctx.deps.now().getTime(),
          message: `retrying after ${c.retryAfter}`,
        };
      }
    }
    if (retryRequested(ctx)) {
      // One more attempt, not a new budget: the count stays one short of --max-update-attempts, so a failure of the
      // retried attempt stops the cluster again (a new retry, or new inputs, start it again).
      const max = ctx.deps.maxUpdateAttempts ?? DEFAULT_MAX_UPDATE_ATTEMPTS;
      const failures = c.failedFingerprint === o.fingerprint ? Math.min(c.failures ?? 0, max - 1) : 0;
      o.log.info(
        { retry: ctx.record.retryRequest, failures },
        'retry requested by an operator: one more attempt, backoff cleared',
      );
      ctx.recorder.stage({}, [], {
        failures,
        failedFingerprint: failures ? c.failedFingerprint : undefined,
        retryAfter: undefined,
        recoveryAttempts: 0,
        retryHandled: ctx.record.retryRequest,
      });
    }
    return undefined;
  },
});

/** 5. A paused cluster gets no AWS write; a wait already under way goes on in the resume path. */
export const paused = task<Observed>()({
  name: TASK.paused,
  deps: [],
  when: (_ctx, o) => o.cluster.spec.paused,
  run(ctx, o) {
    const message = `paused (spec.paused): no AWS writes; live config ${short(o.live)}, desired ${short(o.config.checksum)}${o.drift ? `; ${o.drift.message}` : ''}`;
    // A pending change (another config, other inputs, or drift) is not Ready while paused: Ready says what is live.
    const pending =
      o.live !== o.config.checksum ||
      ctx.recorder.controller.inputsFingerprint !== o.fingerprint ||
      Boolean(o.drift) ||
      !o.stack ||
      !isComplete(o.stack.status);
    ctx.recorder.stage(
      {
        paused: true,
        observedGeneration: ctx.generation,
        desiredChecksum: o.config.checksum,
        stackStatus: o.stack?.status,
      },
      CONDITIONS.paused(message, { ready: pending ? false : undefined }),
    );
    o.log.info({}, message);
    return { result: 'paused', message };
  },
});

/** --drift=report: a live stack that is not what was applied (or a vanished one) is reported, never repaired. */
export const reportDrift = task<Observed>()({
  name: TASK.reportDrift,
  deps: ['drift'],
  when: (ctx, o) => Boolean(o.drift) && ctx.deps.drift === 'report',
  run(ctx, o) {
    const drift = need(o.drift, 'the drift');
    const message = `${drift.message} (--drift=report: not repaired; run without it, or fix the stack by hand)`;
    ctx.recorder.stage(
      {
        stackStatus: o.stack?.status,
        cloudConfigChecksum: o.live,
        stackId: o.stack?.id,
        observedGeneration: ctx.generation,
      },
      [
        { type: 'Ready', status: 'False', reason: drift.reason, message },
        { type: 'Degraded', status: 'True', reason: drift.reason, message },
      ],
    );
    return { result: 'drifted', message };
  },
});

/** 6. The credentials (the assumed deployer role's, or the daemon's own) must belong to the cluster's account before anything is changed. */
export const checkAccount = task<Observed>()({
  name: TASK.checkAccount,
  deps: ['identity'],
  async run(ctx, o) {
    const { account, region } = o.cluster.spec;
    const actual = await ctx.deps.identity.account({ account, region });
    if (actual === account) return;
    const message = `credentials are for account ${actual}, the cluster is in ${account}; use credentials of that account (a profile or role), nothing was changed`;
    ctx.recorder.stage(
      { observedGeneration: ctx.generation },
      CONDITIONS.stalled('AccountMismatch', message, { ready: o.live === o.config.checksum ? undefined : false }),
    );
    return { result: 'failed', message };
  },
});

/** Dry run: say what would happen (whether nodes are replaced, from the roll keys), then stop before anything is written. */
export const dryRunReport = task<Observed & RollKeyed>()({
  name: TASK.dryRun,
  deps: ['dryRun'],
  when: (ctx) => ctx.deps.dryRun,
  run(_ctx, o) {
    const checksum = short(o.config.checksum);
    const drift = o.drift ? `${o.drift.message}; ` : '';
    const config =
      o.live !== o.config.checksum
        ? `config ${short(o.live)} -> ${checksum} (${o.configChange ?? 'first recorded config'})`
        : `the config ${checksum} is unchanged`;
    const message = !o.stack
      ? `${drift}would create the stack with config ${checksum}`
      : o.roll.rolls
        ? `${drift}would update the stack and replace the nodes (${o.roll.cause}): ${config}`
        : `${drift}would update the stack (${o.stack.status}); ${config}, no node is replaced (the roll key is unchanged)`;
    return { result: 'dry-run', message };
  },
});
