import { classifyError } from '../workflow/classify';
import { CONDITIONS, Reason } from '../workflow/conditions';
import { ReconcileContext, TASK, TaskName } from '../workflow/context';
import { Outcome, OUTCOMES } from '../workflow/outcomes';
import { Found, Observed, Start } from '../workflow/state';
import { AnyTask, Hook, Progress, runWorkflow, Workflow } from '../workflow/task';
import { StatusRecorder } from '../workflow/status-recorder';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { bootstrapCommand } from '../../../core/errors';

import { assemblyKey, removeAssembly } from '../../synthesis/assembly-dir';
import { checkVersion } from '../tasks/check-version';
import { finalize } from '../tasks/finalize';
import { acquireSlot, changeSet, execute, publish, recover, synthesize } from '../tasks/apply';
import { recordExecution, wait } from '../tasks/resume';
import { recordFailure } from '../tasks/record-outcome';
import { cleanConfigObjects } from '../tasks/clean-config-objects';
import { waitForWave } from '../tasks/wait-for-wave';
import { render } from '../tasks/render';
import { busy, observe, skipIfSameInputs, validate } from '../tasks/prepare';
import { claim } from '../tasks/claim';
import { rollKey } from '../tasks/roll-key';
import { checkAccount, dryRunReport, paused, reportDrift, skipIfUnchanged } from '../tasks/apply-gates';

/**
 * The reconcile workflows, in one place. Level-based: every step reads the state as it is now (the object and the
 * live stack); a repeated or resumed run converges on the same result. After `observe`, exactly one of three
 * workflows runs, chosen once from what was observed:
 *
 *   prepare:  finalize → skip-if-same-inputs → validate → render → observe → claim   (finalize: the finalizer, and a deleted
 *             object's stack; claim: the stack observed is this object's, tasks/claim.ts)
 *   resume:   wait                         (the stack is in progress: requeue and look again; never touched)
 *   record:   record-execution             (our change set ended: record what the stack reports, then apply if needed)
 *   apply:    skip-if-unchanged → check-version → paused → report-drift → check-account → roll-key → dry-run → recover
 *             → wait-for-wave → acquire-slot → synthesize → publish → change-set → execute   (then requeue: the stack is watched, not waited on)
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
  .then(observe)
  .then(claim);
export const RESUME = Workflow.from<Observed>().then(wait);
export const APPLY = Workflow.from<Observed>()
  .then(skipIfUnchanged)
  .then(checkVersion)
  .then(paused)
  .then(reportDrift)
  .then(checkAccount)
  .then(rollKey)
  .then(dryRunReport)
  .then(recover)
  .then(waitForWave)
  .then(acquireSlot)
  .then(synthesize)
  .then(publish)
  .then(changeSet)
  .then(execute);
/** A pool's stack: the object was validated (or fast-pathed) for the shared stack; its finalizer is the shared run's. */
export const POOL_PREPARE = Workflow.from<Start>()
  .then(skipIfSameInputs)
  .then(validate)
  .then(render)
  .then(observe)
  .then(claim);
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

/** One run of the workflow for one stack of the cluster: what it came to (with the fields every outcome carries). */
export async function reconcileUnit(
  ctx: ReconcileContext,
  prepare: Workflow<Start, Observed>,
  start: Start,
  hooks: readonly Hook[],
  recorder: StatusRecorder,
  cluster?: WorkerCluster,
): Promise<{ outcome: Outcome; found: Found; progress: Progress; finalized: boolean }> {
  const deps = ctx.deps;
  const progress: Progress = { task: 'start', found: cluster ? { ...start, cluster } : start };
  // The fields every outcome carries: the desired checksum (when it rendered) and what the rollout gate decided.
  const tail = (o: Outcome): Outcome => ({
    ...o,
    checksum: progress.found.config?.checksum,
    ...(o.rollout || progress.found.rollout ? { rollout: o.rollout ?? progress.found.rollout } : {}),
  });
  let finalized = false;
  try {
    let outcome: Outcome;
    try {
      const prepared = await runWorkflow(prepare, ctx, progress.found, hooks, progress);
      if ('outcome' in prepared) {
        finalized = progress.task === TASK.finalize;
        outcome = await settle(prepared.outcome);
      } else {
        const applied = await runWorkflow(chooseWorkflow(ctx, prepared.found), ctx, prepared.found, hooks, progress);
        outcome = await settle('outcome' in applied ? applied.outcome : { result: 'applied' });
      }
    } catch (e) {
      outcome = onError(ctx, recorder, progress, e);
    }
    return { outcome: tail(outcome), found: progress.found, progress, finalized };
  } finally {
    // Publish drops the assembly; this catches a reconcile that ended between synthesis and publish (the roll key's
    // synthesis included: a held cluster ends there). A synthesis not yet published is kept (compressed, in memory)
    // for the change set that follows when the cluster is let go: a held cluster is synthesized once.
    const { synth, cluster: c, log, fingerprint } = progress.found;
    if (synth && fingerprint && !published(progress)) deps.kept?.keep(synth, fingerprint);
    if (c && (synth || progress.task === TASK.synthesize || progress.task === TASK.rollKey))
      removeAssembly(deps.workDir, assemblyKey(c.metadata.name, ctx.unit.stackName), (msg) => log.warn({}, msg));
  }

  async function settle(outcome: Outcome): Promise<Outcome> {
    // The settled workflow's tasks' `when` check the stack itself.
    if (OUTCOMES[outcome.result].settled) await runWorkflow(SETTLED, ctx, progress.found, hooks, progress);
    return outcome;
  }
}

/** Whether the reconcile reached publish: its synthesis was used (or half used), and its assembly is gone. */
function published(progress: Progress): boolean {
  return APPLY_ORDER.indexOf(progress.task as TaskName) >= APPLY_ORDER.indexOf(TASK.publish);
}
const APPLY_ORDER: readonly TaskName[] = APPLY.tasks.map((t) => t.name);

/** The one error path: classify, stage what to record (the workflow writes it), and say when to try again. */
export function onError(
  ctx: ReconcileContext,
  recorder: StatusRecorder,
  { task, found }: Progress,
  e: unknown,
): Outcome {
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
    ctx.deps.slots?.observed(ctx.unit.slot, true);
    ctx.recorder.stage(
      {},
      CONDITIONS.progressing('WaitingForStack', `${message.split('\n')[0]}; looking again after a poll`),
    );
    return { result: 'waiting', message, requeueAfterMs: ctx.pollMs };
  }
  if (kind.kind === 'transient') {
    // Not a failure: nothing is counted, Ready is left alone, and the queue retries with its own backoff. An execution
    // of ours still on record may be running whatever a (possibly stale) look showed: its slot stays held until a
    // look after it sees the stack settled.
    if (ctx.recorder.controller.executing) ctx.deps.slots?.observed(ctx.unit.slot, true);
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
    `with credentials of account ${account}, run ${bootstrapCommand(account, region)} (it makes the deployer and execution roles, and restores either if it was deleted)`;
  const why = `${message.split('\n')[0]} (fix: ${fix}; only this account's clusters wait, the next resync looks again)`;
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

/** The object's region (before validation: the clients are made first), when it is one. */
export function regionOf(raw: unknown): string | undefined {
  const region = (raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' && /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/.test(region) ? region : undefined;
}
