import { firstFailure, isComplete, isRolledBack, StackEvent } from '../aws/cloudformation-port';
import { CLUSTER_TAG } from '../stacks/naming';
import { backoffDelay } from './backoff';
import { configDigests } from './config-changes';
import { ensureChangeSet, executeToken } from './deploy-stack';
import { camel, CONDITIONS, Outcome, ReconcileContext, Task } from './context';
import { removeAssembly, synthesizeStack } from './synthesize';

const WAIT_REQUEUE_MS = 10_000;

/** Records a failure with its reason and schedules the retry (jittered exponential backoff). */
export async function recordFailure(ctx: ReconcileContext, reason: string, message: string, opts: { retry: boolean } = { retry: true }): Promise<Outcome> {
  const failures = (ctx.status.failures ?? 0) + 1;
  const delay = backoffDelay(failures, ctx.deps.backoff);
  const live = ctx.stack?.outputs.ConfigChecksum;
  await ctx.writeStatus(
    ctx.withConditions(
      {
        ...ctx.status,
        // Only what is live: after a rollback that is the old config, never the one that failed.
        cloudConfigChecksum: live ?? ctx.status.cloudConfigChecksum,
        stackStatus: ctx.stack?.status ?? ctx.status.stackStatus,
        failures,
        failedFingerprint: ctx.fingerprint,
        retryAfter: opts.retry ? new Date(ctx.deps.now().getTime() + delay).toISOString() : undefined,
      },
      CONDITIONS.failed(reason, message),
    ),
  );
  ctx.log.error({ reason, failures, liveChecksum: live ?? ctx.status.cloudConfigChecksum }, message);
  return { result: 'failed', message, requeueAfterMs: opts.retry ? delay : undefined };
}

/** 6. Documented recovery for the stack states that a blind retry would never leave. */
export const recover: Task = {
  name: 'recover',
  when: (ctx) => !ctx.resume && Boolean(ctx.stack),
  async run(ctx) {
    const stack = ctx.stack!;
    const attempts = ctx.status.recoveryAttempts ?? 0;
    const token = `ws-recover-${attempts}-${ctx.fingerprint!.slice(0, 24)}`;
    const exhausted = attempts >= ctx.deps.maxRecoveryAttempts;
    switch (stack.status) {
      case 'ROLLBACK_COMPLETE': {
        // A create that never completed: nothing was ever live, so delete and create again.
        if (exhausted) return recordFailure(ctx, 'RecoveryExhausted', `stack ${stack.name} failed to create ${attempts} times; read its events, fix the cause, then delete it`, { retry: false });
        await ctx.writeStatus(ctx.withConditions({ ...ctx.status, recoveryAttempts: attempts + 1 }, CONDITIONS.progressing('RecreatingStack', `stack ${stack.name} is ROLLBACK_COMPLETE after a failed create: deleting it to create it again`)));
        await ctx.region.cfn.deleteStack(stack.id, token);
        const after = await ctx.region.cfn.waitForStack(stack.id, { timeoutMs: ctx.deps.waitTimeoutMs, signal: ctx.deps.signal, onEvent: (e) => ctx.log.info({ event: e }, 'stack event') });
        if (after && after.status !== 'DELETE_COMPLETE') return { result: 'waiting', requeueAfterMs: WAIT_REQUEUE_MS, message: `deleting ${stack.name}: ${after.status}` };
        ctx.stack = undefined;
        return undefined;
      }
      case 'UPDATE_ROLLBACK_FAILED': {
        if (exhausted) {
          return recordFailure(ctx, 'RecoveryExhausted', `stack ${stack.name} is UPDATE_ROLLBACK_FAILED after ${attempts} ContinueUpdateRollback attempts; fix the resource named in its events, then run aws cloudformation continue-update-rollback (with --resources-to-skip if it cannot be fixed)`, { retry: false });
        }
        await ctx.writeStatus(ctx.withConditions({ ...ctx.status, recoveryAttempts: attempts + 1 }, CONDITIONS.progressing('ContinuingRollback', `stack ${stack.name} is UPDATE_ROLLBACK_FAILED: ContinueUpdateRollback, attempt ${attempts + 1} of ${ctx.deps.maxRecoveryAttempts}`)));
        await ctx.region.cfn.continueUpdateRollback(stack.id, token);
        return { result: 'waiting', requeueAfterMs: 0, message: 'continuing the rollback' };
      }
      case 'DELETE_FAILED':
      case 'ROLLBACK_FAILED': {
        const events = lastOperation(await ctx.region.cfn.stackEvents(stack.id), stack.name);
        const stuck = events.filter((e) => /_FAILED$/.test(e.status)).map((e) => `${e.logicalId} (${e.resourceType}): ${e.reason ?? e.status}`);
        return recordFailure(ctx, camel(stack.status), `stack ${stack.name} is ${stack.status}; an operator must act. Failed resources: ${stuck.join('; ') || 'none reported'}`, { retry: false });
      }
      default:
        return undefined;
    }
  },
};

