import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { CLUSTER_TAG, OWNER_TAG } from '../../../core/naming';
import { ownerOf } from './claim';
import { IMPORT_REFUSAL, rollingPools, WAIT_FOR_IMPORTS_DEPS, waitForImports } from './pool-gates';
import { CONDITIONS, Reason } from '../workflow/conditions';
import { ensureChangeSet, executeToken } from '../../deploy/change-sets';
import { camel, TASK } from '../workflow/context';
import { ChangeSetReady, Observed, RollKeyed, Synthesized } from '../workflow/state';
import { need, task } from '../workflow/task';
import { short } from './prepare';
import { assemblyKey, removeAssembly } from '../../synthesis/assembly-dir';
import { keptSynthesis, SYNTHESIZE_DEPS, synthesizeFor } from './roll-key';
import { describeRollout, specRollout } from '../../review/rollout-words';
import { rollbackConfiguration } from './roll-verdict';
import {
  lastOperation,
  RECORD_FAILURE_DEPS,
  RECORD_SUCCESS_DEPS,
  recordFailure,
  recordSuccess,
} from './record-outcome';

/** 7. Documented recovery for the stack states that a blind retry would never leave. */
export const recover = task<Observed>()({
  name: TASK.recover,
  deps: [...RECORD_FAILURE_DEPS, 'maxRecoveryAttempts', 'slots', 'pollMs'],
  when: (_ctx, o) => Boolean(o.stack),
  async run(ctx, o) {
    const stack = need(o.stack, 'the stack to recover');
    const attempts = ctx.recorder.controller.recoveryAttempts ?? 0;
    const token = `ws-recover-${attempts}-${o.fingerprint.slice(0, 24)}`;
    const exhausted = attempts >= ctx.deps.maxRecoveryAttempts;
    switch (stack.status) {
      case 'ROLLBACK_COMPLETE': {
        // A create that never completed: nothing was ever live, so delete and create again.
        if (exhausted)
          return recordFailure(
            ctx,
            o,
            'RecoveryExhausted',
            `stack ${stack.name} failed to create ${attempts} times; read its events, fix the cause, then delete it (the next pass creates it again; or run worker-stacks retry ${ctx.record.name})`,
            { stall: true },
          );
        // The stack id is dropped first: the stack about to vanish is ours to delete, not one that went missing.
        ctx.recorder.stage(
          { stackId: undefined, stackStatus: 'DELETE_IN_PROGRESS', cloudConfigChecksum: undefined },
          CONDITIONS.progressing(
            'RecreatingStack',
            `stack ${stack.name} is ROLLBACK_COMPLETE after a failed create: deleting it to create it again`,
          ),
          { recoveryAttempts: attempts + 1 },
        );
        // Counted before the call, as an execute is: a crash right after it cannot buy another attempt.
        await ctx.recorder.writeBeforeMutation();
        await ctx.region.cfn.deleteStack(stack.id, token);
        ctx.deps.slots?.observed(ctx.unit.slot, true);
        return { result: 'waiting', requeueAfterMs: ctx.pollMs, message: `deleting ${stack.name} to create it again` };
      }
      case 'UPDATE_ROLLBACK_FAILED': {
        if (exhausted) {
          return recordFailure(
            ctx,
            o,
            'RecoveryExhausted',
            `stack ${stack.name} is UPDATE_ROLLBACK_FAILED after ${attempts} ContinueUpdateRollback attempts; fix the resource named in its events, then run aws cloudformation continue-update-rollback (with --resources-to-skip if it cannot be fixed); the next pass sees the stack move on, or run worker-stacks retry ${ctx.record.name}`,
            { stall: true },
          );
        }
        ctx.recorder.stage(
          { stackStatus: stack.status },
          CONDITIONS.progressing(
            'ContinuingRollback',
            `stack ${stack.name} is UPDATE_ROLLBACK_FAILED: ContinueUpdateRollback, attempt ${attempts + 1} of ${ctx.deps.maxRecoveryAttempts}`,
          ),
          { recoveryAttempts: attempts + 1 },
        );
        await ctx.recorder.writeBeforeMutation();
        await ctx.region.cfn.continueUpdateRollback(stack.id, token);
        ctx.deps.slots?.observed(ctx.unit.slot, true);
        return { result: 'waiting', requeueAfterMs: ctx.pollMs, message: 'continuing the rollback' };
      }
      case 'DELETE_FAILED':
      case 'ROLLBACK_FAILED': {
        const events = lastOperation(await ctx.region.cfn.operationEvents(stack.id), stack.name);
        const stuck = events
          .filter((e) => /_FAILED$/.test(e.status))
          .map((e) => `${e.logicalId} (${e.resourceType}): ${e.reason ?? e.status}`);
        return recordFailure(
          ctx,
          o,
          camel(stack.status) as Reason,
          `stack ${stack.name} is ${stack.status}; an operator must act. Failed resources: ${stuck.join('; ') || 'none reported'}`,
          { stall: true },
        );
      }
      default:
        return undefined;
    }
  },
});

