import { StackSummary } from '../aws/cloudformation-port';
import { ClusterRecord } from '../stores/cluster-store';
import { classifyError } from './classify';
import { CONDITIONS, Reason } from './conditions';
import { Outcome, ReconcileContext, ReconcilerDeps, Task, TaskName } from './context';
import { removeAssembly } from './synthesize';
import { checkVersion } from './task-check-version';
import { finalize } from './tasks-delete';
import { acquireSlot, changeSet, execute, publish, recordExecution, recordFailure, recover, synthesize, wait } from './tasks-apply';
import { cleanConfigObjects } from './tasks-cleanup';
import { waitForWave } from './tasks-rollout';
import { busy, checkAccount, dryRunReport, observe, paused, render, reportDrift, skipIfSameInputs, skipIfUnchanged, validate } from './tasks-prepare';

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
export const PREPARE: readonly Task[] = [finalize, skipIfSameInputs, validate, render, observe];
export const RESUME: readonly Task[] = [wait];
export const APPLY: readonly Task[] = [skipIfUnchanged, checkVersion, paused, reportDrift, checkAccount, dryRunReport, recover, waitForWave, acquireSlot, synthesize, publish, changeSet, execute];
export const RECORD: readonly Task[] = [recordExecution, ...APPLY];
export const SETTLED: readonly Task[] = [cleanConfigObjects];
/** Outcomes after which the settled workflow runs (its tasks' `when` check the stack itself). */
const SETTLED_RESULTS = new Set(['applied', 'no-changes', 'unchanged']);

/** The workflow that follows `observe`. */
export function chooseWorkflow(ctx: ReconcileContext): readonly Task[] {
  if (ctx.stack && busy(ctx.stack)) return RESUME;
  if (ctx.recorder.controller.executing && !ctx.deps.dryRun) return RECORD;
  return APPLY;
}

/** Every task, once, in order (for documentation, tests and the bench's timing). */
export function allTasks(): Task[] {
  return [...new Set([...PREPARE, ...RESUME, ...RECORD, ...SETTLED])];
}

/** Every task name, in order. */
export function taskNames(): TaskName[] {
  return allTasks().map((t) => t.name);
}

type HookFn = (ctx: ReconcileContext, task: TaskName) => void | Promise<void>;

/** Hooks bound to a named task: `before(TASK.publish, fn)`. `'*'` binds to every task (logging, tests that crash on purpose). */
export interface Hook {
  readonly task: TaskName | '*';
  readonly phase: 'before' | 'after';
  readonly fn: (ctx: ReconcileContext, task: TaskName) => void | Promise<void>;
}

export const before = (task: TaskName | '*', fn: HookFn): Hook => ({ task, phase: 'before', fn });
export const after = (task: TaskName | '*', fn: HookFn): Hook => ({ task, phase: 'after', fn });

/** Hooks on every task at once, as one object (logging, tests): the same as `before('*', …)` and `after('*', …)`. */
export interface WorkflowHooks {
  before?(task: TaskName, ctx: ReconcileContext): void | Promise<void>;
  after?(task: TaskName, ctx: ReconcileContext): void | Promise<void>;
}

export function toHooks(h: readonly Hook[] | WorkflowHooks | undefined): readonly Hook[] {
  if (!h) return [];
  if (Array.isArray(h)) return h;
  const o = h as WorkflowHooks;
  return [...(o.before ? [before('*', (ctx, t) => o.before!(t, ctx))] : []), ...(o.after ? [after('*', (ctx, t) => o.after!(t, ctx))] : [])];
}

export interface ReconcileOptions {
  readonly hooks?: readonly Hook[] | WorkflowHooks;
  /** The stack from the pass's batched listing; null = listed and absent; undefined = not listed. */
  readonly listedStack?: StackSummary | null;
  /** templatesVersion() of the templates dir, read once per pass; enables reuse of derived results. @default none: no reuse */
  readonly templatesVersion?: string;
}