/** 7. The same code as `cdk synth`, in-process. */
export const synthesize: Task = {
  name: 'synthesize',
  when: (ctx) => !ctx.resume,
  async run(ctx) {
    // The config rendered (and memoized) in the render step: synthesis never renders it a second time.
    const opts = { templatesDir: ctx.deps.templatesDir, workDir: ctx.deps.workDir, fingerprint: ctx.fingerprint!, nag: ctx.deps.nag, config: ctx.config, source: ctx.record.source };
    ctx.synth = ctx.deps.synthesizer ? await ctx.deps.synthesizer(ctx.cluster!, opts) : synthesizeStack(ctx.cluster!, opts);
    ctx.log.info({ stack: ctx.synth.stackName, synthMs: Math.round(ctx.synth.durationMs) }, 'synthesized');
  },
};

/** 8. Publish the config object (content-addressed: existing keys are skipped). */
export const publish: Task = {
  name: 'publish',
  when: (ctx) => !ctx.resume,
  async run(ctx) {
    const r = await ctx.region.publisher.publish(ctx.synth!.assets);
    ctx.log.info({ uploaded: r.uploaded, skipped: r.skipped }, 'assets published');
    // Nothing reads the assembly again: it does not sit in the work dir (memory) for the length of the stack wait.
    removeAssembly(ctx.deps.workDir, ctx.cluster!.metadata.name, (msg) => ctx.log.warn({}, msg));
  },
};

/** 9. A change set named after the inputs: a retried step finds and reuses it. */
export const changeSet: Task = {
  name: 'change-set',
  when: (ctx) => !ctx.resume,
  async run(ctx) {
    ctx.changeSetName = `ws-${ctx.fingerprint!.slice(0, 32)}`;
    const state = await ensureChangeSet(ctx.region, {
      synth: ctx.synth!,
      stack: ctx.stack,
      name: ctx.changeSetName,
      description: `worker-stacks generation ${ctx.generation} config ${ctx.config!.checksum.slice(0, 12)}`,
      tags: { [CLUSTER_TAG]: ctx.record.name },
      timeoutMs: ctx.deps.changeSetTimeoutMs,
    });
    if (state.kind === 'executed') ctx.executed = true; // executed before a restart: only wait and record
    if (state.kind === 'ready') ctx.changeSetToken = executeToken(state.info);
    if (state.kind === 'no-changes') return recordSuccess(ctx, 'no-changes');
    if (state.kind === 'failed') return recordFailure(ctx, 'ChangeSetFailed', `change set ${ctx.changeSetName} is ${state.info.status}: ${state.info.statusReason ?? 'no reason given'}`);
    return undefined;
  },
};

/** 10. Execute, after saying so in the status. */
export const execute: Task = {
  name: 'execute',
  when: (ctx) => !ctx.resume && !ctx.executed,
  async run(ctx) {
    const rolls = ctx.status.cloudConfigChecksum !== ctx.config!.checksum;
    const message = rolls ? `rolling the nodes to config ${ctx.config!.checksum.slice(0, 12)}: ${ctx.configChange ?? 'first config'}` : 'updating the stack; the node config is unchanged';
    await ctx.writeStatus(ctx.withConditions({ ...ctx.status, lastConfigChange: rolls ? ctx.configChange : ctx.status.lastConfigChange }, CONDITIONS.progressing('ChangeSetExecuting', message)));
    ctx.log.info({ changeSet: ctx.changeSetName }, message);
    await ctx.region.cfn.executeChangeSet(ctx.synth!.stackName, ctx.changeSetName!, ctx.changeSetToken!);
    ctx.executed = true;
  },
};