/**
 * 9. A cluster rolls at most spec.rollout.maxConcurrentPools of its pools' nodes at once (so it never loses two pools
 * together): a change whose roll key differs (a new config, image, instance types, subnets, capacity or release) waits
 * while others roll. --concurrency bounds the stacks in progress across the fleet: a stack over either bound waits.
 */
export const acquireSlot = task<Observed & RollKeyed>()({
  name: TASK.acquireSlot,
  deps: ['slots', 'pollMs'],
  when: (ctx) => Boolean(ctx.deps.slots) || ctx.unit.pool !== undefined || Boolean(ctx.recorder.clusterStatus.pools),
  run(ctx, o) {
    const max = o.cluster.spec.rollout.maxConcurrentPools;
    const others = rollingPools(ctx, o);
    if (o.roll.rolls && others.length >= max) {
      const message = `waiting to replace nodes (${o.roll.cause}): ${others.join(', ')} ${others.length === 1 ? 'is' : 'are'} rolling (spec.rollout.maxConcurrentPools ${max})`;
      // Said once when the wait starts (the pool's own line), not on every look while the others roll.
      const before = ctx.status.conditions.find((c) => c.type === 'Progressing');
      if (before?.reason !== 'WaitingForPools' || before.message !== message) o.log.info({}, message);
      ctx.recorder.stage({ desiredChecksum: o.config.checksum }, CONDITIONS.progressing('WaitingForPools', message));
      return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
    }
    if (!ctx.deps.slots || ctx.deps.slots.tryAcquire(ctx.unit.slot)) return undefined;
    ctx.recorder.stage(
      { desiredChecksum: o.config.checksum },
      CONDITIONS.progressing('WaitingForSlot', 'waiting for a free slot: --concurrency stacks are in progress'),
    );
    return { result: 'waiting', requeueAfterMs: ctx.pollMs, message: 'waiting for a slot' };
  },
});

/**
 * 10. The same code as `cdk synth`, in-process: the synthesis the roll key was read from, when this reconcile made it
 * or an earlier one of the same inputs kept it (a held cluster, let go).
 */
export const synthesize = task<Observed & RollKeyed, Synthesized>()({
  name: TASK.synthesize,
  deps: [...SYNTHESIZE_DEPS, 'kept'],
  async run(ctx, o) {
    return { synth: o.synth ?? keptSynthesis(ctx, o) ?? (await synthesizeFor(ctx, o)) };
  },
});

/** 11. Publish the config object (content-addressed: existing keys are skipped). */
export const publish = task<Observed & Synthesized>()({
  name: TASK.publish,
  deps: ['workDir'],
  async run(ctx, o) {
    const r = await ctx.region.publisher.publish(o.synth.assets);
    o.log.info({ uploaded: r.uploaded, skipped: r.skipped }, 'assets published');
    // Nothing reads the assembly again: it does not sit in the work dir (memory) for the length of the stack wait.
    removeAssembly(ctx.deps.workDir, assemblyKey(o.cluster.metadata.name, ctx.unit.stackName), (msg) =>
      o.log.warn({}, msg),
    );
  },
});

/** 12. A change set named after the inputs: a retried step finds and reuses it. */
export const changeSet = task<Observed & RollKeyed & Synthesized, ChangeSetReady>()({
  name: TASK.changeSet,
  deps: [...RECORD_SUCCESS_DEPS, ...WAIT_FOR_IMPORTS_DEPS, 'changeSetTimeoutMs'],
  async run(ctx, o) {
    // Named after the inputs and the stack as it is: a repeated step finds and reuses its change set, while a re-apply
    // after an out-of-band change (same inputs, another live stack) gets a new one.
    const base = `${o.stack?.id ?? ''}\0${o.stack?.lastUpdated ?? ''}\0${o.live ?? ''}`;
    const name = `ws-${o.fingerprint.slice(0, 24)}-${sha256Hex(base).slice(0, 8)}`;
    const state = await ensureChangeSet(ctx.region, {
      synth: o.synth,
      stack: o.stack,
      name,
      description: `worker-stacks generation ${ctx.generation} config ${short(o.config.checksum)}`,
      tags: { [CLUSTER_TAG]: ctx.record.name, [OWNER_TAG]: ownerOf(ctx.record) },
      timeoutMs: ctx.deps.changeSetTimeoutMs,
      rollbackConfiguration: rollbackConfiguration(o.cluster.spec.rollout),
      // Our own execution in flight is in status.controller.executing (the record path): one found executed here is older.
      executedIsEarlier: true,
    });
    switch (state.kind) {
      case 'no-changes':
        return recordSuccess(ctx, o, 'no-changes', o.fingerprint);
      case 'failed':
        if (IMPORT_REFUSAL.test(state.info.statusReason ?? ''))
          return waitForImports(ctx, o, `change set ${state.info.name}: ${state.info.statusReason ?? ''}`);
        return recordFailure(
          ctx,
          o,
          'ChangeSetFailed',
          `change set ${state.info.name} is ${state.info.status}: ${state.info.statusReason ?? 'no reason given'}`,
        );
      case 'executed':
        return { changeSet: { name: state.name, executed: true } }; // executing (a read older than it): say so and look again
      case 'ready':
        return { changeSet: { name: state.info.name, token: executeToken(state.info), executed: false } };
    }
  },
});

