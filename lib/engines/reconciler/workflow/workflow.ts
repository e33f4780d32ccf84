import { StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { classifyError } from './classify';
import { CONDITIONS, Reason } from './conditions';
import { Outcome, ReconcileContext, ReconcilerDeps, TASK, TaskName } from './context';
import { OUTCOMES } from './outcomes';
import { Found, Observed, Start } from './state';
import { AnyTask, Hook, Progress, runWorkflow, toHooks, Workflow, WorkflowHooks } from './task';
import { StatusRecorder } from './status-recorder';

/** @internal Hooks the tests and the simulator use to act between tasks (a crash, a concurrent write). */
export { after, before } from './task';
export type { Hook, WorkflowHooks } from './task';
import { removeAssembly } from '../../synthesis/synthesize';
import { checkVersion } from '../tasks/check-version';
import { finalize } from '../tasks/finalize';
import { acquireSlot, changeSet, execute, publish, recordExecution, recover, synthesize, wait } from '../tasks/apply';
import { recordFailure } from '../tasks/record-outcome';
import { cleanConfigObjects } from '../tasks/clean-config-objects';
import { waitForWave } from '../tasks/wait-for-wave';
import {
  busy,
  checkAccount,
  dryRunReport,
  observe,
  paused,
  render,
  reportDrift,
  skipIfSameInputs,
  skipIfUnchanged,
  validate,
} from '../tasks/prepare';

/**
 * The reconcile workflows, in one place. Level-based: every step reads the state as it is now (the object and the
 * live stack); a repeated or resumed run converges on the same result. After `observe`, exactly one of three
 * workflows runs, chosen once from what was observed:
 *
 *   prepare:  finalize → skip-if-same-inputs → validate → render → observe   (finalize: the finalizer, and a deleted object's stack)
 *   resume:   wait                         (the stack is in progress: requeue and look again; never touched)
 *   record:   record-execution             (our change set ended: record what the stack reports, then apply if needed)
 *   apply:    skip-if-unchanged → check-version → paused → report-drift → check-account → dry-run → recover → wait-for-wave
 *             → acquire-slot → synthesize → publish → change-set → execute   (then requeue: the stack is watched, not waited on)
 *
 * and once the cluster is settled on its desired config (applied, no changes, or unchanged):
 *
 *   settled:  clean-config-objects
 */
export const PREPARE = Workflow.from<Start>()
  .then(finalize)
  .then(skipIfSameInputs)
  .then(validate)
  .then(render)
  .then(observe);
export const RESUME = Workflow.from<Observed>().then(wait);
export const APPLY = Workflow.from<Observed>()
  .then(skipIfUnchanged)
  .then(checkVersion)
  .then(paused)
  .then(reportDrift)
  .then(checkAccount)
  .then(dryRunReport)
  .then(recover)
  .then(waitForWave)
  .then(acquireSlot)
  .then(synthesize)
  .then(publish)
  .then(changeSet)
  .then(execute);
export const RECORD = Workflow.from<Observed>().then(recordExecution).concat(APPLY);
export const SETTLED = Workflow.from<Found>().then(cleanConfigObjects);

/** The workflow that follows `observe`, chosen once from what it observed. */
export function chooseWorkflow(ctx: ReconcileContext, o: Observed): Workflow<Observed, unknown> {
  if (o.stack && busy(o.stack)) return RESUME;
  if (ctx.recorder.controller.executing && !ctx.deps.dryRun) return RECORD;
  return APPLY;
}

/** Every task, once, in order (for documentation, tests and the bench's timing). */
export function allTasks(): AnyTask[] {
  return [...new Set([...PREPARE.tasks, ...RESUME.tasks, ...RECORD.tasks, ...SETTLED.tasks])];
}

/** Every task name, in order. @internal For the tests that crash a reconcile after each task. */
export function taskNames(): TaskName[] {
  return allTasks().map((t) => t.name);
}

export interface ReconcileOptions {
  readonly hooks?: readonly Hook[] | WorkflowHooks;
  /** The stack from the pass's batched listing; null = listed and absent; undefined = not listed. */
  readonly listedStack?: StackSummary | null;
  /** listedStack was described alone after this cluster's last write (DescribeStacks by name), not taken from a shared listing. @default false */
  readonly listedDescribed?: boolean;
  /** templatesVersion() of the templates dir, read once per pass; enables reuse of derived results. @default none: no reuse */
  readonly templatesVersion?: string;
}

/**
 * Reconciles one cluster object. Never throws (but for a test's CrashSignal): every error ends in the one error path
 * below. The tasks stage what they change in the status; it is written here, once, on every exit (success, requeue,
 * stall, error): one status write per reconcile, plus the one before ExecuteChangeSet (see PendingStatus).
 */
export async function reconcileCluster(
  rec: ClusterRecord,
  deps: ReconcilerDeps,
  opts: ReconcileOptions = {},
): Promise<Outcome> {
  const region = regionOf(rec.raw);
  const recorder = new StatusRecorder(rec, deps);
  const ctx = new ReconcileContext(
    rec,
    recorder,
    deps,
    region ? deps.aws(region, accountOf(rec.raw)) : undefined,
    opts.listedStack,
    opts.templatesVersion,
    opts.listedDescribed ?? false,
  );
  const hooks = toHooks(opts.hooks);
  const progress: Progress = { task: 'start', found: ctx.start() };
  // The fields every outcome carries: the desired checksum (when it rendered) and what the rollout gate decided.
  const tail = (o: Outcome): Outcome => ({
    ...o,
    checksum: progress.found.config?.checksum,
    ...(o.rollout || progress.found.rollout ? { rollout: o.rollout ?? progress.found.rollout } : {}),
  });
  try {
    let outcome: Outcome;
    try {
      const prepared = await runWorkflow(PREPARE, ctx, progress.found, hooks, progress);
      if ('outcome' in prepared) outcome = await settle(prepared.outcome);
      else {
        const applied = await runWorkflow(chooseWorkflow(ctx, prepared.found), ctx, prepared.found, hooks, progress);
        outcome = await settle('outcome' in applied ? applied.outcome : { result: 'applied' });
      }
    } catch (e) {
      outcome = onError(ctx, recorder, progress, e);
    }
    return tail(await commit(ctx, recorder, progress, outcome));
  } finally {
    // Publish drops the assembly; this catches a reconcile that ended between synthesis and publish.
    const { synth, cluster, log } = progress.found;
    if (cluster && (synth || progress.task === TASK.synthesize))
      removeAssembly(deps.workDir, cluster.metadata.name, (msg) => log.warn({}, msg));
  }

  async function settle(outcome: Outcome): Promise<Outcome> {
    // The settled workflow's tasks' `when` check the stack itself.
    if (OUTCOMES[outcome.result].settled) await runWorkflow(SETTLED, ctx, progress.found, hooks, progress);
    return outcome;
  }
}

/** The reconcile's one status write: what its tasks (or the error path) staged. A write that fails says so in the outcome. */
async function commit(
  ctx: ReconcileContext,
  recorder: StatusRecorder,
  { task, found }: Progress,
  outcome: Outcome,
): Promise<Outcome> {
  try {
    await recorder.flush();
    return outcome;
  } catch (e) {
    if (e instanceof CrashSignal) throw e;
    const message = `${task}: ${(e as Error | undefined)?.message ?? String(e)}`;
    if (classifyError(e).kind === 'conflict') {
      // The object changed underneath: look again with a fresh read (nothing staged on the stale one is kept).
      found.log.warn({ task }, message);
      return { ...outcome, result: 'conflict', requeueAfterMs: 0, message };
    }
    found.log.error({ task, err: String(e) }, 'could not record the status');
    return { ...outcome, result: 'failed', message, requeueAfterMs: ctx.deps.backoff.baseMs };
  }
}

/** The one error path: classify, stage what to record (the workflow writes it), and say when to try again. */
function onError(ctx: ReconcileContext, recorder: StatusRecorder, { task, found }: Progress, e: unknown): Outcome {
  if (e instanceof CrashSignal) throw e;
  const log = found.log;
  const kind = classifyError(e);
  const message = `${task}: ${(e as Error | undefined)?.message ?? String(e)}`;
  if (kind.kind === 'conflict') {
    // A stale read: nothing staged on it is written; the next reconcile starts from a fresh read.
    recorder.discard();
    log.warn({ task }, message);
    return { result: 'conflict', requeueAfterMs: 0, message };
  }
  if (kind.kind === 'busy') {
    // Our read did not show the operation yet: the stack is watched like any stack in progress, nothing is counted.
    log.info({ task }, `${message}; looking again after a poll`);
    ctx.deps.slots?.observed(ctx.record.name, true);
    ctx.recorder.stage(
      {},
      CONDITIONS.progressing('WaitingForStack', `${message.split('\n')[0]}; looking again after a poll`),
    );
    return { result: 'waiting', message, requeueAfterMs: ctx.pollMs };
  }
  if (kind.kind === 'transient') {
    // Not a failure: nothing is counted, Ready is left alone, and the queue retries with its own backoff.
    log.warn({ task, reason: kind.reason, err: message }, 'transient AWS error; requeued');
    ctx.recorder.stage({}, CONDITIONS.degraded(kind.reason, `${message} (transient; retrying)`));
    return { result: 'transient', reason: kind.reason, message, requeueAfterMs: ctx.deps.backoff.baseMs };
  }
  if (kind.kind === 'account') return accountUnusable(ctx, found, kind.reason, message, e);
  if (kind.reason === 'ReconcileFailed')
    log.error({ task, err: (e as Error | undefined)?.stack ?? String(e) }, 'unexpected error');
  return recordFailure(ctx, found, kind.reason, message, { stall: kind.kind === 'stalled' });
}

/**
 * The cluster's account cannot be used: Stalled with the fix, nothing counted (no failed fingerprint), no requeue —
 * the daemon's next resync looks again, so bootstrapping the account heals each of its clusters by itself.
 */
function accountUnusable(ctx: ReconcileContext, found: Found, reason: Reason, message: string, e: unknown): Outcome {
  const hint = (e as { hint?: string }).hint;
  const account = accountOf(ctx.record.raw) ?? "the cluster's account";
  const region = regionOf(ctx.record.raw) ?? '<region>';
  const fix =
    hint ??
    `bootstrap account ${account} for this daemon: worker-stacks bootstrap --account ${account} --region ${region} --trust <this daemon's role ARN>, with credentials of that account`;
  // A role deleted behind CloudFormation's back is not made again by the same bootstrap (no template change, so no
  // update): a bootstrap with another --role-name replaces it, and one more with the daemon's own name brings it back.
  const deleted =
    reason === 'AssumeRoleFailed'
      ? `. If the role was deleted, bootstrapping again changes nothing (CloudFormation sees no change): run worker-stacks bootstrap --account ${account} --region ${region} --trust <ARN> --role-name worker-stacks-deployer-tmp, then the same without --role-name (or with the daemon's --role-name): each replaces the role`
      : '';
  const why = `${message.split('\n')[0]} (fix: ${fix}${deleted}; only this account's clusters wait, the next resync looks again)`;
  const liveDiffers = found.live === undefined || found.live !== found.config?.checksum;
  ctx.recorder.stage(
    { observedGeneration: ctx.generation },
    CONDITIONS.stalled(reason, why, { ready: liveDiffers && found.config ? false : undefined }),
  );
  found.log.error({ reason, account }, why);
  return { result: 'stalled', message: why };
}

/** Thrown by test hooks to simulate a crash: it escapes the error path like a killed process would. */
export class CrashSignal extends Error {}

/** The object's account (before validation: the clients are made first), when it is one. */
export function accountOf(raw: unknown): string | undefined {
  const account = (raw as { spec?: { account?: unknown } } | undefined)?.spec?.account;
  return typeof account === 'string' && /^\d{12}$/.test(account) ? account : undefined;
}

function regionOf(raw: unknown): string | undefined {
  const region = (raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' && /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/.test(region) ? region : undefined;
}
