import { StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { classifyError } from '../workflow/classify';
import { poolUnit, ReconcileContext, ReconcilerDeps, TASK } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { Hook, Progress, toHooks, WorkflowHooks } from '../workflow/task';
import { StatusRecorder } from '../workflow/status-recorder';
import { merged, poolNames, sharedReady, waitForShared } from '../workflow/units';
import { rawPoolNames } from '../../../model/cluster/pools/raw-pools';
import { removePoolStack } from '../tasks/finalize';
import { removalScope } from '../tasks/pool-removal';
import { accountOf, CrashSignal, onError, POOL_PREPARE, PREPARE, reconcileUnit, regionOf } from './workflow';

// A cluster's reconcile, apart from the workflows it runs (workflow.ts: their order, one run for one stack, the one
// error path): the run once per stack unit of the cluster (units.ts says which), the shared stack first, then each
// pool's, then the stacks of pools removed from the object (once the others are settled), and the one status write
// that ends it.

export interface ReconcileOptions {
  readonly hooks?: readonly Hook[] | WorkflowHooks;
  /** The stack from the pass's batched listing; null = listed and absent; undefined = not listed. */
  readonly listedStack?: StackSummary | null;
  /** listedStack was described alone after this cluster's last write (DescribeStacks by name), not taken from a shared listing. @default false */
  readonly listedDescribed?: boolean;
  /** templatesVersion() of the templates dir, read once per pass; enables reuse of derived results. @default none: no reuse */
  readonly templatesVersion?: string;
  /** A pool stack of the cluster as the pass's listings have it (as listedStack is the shared one's). @default none: each pool's stack is described */
  readonly lookupStack?: (stackName: string) => Promise<ListedStack>;
}

/** A stack from a listing: null = listed and absent; undefined = not listed (described by the workflow). */
export interface ListedStack {
  readonly stack: StackSummary | null | undefined;
  readonly described: boolean;
}

/** What ends a cluster's reconcile before its pools' stacks are looked at: the object as read cannot be acted on. */
const STOPS_POOLS: ReadonlySet<Outcome['result']> = new Set(['invalid', 'conflict', 'deleted', 'dry-run']);

/**
 * Reconciles one cluster object: the workflow once per stack of the cluster (stackUnits), the shared stack first,
 * each with its own status (the top level, or its entry in status.pools), checksum, inputs, failures and backoff: a
 * pool in progress requeues and the next pool goes on, a failing pool never holds another back. Never throws (but
 * for a test's CrashSignal): every error ends in the one error path (onError, in workflow.ts). The tasks stage what
 * they change in the status; it is written here, once, on every exit (success, requeue, stall, error): one status
 * write per reconcile, plus the one before each ExecuteChangeSet (see PendingStatus).
 */
export async function reconcileCluster(
  rec: ClusterRecord,
  deps: ReconcilerDeps,
  opts: ReconcileOptions = {},
): Promise<Outcome> {
  const region = regionOf(rec.raw);
  const clients = region ? deps.aws(region, accountOf(rec.raw)) : undefined;
  const recorder = new StatusRecorder(rec, deps);
  // Known before the shared stack's run, so that a write before its execution already speaks for the pools.
  recorder.expectPools(rawPoolNames(rec.raw));
  const hooks = toHooks(opts.hooks);
  const shared = new ReconcileContext(
    rec,
    recorder,
    deps,
    clients,
    opts.listedStack,
    opts.templatesVersion,
    opts.listedDescribed ?? false,
  );
  const first = await reconcileUnit(shared, PREPARE, shared.start(), hooks, recorder);
  let outcome = first.outcome;
  // The shared stack is another object's (tasks/claim.ts): none of this object's stacks is touched, pools included (a
  // pool's stack would import the other object's shared stack).
  const claimRefused = first.progress.task === TASK.claim && first.outcome.result === 'stalled';
  const pools = first.found.cluster ? poolNames(first.found.cluster) : rawPoolNames(rec.raw);
  recorder.expectPools(pools);
  if (pools.length && !STOPS_POOLS.has(outcome.result) && !first.finalized && !claimRefused) {
    const cluster = first.found.cluster;
    const results: { pool: string; outcome: Outcome }[] = [];
    for (const pool of pools) {
      const unit = poolUnit(rec.name, pool);
      const listed = opts.lookupStack ? await opts.lookupStack(unit.stackName) : undefined;
      const ctx = new ReconcileContext(
        rec,
        recorder.pool(pool, unit.stackName),
        deps,
        clients,
        listed?.stack,
        opts.templatesVersion,
        listed?.described ?? false,
        unit,
      );
      const sharedStack = first.found.stack ?? opts.listedStack ?? undefined;
      const r = sharedReady(sharedStack, recorder.clusterStatus)
        ? await reconcileUnit(ctx, POOL_PREPARE, ctx.start(), hooks, recorder, cluster)
        : { outcome: waitForShared(ctx, sharedStack) };
      results.push({ pool, outcome: r.outcome });
      if (r.outcome.result === 'conflict') break;
    }
    outcome = merged(outcome, results);
  }
  // Pools removed from the object: their own stacks go, each as a roll of its pool once the stacks above have settled
  // (tasks/pool-removal.ts); their entries stay until the stack is gone.
  const kept = new Set<string>();
  if (!STOPS_POOLS.has(outcome.result) && !first.finalized && !claimRefused) {
    const results: { pool: string; outcome: Outcome }[] = [];
    const scope = removalScope(first.found.cluster, rec.raw, pools);
    for (const p of (recorder.clusterStatus.pools ?? []).filter((x) => !pools.includes(x.name))) {
      const unit = poolUnit(rec.name, p.name);
      const view = recorder.pool(p.name, p.stackName);
      const ctx = new ReconcileContext(rec, view, deps, clients, undefined, undefined, false, unit);
      const start = ctx.start();
      try {
        const r = await removePoolStack(ctx, start, Boolean(first.found.cluster?.spec.paused), scope);
        if (r) {
          kept.add(p.name);
          results.push({ pool: p.name, outcome: r });
        }
      } catch (e) {
        kept.add(p.name);
        results.push({ pool: p.name, outcome: onError(ctx, recorder, { task: TASK.finalize, found: start }, e) });
      }
    }
    if (results.length) outcome = merged(outcome, results);
  }
  // Not on a stale read (nothing staged is kept), an object whose stacks are being deleted, nor one that does not
  // validate (its pools are unknown: their entries stay as they are).
  if (!STOPS_POOLS.has(outcome.result) && !STOPS_POOLS.has(first.outcome.result) && !first.finalized && !claimRefused)
    recorder.finish(pools, kept);
  return commit(deps, recorder, first.progress, outcome);
}

/** The reconcile's one status write: what its tasks (or the error path) staged. A write that fails says so in the outcome. */
async function commit(
  deps: ReconcilerDeps,
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
    return { ...outcome, result: 'failed', message, requeueAfterMs: deps.backoff.baseMs };
  }
}