/** 11. Wait for a terminal state, logging each stack event; a long operation requeues instead of blocking. */
export const wait: Task = {
  name: 'wait',
  async run(ctx) {
    const name = ctx.stack?.id ?? ctx.synth!.stackName;
    const onEvent = (e: (typeof ctx.events)[number]) => {
      ctx.events.push(e);
      ctx.log.info({ event: { resource: e.logicalId, type: e.resourceType, status: e.status, reason: e.reason } }, `${e.logicalId} ${e.status}`);
    };
    const final = await ctx.region.cfn.waitForStack(name, { timeoutMs: ctx.deps.waitTimeoutMs, onEvent, signal: ctx.deps.signal });
    if (final) ctx.stack = final;
    if (final && final.status.endsWith('_IN_PROGRESS')) {
      await ctx.writeStatus(ctx.withConditions({ ...ctx.status, stackStatus: final.status }, CONDITIONS.progressing('WaitingForStack', `stack is ${final.status}`)));
      return { result: 'waiting', requeueAfterMs: WAIT_REQUEUE_MS, message: `stack is ${final.status}` };
    }
    return undefined;
  },
};

/** 12. Record what is live: the checksum only after a *_COMPLETE, the failure reason otherwise. */
export const record: Task = {
  name: 'record',
  async run(ctx) {
    const stack = ctx.stack;
    if (stack && isComplete(stack.status)) {
      if (!ctx.executed && ctx.resume) {
        // Someone's update (ours before a restart) finished: record what is live; the next pass checks the inputs.
        await ctx.writeStatus({ ...ctx.status, cloudConfigChecksum: stack.outputs.ConfigChecksum, stackId: stack.id, stackName: stack.name, stackStatus: stack.status });
        return { result: 'recorded', requeueAfterMs: 0 };
      }
      return recordSuccess(ctx, 'applied');
    }
    const events = ctx.events.length ? ctx.events : stack ? await ctx.region.cfn.stackEvents(stack.id) : [];
    const cause = firstFailure(lastOperation(events, stack?.name));
    const why = cause ? `${cause.logicalId} (${cause.resourceType}) ${cause.status}: ${cause.reason ?? ''}`.trim() : (stack?.statusReason ?? 'no failure event found');
    const status = stack?.status ?? 'STACK_GONE';
    const kept = isRolledBack(status) ? `; the previous config ${ctx.status.cloudConfigChecksum?.slice(0, 12) ?? '(none)'} stays live` : '';
    return recordFailure(ctx, failureReason(status), `stack ${status}: ${why}${kept}`);
  },
};

/**
 * The events of the stack's latest operation (from its "User Initiated" start on), so that a failure
 * is explained by its own events and never by an older failure still in the stack's history.
 */
export function lastOperation(events: readonly StackEvent[], stackName: string | undefined): readonly StackEvent[] {
  const isStart = (e: StackEvent) => e.logicalId === stackName && e.resourceType === 'AWS::CloudFormation::Stack' && /_IN_PROGRESS$/.test(e.status) && e.reason === 'User Initiated';
  let start = events.length - 1;
  while (start >= 0 && !isStart(events[start])) start--;
  return start < 0 ? events : events.slice(start);
}

/** Condition reason for a stack that did not complete. */
export function failureReason(status: string): string {
  const known: Record<string, string> = {
    UPDATE_ROLLBACK_COMPLETE: 'UpdateRolledBack',
    ROLLBACK_COMPLETE: 'CreateRolledBack',
    UPDATE_ROLLBACK_FAILED: 'UpdateRollbackFailed',
    STACK_GONE: 'StackDeleted',
  };
  return known[status] ?? camel(status);
}

async function recordSuccess(ctx: ReconcileContext, result: 'applied' | 'no-changes'): Promise<Outcome> {
  const stack = ctx.stack ?? (await ctx.region.cfn.describeStack(ctx.synth!.stackName));
  const live = stack?.outputs.ConfigChecksum ?? ctx.config!.checksum;
  const reason = result === 'no-changes' ? 'UpToDate' : ctx.status.stackId ? 'StackUpdated' : 'StackCreated';
  await ctx.writeStatus(
    ctx.withConditions(
      {
        ...ctx.status,
        cloudConfigChecksum: live,
        observedGeneration: ctx.generation,
        stackName: stack?.name,
        stackId: stack?.id,
        stackStatus: stack?.status,
        inputsFingerprint: ctx.fingerprint,
        appliedInputsKey: ctx.derivedKey,
        configDigests: configDigests(ctx.config!.node),
        failures: 0,
        retryAfter: undefined,
        failedFingerprint: undefined,
        recoveryAttempts: 0,
      },
      CONDITIONS.ready(reason, `stack ${stack?.status}, config ${live.slice(0, 12)} live`),
    ),
  );
  ctx.log.info({ liveChecksum: live, stackStatus: stack?.status }, result === 'applied' ? 'stack applied; checksum recorded' : 'no changes; checksum recorded');
  return { result };
}