/** Reconciles one cluster object. Never throws (but for a test's CrashSignal): every error ends in the one error path below. */
export async function reconcileCluster(rec: ClusterRecord, deps: ReconcilerDeps, opts: ReconcileOptions = {}): Promise<Outcome> {
  const region = regionOf(rec.raw);
  const ctx = new ReconcileContext(rec, deps, region ? deps.aws(region, accountOf(rec.raw)) : undefined, opts.listedStack, opts.templatesVersion);
  const hooks = toHooks(opts.hooks);
  let current: TaskName | 'start' = 'start';
  let synthesized = false;
  const run = async (tasks: readonly Task[]): Promise<Outcome | undefined> => {
    for (const task of tasks) {
      if (task.when && !task.when(ctx)) continue;
      current = task.name;
      synthesized ||= task === synthesize;
      for (const h of hooks) if (h.phase === 'before' && (h.task === '*' || h.task === task.name)) await h.fn(ctx, task.name);
      const outcome = await task.run(ctx);
      for (const h of hooks) if (h.phase === 'after' && (h.task === '*' || h.task === task.name)) await h.fn(ctx, task.name);
      if (outcome) return outcome;
    }
    return undefined;
  };
  try {
    const outcome = (await run(PREPARE)) ?? (await run(chooseWorkflow(ctx))) ?? { result: 'applied' as const };
    if (SETTLED_RESULTS.has(outcome.result)) await run(SETTLED);
    return { ...outcome, checksum: ctx.config?.checksum, ...(ctx.rollout ? { rollout: ctx.rollout } : {}) };
  } catch (e) {
    return { ...(await onError(ctx, current, e)), checksum: ctx.config?.checksum, ...(ctx.rollout ? { rollout: ctx.rollout } : {}) };
  } finally {
    // Publish drops the assembly; this catches a reconcile that ended between synthesis and publish.
    if (synthesized) removeAssembly(deps.workDir, ctx.cluster!.metadata.name, (msg) => ctx.log.warn({}, msg));
  }
}

/** The one error path: classify, record (when that is still possible), and say when to try again. */
async function onError(ctx: ReconcileContext, task: string, e: unknown): Promise<Outcome> {
  if (e instanceof CrashSignal) throw e;
  const kind = classifyError(e);
  const message = `${task}: ${(e as Error)?.message ?? String(e)}`;
  if (kind.kind === 'conflict') {
    ctx.log.warn({ task }, message);
    return { result: 'conflict', requeueAfterMs: 0, message };
  }
  try {
    if (kind.kind === 'transient') {
      // Not a failure: nothing is counted, Ready is left alone, and the queue retries with its own backoff.
      ctx.log.warn({ task, reason: kind.reason, err: message }, 'transient AWS error; requeued');
      await ctx.recorder.write({}, CONDITIONS.degraded(kind.reason, `${message} (transient; retrying)`));
      return { result: 'transient', message, requeueAfterMs: ctx.deps.backoff.baseMs };
    }
    if (kind.kind === 'account') return await accountUnusable(ctx, kind.reason, message, e);
    if (kind.reason === 'ReconcileFailed') ctx.log.error({ task, err: (e as Error)?.stack ?? String(e) }, 'unexpected error');
    return await recordFailure(ctx, kind.reason, message, { stall: kind.kind === 'stalled' });
  } catch (writeError) {
    ctx.log.error({ task, err: String(writeError) }, 'could not record the failure');
    return { result: 'failed', message, requeueAfterMs: ctx.deps.backoff.baseMs };
  }
}

/**
 * The cluster's account cannot be used: Stalled with the fix, nothing counted (no failed fingerprint), no requeue —
 * the daemon's next resync looks again, so bootstrapping the account heals each of its clusters by itself.
 */
async function accountUnusable(ctx: ReconcileContext, reason: Reason, message: string, e: unknown): Promise<Outcome> {
  const hint = (e as { hint?: string }).hint;
  const account = accountOf(ctx.record.raw) ?? 'the cluster\'s account';
  const fix = hint ?? `bootstrap account ${account} for this daemon: worker-stacks bootstrap --account ${account} --region ${regionOf(ctx.record.raw) ?? '<region>'} --trust <this daemon's role ARN>, with credentials of that account`;
  const why = `${message.split('\n')[0]} (fix: ${fix}; only this account's clusters wait, the next resync looks again)`;
  const liveDiffers = ctx.live === undefined || ctx.live !== ctx.config?.checksum;
  await ctx.recorder.write({ observedGeneration: ctx.generation }, CONDITIONS.stalled(reason, why, { ready: liveDiffers && ctx.config ? false : undefined }));
  ctx.log.error({ reason, account }, why);
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
