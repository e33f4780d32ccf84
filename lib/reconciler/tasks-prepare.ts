import { isComplete, isInProgress } from '../aws/cloudformation-port';
import { ClusterStatus, ConditionType, getCondition } from '../cluster/status';
import { validateCluster } from '../cluster/validate';
import { listTemplates } from '../cloudconfig/templates';
import { renderConfig } from '../cloudconfig/render';
import { formatProblem } from '../errors';
import { workerStackName } from '../stacks/naming';
import { configChanges, configDigests, describeConfigChanges } from './config-changes';
import { CONDITIONS, ReconcileContext, Task } from './context';
import { inputsFingerprint } from './fingerprint';

/**
 * 0. The same bytes, templates and code as the last successful apply, and the listed stack settled in a complete
 * state: nothing can have changed, so stop before even validating (what a restarted daemon's first pass costs).
 */
export const skipIfSameInputs: Task = {
  name: 'skip-if-same-inputs',
  when: (ctx) => Boolean(ctx.listedStack) && ctx.derivedKey !== undefined && !ctx.deps.dryRun,
  async run(ctx) {
    const s = ctx.status;
    const stack = ctx.listedStack!;
    const same = s.appliedInputsKey === ctx.derivedKey && isComplete(stack.status) && s.stackStatus === stack.status && s.observedGeneration === ctx.generation;
    return same && isSettled(s, ctx.generation) ? { result: 'unchanged' } : undefined;
  },
};

/** 1. The object is valid, or nothing touches AWS. */
export const validate: Task = {
  name: 'validate',
  async run(ctx) {
    const { record } = ctx;
    const hit = ctx.deps.derived?.get(record.name, ctx.derivedKey);
    if (hit) {
      ctx.cluster = hit.cluster;
      return;
    }
    const result = record.parseProblems.length ? { problems: record.parseProblems } : validateCluster(record.raw, { file: record.source, templates: listTemplates(ctx.deps.templatesDir) });
    if ('cluster' in result && result.cluster) {
      ctx.cluster = result.cluster;
      return;
    }
    const message = result.problems.map(formatProblem).join('; ');
    ctx.log.warn({ problems: result.problems }, 'invalid cluster object; nothing was touched');
    await ctx.writeStatus(ctx.withConditions(ctx.status, CONDITIONS.failed('InvalidSpec', `${message} (fix the object; the stack was not touched)`)));
    // No requeue: a change to the object triggers the next attempt.
    return { result: 'invalid', message };
  },
};

/** 2. Render the big config; its checksum and the code and spec give the inputs' fingerprint. */
export const render: Task = {
  name: 'render',
  async run(ctx) {
    const hit = ctx.deps.derived?.get(ctx.record.name, ctx.derivedKey);
    ctx.config = hit?.config ?? renderConfig(ctx.cluster!, ctx.deps.templatesDir);
    ctx.fingerprint = hit?.fingerprint ?? inputsFingerprint(ctx.cluster!, ctx.config.checksum, ctx.deps.code);
    if (!hit) ctx.deps.derived?.set(ctx.record.name, ctx.derivedKey, { cluster: ctx.cluster!, config: ctx.config, fingerprint: ctx.fingerprint });
    ctx.log = ctx.log.child({ checksum: ctx.config.checksum });
    if (ctx.status.cloudConfigChecksum && ctx.status.cloudConfigChecksum !== ctx.config.checksum) {
      ctx.configChange = describeConfigChanges(configChanges(ctx.status.configDigests, configDigests(ctx.config.node)));
    }
  },
};

/** 3. Look at the stack as it is (from the pass's batched listing when there is one). */
export const observe: Task = {
  name: 'observe',
  async run(ctx) {
    const name = workerStackName(ctx.record.name);
    ctx.stack = ctx.listedStack === undefined ? await ctx.region.cfn.describeStack(name) : (ctx.listedStack ?? undefined);
    // Never start an update while the stack is busy (also after a restart): wait for it instead.
    ctx.resume = Boolean(ctx.stack && isInProgress(ctx.stack.status) && ctx.stack.status !== 'REVIEW_IN_PROGRESS');
  },
};

/** 4. Unchanged inputs on a complete stack: nothing to do, no synthesis, no AWS write. Failed inputs wait for their backoff. */
export const skipIfUnchanged: Task = {
  name: 'skip-if-unchanged',
  when: (ctx) => !ctx.resume,
  async run(ctx) {
    const s = ctx.status;
    if (ctx.stack && isComplete(ctx.stack.status) && s.inputsFingerprint === ctx.fingerprint && s.cloudConfigChecksum === ctx.config!.checksum) {
      // Same fingerprint, so these are the applied inputs: remember their key for skip-if-same-inputs.
      const next = { ...s, stackStatus: ctx.stack.status, observedGeneration: ctx.generation, appliedInputsKey: ctx.derivedKey ?? s.appliedInputsKey };
      // Already Ready for this generation: keep the conditions (and the reason of the last apply), so an unchanged pass writes nothing.
      await ctx.writeStatus(isSettled(s, ctx.generation) ? next : ctx.withConditions(next, CONDITIONS.ready('UpToDate', `stack ${ctx.stack.status}, config ${ctx.config!.checksum.slice(0, 12)} live`)));
      return { result: 'unchanged' };
    }
    const retryAt = s.retryAfter ? Date.parse(s.retryAfter) : 0;
    if (s.failedFingerprint === ctx.fingerprint && retryAt > ctx.deps.now().getTime()) {
      return { result: 'backoff', requeueAfterMs: retryAt - ctx.deps.now().getTime(), message: `retrying after ${s.retryAfter}` };
    }
    return undefined;
  },
};

/** Ready=True, nothing in progress, nothing failed, all for this generation. */
function isSettled(s: ClusterStatus, generation: number): boolean {
  const is = (type: ConditionType, status: string) => getCondition(s, type)?.status === status;
  return is('Ready', 'True') && is('Progressing', 'False') && is('Failed', 'False') && s.conditions.every((c) => c.observedGeneration === generation);
}

/** 5. The credentials must belong to the cluster's account before anything is changed. */
export const checkAccount: Task = {
  name: 'check-account',
  when: (ctx) => !ctx.resume,
  async run(ctx) {
    const actual = await ctx.deps.identity.account();
    if (actual === ctx.cluster!.spec.account) return;
    const message = `credentials are for account ${actual}, the cluster is in ${ctx.cluster!.spec.account}; use credentials of that account (a profile or role), nothing was changed`;
    await ctx.writeStatus(ctx.withConditions(ctx.status, CONDITIONS.failed('AccountMismatch', message)));
    return { result: 'failed', message };
  },
};

/** Dry run: say what would happen, then stop before anything is written. */
export const dryRunReport: Task = {
  name: 'dry-run',
  when: (ctx) => ctx.deps.dryRun,
  async run(ctx: ReconcileContext) {
    const checksum = ctx.config!.checksum.slice(0, 12);
    const message = ctx.resume
      ? `would wait for the stack (${ctx.stack!.status})`
      : !ctx.stack
        ? `would create the stack with config ${checksum}`
        : ctx.status.cloudConfigChecksum !== ctx.config!.checksum
          ? `would update the stack and roll the nodes: config ${ctx.status.cloudConfigChecksum?.slice(0, 12) ?? 'unknown'} -> ${checksum} (${ctx.configChange ?? 'first recorded config'})`
          : `would update the stack (${ctx.stack.status}); the config ${checksum} is unchanged, nodes do not roll`;
    return { result: 'dry-run', message };
  },
};
