import { isComplete, isInProgress, isRolledBack, StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterStatus, ConditionType, getCondition } from '../../../model/cluster/schema/status';
import { validateCluster } from '../../../model/cluster/validate';
import { listTemplates } from '../../../model/cloudconfig/templates';
import { formatProblem } from '../../../core/errors';
import { CONDITIONS } from '../workflow/conditions';
import { TASK } from '../workflow/context';
import { Desired, Drift, Observed, Start, Validated } from '../workflow/state';
import { need, task } from '../workflow/task';
import { TaskContext } from '../workflow/task-context';
import { templateDirectory } from '../../../platform/files/template-directory';

/**
 * 0. The same bytes, templates and code as the last successful apply, and the listed stack settled on exactly what
 * was recorded (status, checksum, last update): nothing can have changed, so stop before even validating.
 */
export const skipIfSameInputs = task<Start>()({
  name: TASK.skipIfSameInputs,
  deps: ['dryRun', 'code', 'images'],
  when: (ctx) => Boolean(ctx.listedStack) && ctx.derivedKey !== undefined && !ctx.deps.dryRun,
  run(ctx) {
    const s = ctx.status;
    const c = ctx.recorder.controller;
    const stack = need(ctx.listedStack, 'the listed stack');
    const same =
      c.appliedInputsKey === ctx.derivedKey &&
      !c.executing &&
      isComplete(stack.status) &&
      s.stackStatus === stack.status &&
      s.cloudConfigChecksum !== undefined &&
      stack.outputs.ConfigChecksum === s.cloudConfigChecksum &&
      stack.lastUpdated === s.stackLastUpdated &&
      s.observedGeneration === ctx.generation &&
      !retryRequested(ctx);
    return same && isSettled(s, ctx.generation) ? { result: 'unchanged' } : undefined;
  },
});

/** 1. The object is valid, or nothing touches AWS. */
export const validate = task<Start, Pick<Validated, 'cluster'>>()({
  name: TASK.validate,
  deps: ['derived', 'templatesDir', 'code', 'images'],
  run(ctx, s) {
    const { record } = ctx;
    const hit = ctx.deps.derived?.get(record.name, ctx.derivedKey);
    if (hit) return { cluster: hit.cluster };
    const result = record.parseProblems.length
      ? { problems: record.parseProblems }
      : validateCluster(record.raw, {
          file: record.source,
          templates: listTemplates(templateDirectory(ctx.deps.templatesDir)),
          images: ctx.images,
        });
    if ('cluster' in result && result.cluster) return { cluster: result.cluster };
    const message = result.problems.map(formatProblem).join('; ');
    s.log.warn({ problems: result.problems }, 'invalid cluster object; nothing was touched');
    // The running stack is not touched, so Ready (what is live) is left as it was: an invalid edit is not an outage.
    // A cluster that never had a live config is not Ready either.
    ctx.recorder.stage(
      { observedGeneration: ctx.generation },
      CONDITIONS.stalled('InvalidSpec', `${message} (fix the object; the stack was not touched)`, {
        ready: ctx.status.cloudConfigChecksum ? undefined : false,
      }),
    );
    // No requeue: a change to the object triggers the next attempt.
    return { result: 'invalid', message };
  },
});

/**
 * 3. Look at the stack as it is (from the pass's batched listing when there is one), and at the checksum it carries:
 * the live stack is the truth, not what was recorded. A recorded stack that is gone, or a settled stack that is not
 * what was applied, is said so here.
 */
export const observe = task<Desired, Pick<Observed, 'stack' | 'live' | 'drift' | 'described'>>()({
  name: TASK.observe,
  deps: ['slots'],
  async run(ctx, d) {
    const name = ctx.unit.stackName;
    const executing = ctx.recorder.controller.executing;
    let described = ctx.listedStack === undefined || ctx.listedDescribed;
    let stack =
      ctx.listedStack === undefined ? await ctx.region.cfn.describeStack(name) : (ctx.listedStack ?? undefined);
    // A shared listing can be older than our own create: absent there is not proof of absence for a stack we know of.
    if (!stack && !described && (executing || ctx.status.stackId)) {
      stack = await ctx.region.cfn.describeStack(name);
      described = true;
    }
    ctx.deps.slots?.observed(ctx.unit.slot, Boolean(stack && busy(stack)));
    const live = stack ? await liveChecksum(ctx, stack) : undefined;
    const drift = driftOf(ctx, name, stack, live, d.config.checksum);
    // `stackChecksum`, not `liveChecksum`: that key is bound to every line already (the checksum as recorded).
    if (drift)
      d.log.warn(
        {
          reason: drift.reason,
          recordedChecksum: ctx.status.cloudConfigChecksum ?? null,
          stackChecksum: live ?? null,
          desiredChecksum: d.config.checksum,
        },
        drift.message,
      );
    return { stack, live, drift, described };
  },
});

