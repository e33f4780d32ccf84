import { ClusterRecord } from '../../../model/ports/cluster-store';
import { ReconcilerDeps } from '../workflow/context';
import { Outcome, OUTCOMES } from '../workflow/outcomes';
import { accountOf } from '../compose/workflow';
import { ReconcilerMetrics } from './metrics';
import { WorkQueue } from './work-queue';
import { countResults, DaemonPass, Pass } from './pass';
import { regionOf, StackListings } from './stack-listings';

// The controller's passes, kept apart from its reconciles (as its slots are in fleet-slots.ts and its listings in
// stack-listings.ts): what a pass lists (the objects, each account's region once), what it counts (its outcomes,
// its duration) and what it records when it ends (the fleet's gauges, the `pass done` line). The controller
// reconciles the keys; this book says what a pass is made of and closes it, whoever drains it (a one-off pass,
// `reconcile --once`, the daemon's queue).

export interface PassBookOptions {
  readonly metrics?: ReconcilerMetrics;
  /** Clusters whose reconcile is under way: a pass does not queue them again. */
  readonly inFlight: ReadonlySet<string>;
  /** Reads the templates directory's version again (once per pass: a template edited under a running daemon). */
  readonly refreshTemplates: () => void;
  /** Reads the image channels the listed objects name (once per pass, before any of them is reconciled). @default none */
  readonly refreshChannels?: (records: readonly ClusterRecord[]) => Promise<void>;
}

/** Opens, follows and closes the controller's passes over the fleet. */
export class PassBook {
  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly listings: StackListings,
    private readonly opts: PassBookOptions,
  ) {}

  /** Lists the objects (or `names` of them), queues each, and lists each account's region once, fresh. */
  public async start(queue: WorkQueue, names?: ReadonlySet<string>): Promise<Pass> {
    // Read once per pass: a template edited under a running daemon is picked up by the next pass.
    this.opts.refreshTemplates();
    const started = process.hrtime.bigint();
    const all = await this.deps.store.list();
    await this.opts.refreshChannels?.(all);
    const records = names ? all.filter((r) => names.has(r.name)) : all;
    // One listing per account and region (each account's own credentials), fresh for a pass over the fleet; the
    // clusters due again (stacks in progress) are looked at through the cheaper listings of StackListings.lookup.
    const regions = new Map(
      records.flatMap((r) => {
        const region = regionOf(r);
        return region ? [[`${accountOf(r.raw) ?? ''}/${region}`, { region, account: accountOf(r.raw) }] as const] : [];
      }),
    );
    if (!names)
      await Promise.all([...regions.values()].map(({ region, account }) => this.listings.get(region, true, account)));
    const listed = new Map(records.filter((r) => !this.opts.inFlight.has(r.name)).map((r) => [r.name, r]));
    for (const name of listed.keys()) queue.add(name);
    return {
      started,
      all,
      clusters: records.length,
      listed,
      outcomes: new Map(),
      regionsListed: names ? 0 : regions.size,
    };
  }

  /** The pass after `p`: the keys due again, read from the store (the list is gone). */
  public next(p: Pass): Pass {
    return {
      started: process.hrtime.bigint(),
      all: p.all,
      clusters: p.clusters,
      listed: new Map(),
      outcomes: new Map(),
      regionsListed: 0,
    };
  }

  /** The end of a pass: the fleet's gauges, the pass's duration, and a `pass done` line (for every pass, not only the first). */
  public async end(p: Pass): Promise<void> {
    await this.observeFleet(p.outcomes, p.all);
    const seconds = Number(process.hrtime.bigint() - p.started) / 1e9;
    this.opts.metrics?.observePass(seconds);
    if (p.outcomes.size)
      this.deps.log.info(
        {
          clusters: p.clusters,
          reconciled: p.outcomes.size,
          results: countResults(p.outcomes),
          regionsListed: p.regionsListed,
          seconds: Math.round(seconds * 1000) / 1000,
        },
        'pass done',
      );
  }

  /**
   * A pass of the daemon's queue: its keys, from `list()`, handed to the queue; `reconciled` is called with each
   * reconcile's outcome and says when the last of them is done (then the pass's `pass done` line is written).
   */
  public async queue(queue: WorkQueue): Promise<DaemonPass> {
    this.opts.refreshTemplates();
    const started = process.hrtime.bigint();
    const all = await this.deps.store.list();
    await this.opts.refreshChannels?.(all);
    const pass: Pass = { started, all, clusters: all.length, listed: new Map(), outcomes: new Map(), regionsListed: 0 };
    const left = new Set(all.map((r) => r.name));
    for (const name of left) queue.add(name);
    return {
      size: left.size,
      reconciled: async (name, outcome) => {
        if (!left.delete(name)) return left.size === 0;
        if (outcome) pass.outcomes.set(name, outcome);
        if (left.size) return false;
        await this.end(pass);
        return true;
      },
    };
  }

  public async observeFleet(outcomes: ReadonlyMap<string, Outcome>, fallback: readonly ClusterRecord[]): Promise<void> {
    if (!this.opts.metrics) return;
    const records = await this.deps.store.list().catch(() => fallback);
    // A pass is good when no cluster errored in a way the reconciler keeps meeting (a failed update, an outdated
    // daemon). A cluster that stopped for a human (Stalled: an invalid object, spent attempts) is
    // WorkerStacksClusterStalled's to report, not this gauge's: one permanently invalid object would otherwise keep
    // WorkerStacksNoSuccessfulPass firing for good beside it. With no pass's outcomes at hand (the daemon's refresh),
    // a pass is good when no cluster is Degraded.
    const bad = (r: ClusterRecord) =>
      (r.status?.conditions ?? []).some((c) => c.type === 'Degraded' && c.status === 'True');
    const counts = (o: Outcome) => OUTCOMES[o.result].error && o.result !== 'stalled' && o.result !== 'invalid';
    const ok = outcomes.size ? ![...outcomes.values()].some(counts) : !records.some(bad);
    this.opts.metrics.observeFleet(records, this.deps.now(), ok);
  }
}
