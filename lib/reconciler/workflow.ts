import { ConflictError } from '../stores/cluster-store';
import { SynthesisError, TemplateError, WorkerStacksError } from '../errors';
import { StackSummary } from '../aws/cloudformation-port';
import { ClusterRecord } from '../stores/cluster-store';
import { Outcome, ReconcileContext, ReconcilerDeps, Task } from './context';
import { recordFailure, changeSet, execute, publish, record, recover, synthesize, wait } from './tasks-apply';
import { removeAssembly } from './synthesize';
import { checkAccount, dryRunReport, observe, render, skipIfSameInputs, skipIfUnchanged, validate } from './tasks-prepare';

/**
 * The reconcile workflow, in one place. Level-based: every step reads the
 * state as it is now; a repeated or resumed run converges on the same result.
 *
 *   skip-if-same-inputs → validate → render → observe → skip-if-unchanged → check-account
 *   → dry-run → recover → synthesize → publish → change-set → execute → wait → record
 */
export function workflow(): readonly Task[] {
  return [skipIfSameInputs, validate, render, observe, skipIfUnchanged, checkAccount, dryRunReport, recover, synthesize, publish, changeSet, execute, wait, record];
}

/** Hooks around every task (logging, metrics, tests that inject a crash). */
export interface WorkflowHooks {
  before?(task: string, ctx: ReconcileContext): void | Promise<void>;
  after?(task: string, ctx: ReconcileContext): void | Promise<void>;
}

export interface ReconcileOptions {
  readonly hooks?: WorkflowHooks;
  /** The stack from the pass's batched listing; null = listed and absent; undefined = not listed. */
  readonly listedStack?: StackSummary | null;
  /** templatesVersion() of the templates dir, read once per pass; enables reuse of derived results. @default none: no reuse */
  readonly templatesVersion?: string;
}

/** Reconciles one cluster object. Never throws: every error ends in the one error path below. */
export async function reconcileCluster(rec: ClusterRecord, deps: ReconcilerDeps, opts: ReconcileOptions = {}): Promise<Outcome> {
  const region = regionOf(rec.raw);
  const ctx = new ReconcileContext(rec, deps, region ? deps.aws(region) : undefined, opts.listedStack, opts.templatesVersion);
  let current = 'start';
  let synthesized = false;
  try {
    for (const task of workflow()) {
      if (task.when && !task.when(ctx)) continue;
      current = task.name;
      synthesized ||= task === synthesize;
      await opts.hooks?.before?.(task.name, ctx);
      const outcome = await task.run(ctx);
      await opts.hooks?.after?.(task.name, ctx);
      if (outcome) return { ...outcome, checksum: ctx.config?.checksum };
    }
    return { result: 'applied', checksum: ctx.config?.checksum };
  } catch (e) {
    return { ...(await onError(ctx, current, e)), checksum: ctx.config?.checksum };
  } finally {
    // Publish drops the assembly; this catches a reconcile that ended between synthesis and publish.
    if (synthesized) removeAssembly(deps.workDir, ctx.cluster!.metadata.name, (msg) => ctx.log.warn({}, msg));
  }
}

/** The one error path: classify, record (when that is still possible), and say when to try again. */
async function onError(ctx: ReconcileContext, task: string, e: unknown): Promise<Outcome> {
  if (e instanceof ConflictError) {
    ctx.log.warn({ task }, e.message);
    return { result: 'conflict', requeueAfterMs: 0, message: e.message };
  }
  if (e instanceof CrashSignal) throw e;
  const err = e as Error & { name?: string; $retryable?: unknown };
  const reason = e instanceof TemplateError ? 'RenderFailed' : e instanceof SynthesisError ? 'SynthesisFailed' : e instanceof WorkerStacksError ? 'ReconcileFailed' : /Throttl|TooManyRequests|RequestLimitExceeded/.test(String(err.name)) ? 'Throttled' : 'AwsError';
  const message = `${task}: ${err.message ?? String(e)}`;
  try {
    return await recordFailure(ctx, reason, message);
  } catch (writeError) {
    ctx.log.error({ task, err: String(writeError) }, 'could not record the failure');
    return { result: 'failed', message, requeueAfterMs: ctx.deps.backoff.baseMs };
  }
}

/** Thrown by test hooks to simulate a crash: it escapes the error path like a killed process would. */
export class CrashSignal extends Error {}

function regionOf(raw: unknown): string | undefined {
  const region = (raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' && /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/.test(region) ? region : undefined;
}