/** A reconcile whose image channel pins a pass refreshed meanwhile (a release recorded or halted) looks again at once. */
const PINS_MOVED = {
  result: 'waiting',
  requeueAfterMs: 0,
  message:
    "the image channels' pins changed during this reconcile (a release recorded or halted): looking again with them",
} as const;

/** 13. Execute, after saying so in the status; then requeue: the stack is watched, not waited on. */
export const execute = task<Observed & RollKeyed & Synthesized & ChangeSetReady>()({
  name: TASK.execute,
  deps: ['images', 'now', 'release', 'code', 'slots', 'pollMs'],
  async run(ctx, o) {
    const { config, changeSet: cs } = o;
    if (ctx.pinsMoved()) return PINS_MOVED;
    const rolls = o.roll.rolls || !o.stack;
    const configRolls = o.live !== config.checksum;
    const why = o.drift ? `${o.drift.message}; re-applying the object. ` : '';
    // How the roll goes (batches, the gate, drain), so the log says what to expect before the stack is watched.
    const how = rolls ? `; rolls ${describeRollout(specRollout(o.cluster.spec, ctx.unit.pool))}` : '';
    // What changes: a repair restores the applied config, a new stack gets its first, an edit says what it changed.
    const what = o.drift
      ? o.drift.reason === 'StackDeleted'
        ? 'the stack is created again'
        : `restoring it over ${short(o.live)}`
      : (o.configChange ?? (o.stack ? `the stack carries ${short(o.live)}` : 'first config'));
    // A roll that keeps the config (a new image, subnets, a release's launch template) says its own cause.
    const cause = o.roll.cause && o.roll.cause !== 'config' ? ` (${o.roll.cause})` : '';
    const rolling = configRolls
      ? `rolling the nodes to config ${short(config.checksum)}: ${what}${cause}${how}`
      : `rolling the nodes${cause}; the node config ${short(config.checksum)} is unchanged${how}`;
    const message = `${why}${rolls ? rolling : 'updating the stack; no node is replaced (the roll key is unchanged)'}`;
    const executing = {
      fingerprint: o.fingerprint,
      changeSet: cs.name,
      checksum: config.checksum,
      startedAt: ctx.deps.now().toISOString(),
      ...(o.roll.desired ? { rollKey: o.roll.desired.key } : {}),
      rolls: o.roll.rolls,
    };
    const appliedBy = ctx.deps.release ? { version: ctx.deps.release, code: ctx.deps.code } : undefined;
    // A roll says what changed (the config's files, else its cause); a repair what it restores, whether it rolls or not.
    const lastConfigChange = configRolls || o.drift ? what : o.roll.cause;
    const change = rolls || o.drift ? { lastConfigChange, lastConfigChangeTime: executing.startedAt } : {};
    ctx.recorder.stage(
      { ...change, desiredChecksum: config.checksum, observedGeneration: ctx.generation, paused: undefined },
      CONDITIONS.progressing(o.drift ? o.drift.reason : 'ChangeSetExecuting', message),
      { executing, appliedBy },
    );
    // The one write before the workflow's end: `executing` must be durable before the call, so that a crash or a lost
    // leadership right after it still knows whose operation the stack is running (the record path) and counts it;
    // a stale read fails here, before anything is executed.
    await ctx.recorder.writeBeforeMutation();
    // …and during that write (a pass's refresh may halt a release meanwhile): left unexecuted, as a crash here would
    // leave it; the record path finds the change set AVAILABLE, forgets it, and applies with the pins of now.
    if (ctx.pinsMoved()) return PINS_MOVED;
    o.log.info({ changeSet: cs.name }, message);
    if (!cs.executed) await ctx.region.cfn.executeChangeSet(o.synth.stackName, cs.name, cs.token);
    // Our operation: the slot stays held until a look sees the stack settled.
    ctx.deps.slots?.observed(ctx.unit.slot, true);
    return { result: 'waiting', requeueAfterMs: ctx.pollMs, message };
  },
});
