import { StackSummary } from '../aws/cloudformation-port';
import { ClusterRecord } from '../stores/cluster-store';
import { templatesVersion as readTemplatesVersion } from '../cloudconfig/templates';
import { workerStackName } from '../stacks/naming';
import { Outcome, ReconcilerDeps } from './context';
import { ReconcilerMetrics } from './metrics';
import { reconcileCluster, WorkflowHooks } from './workflow';

export interface ControllerOptions {
  /** Clusters reconciled at the same time. @default 4 */
  readonly concurrency?: number;
  readonly hooks?: WorkflowHooks;
  readonly metrics?: ReconcilerMetrics;
}

export interface PassResult {
  readonly outcomes: ReadonlyMap<string, Outcome>;
  /** Stack listing calls made for the pass (one paginated listing per region). */
  readonly regionsListed: number;
}

const ERRORS = new Set(['failed', 'invalid']);

/**
 * Runs the workflow over the fleet: one batched stack listing per region per
 * pass, bounded concurrency, one cluster at a time per cluster, and one
 * cluster's failure never stops the others.
 */
export class Controller {
  private readonly inFlight = new Set<string>();
  /** Clusters whose reconcile is waiting on a stack operation right now (for the in-progress gauge). */
  private readonly waiting = new Set<string>();
  private readonly hooks: WorkflowHooks;

  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly opts: ControllerOptions = {},
  ) {
    const user = opts.hooks;
    this.hooks = {
      before: async (task, ctx) => {
        if (task === 'wait') this.waiting.add(ctx.record.name);
        await user?.before?.(task, ctx);
      },
      after: user?.after ? (task, ctx) => user.after!(task, ctx) : undefined,
    };
    opts.metrics?.trackWaiting(() => this.waiting);
  }

  /** One pass over every object (or only `names`). */
  public async runPass(names?: ReadonlySet<string>, shouldStop: () => boolean = () => false): Promise<PassResult> {
    // Read once per pass: a template edited under a running daemon is picked up by the next pass.
    const templatesVersion = this.deps.derived ? readTemplatesVersion(this.deps.templatesDir) : undefined;
    const all = await this.deps.store.list();
    const records = names ? all.filter((r) => names.has(r.name)) : all;
    const listings = new Map<string, Map<string, StackSummary> | undefined>();
    for (const region of new Set(records.map(regionOf).filter((r): r is string => Boolean(r)))) {
      try {
        listings.set(region, await this.deps.aws(region).cfn.listStacks());
      } catch (e) {
        // Without the listing each cluster asks for its own stack; the pass goes on.
        this.deps.log.warn({ region, err: String(e) }, 'could not list stacks; falling back to one describe per cluster');
        listings.set(region, undefined);
      }
    }
    const outcomes = new Map<string, Outcome>();
    const queue = records.filter((r) => !this.inFlight.has(r.name));
    const worker = async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        if (shouldStop()) return;
        const listing = listings.get(regionOf(r) ?? '');
        outcomes.set(r.name, await this.reconcileOne(r, listing ? (listing.get(workerStackName(r.name)) ?? null) : undefined, templatesVersion));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency ?? 4) }, worker));
    if (this.opts.metrics) {
      const ok = [...outcomes.values()].every((o) => !ERRORS.has(o.result));
      this.opts.metrics.observeFleet(await this.deps.store.list().catch(() => all), this.deps.now(), ok);
    }
    return { outcomes, regionsListed: listings.size };
  }

  private async reconcileOne(record: ClusterRecord, listed: StackSummary | null | undefined, templatesVersion: string | undefined): Promise<Outcome> {
    this.inFlight.add(record.name);
    const started = process.hrtime.bigint();
    try {
      const outcome = await reconcileCluster(record, this.deps, { hooks: this.hooks, listedStack: listed, templatesVersion });
      this.opts.metrics?.observeReconcile(outcome, Number(process.hrtime.bigint() - started) / 1e9);
      const log = { cluster: record.name, generation: record.generation, checksum: outcome.checksum ?? null, liveChecksum: record.status?.cloudConfigChecksum ?? null };
      this.deps.log.info({ ...log, result: outcome.result, requeueAfterMs: outcome.requeueAfterMs }, outcome.message ?? outcome.result);
      return outcome;
    } finally {
      this.waiting.delete(record.name);
      this.inFlight.delete(record.name);
    }
  }
}

function regionOf(r: ClusterRecord): string | undefined {
  const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' ? region : undefined;
}