/**
 * The one function that sets the live checksum in a status: the stack's fields and the checksum it carries, both as
 * read from the stack itself, never the checksum that was asked for. Its last update time goes with them, so a later
 * look compares the stack with what was seen of it (not with an older apply) to tell drift. Without a checksum read
 * (`live` undefined) the recorded one is kept: nothing is recorded that was not seen live.
 */
export function liveStatus(ctx: TaskContext<never>, stack: StackSummary, live: string | undefined) {
  return {
    stackName: stack.name,
    stackId: stack.id,
    stackStatus: stack.status,
    stackLastUpdated: stack.lastUpdated,
    cloudConfigChecksum: live ?? ctx.status.cloudConfigChecksum,
  };
}

/** A recorded stack that is gone, or a settled stack that is not what was applied (by checksum or update time). */
function driftOf(
  ctx: TaskContext<never>,
  name: string,
  stack: StackSummary | undefined,
  live: string | undefined,
  desired: string,
): Drift | undefined {
  const s = ctx.status;
  const settled = stack && isComplete(stack.status) && !ctx.recorder.controller.executing;
  if (!stack && s.stackId) {
    return {
      reason: 'StackDeleted',
      message: `stack ${name} (${s.stackId}) is gone: it was deleted outside worker-stacks; the recorded config ${short(s.cloudConfigChecksum)} is no longer live`,
    };
  }
  if (settled && s.cloudConfigChecksum && live !== s.cloudConfigChecksum && live !== desired) {
    return {
      reason: 'Drifted',
      message: `stack ${name} carries config ${short(live)}, but ${short(s.cloudConfigChecksum)} was applied: it was changed outside worker-stacks`,
    };
  }
  if (settled && s.stackLastUpdated && stack.lastUpdated && stack.lastUpdated !== s.stackLastUpdated) {
    return {
      reason: 'Drifted',
      message: `stack ${name} was updated at ${stack.lastUpdated}, after worker-stacks applied it (${s.stackLastUpdated}): it was changed outside worker-stacks`,
    };
  }
  return undefined;
}

/**
 * The checksum the stack itself reports: its ConfigChecksum output, or (where the listing leaves outputs out, as
 * some emulators do) the output's literal value in the live template. Nothing is guessed: undefined when neither says.
 */
export async function liveChecksum(ctx: TaskContext<never>, stack: StackSummary): Promise<string | undefined> {
  if (stack.outputs.ConfigChecksum) return stack.outputs.ConfigChecksum;
  if (!isComplete(stack.status) && !isRolledBack(stack.status)) return undefined;
  const body = await ctx.region.cfn.getTemplate(stack.id);
  const value = body
    ? (JSON.parse(body) as { Outputs?: { ConfigChecksum?: { Value?: unknown } } }).Outputs?.ConfigChecksum?.Value
    : undefined;
  return typeof value === 'string' && /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}

export function short(checksum: string | undefined): string {
  return checksum ? checksum.slice(0, 12) : 'unknown';
}

/** An operator asked for a retry that has not been acted on yet. */
export function retryRequested(ctx: TaskContext<never>): boolean {
  const asked = ctx.record.retryRequest;
  return asked !== undefined && asked !== ctx.recorder.controller.retryHandled;
}

export const busy = (stack: StackSummary) => isInProgress(stack.status) && stack.status !== 'REVIEW_IN_PROGRESS';

/** Ready=True, nothing in progress, nothing wrong, all for this generation. */
export function isSettled(s: ClusterStatus, generation: number): boolean {
  const is = (type: ConditionType, status: string) => getCondition(s, type)?.status === status;
  return (
    is('Ready', 'True') &&
    is('Progressing', 'False') &&
    !is('Stalled', 'True') &&
    !is('Degraded', 'True') &&
    s.conditions.every((c) => c.observedGeneration === generation)
  );
}
