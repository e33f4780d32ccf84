import { isInProgress, StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { templatesVersion as readTemplatesVersion } from '../../../model/cloudconfig/templates';
import { poolStackName, workerStackName } from '../../../core/naming';
import { poolSlot } from '../workflow/context';
import { DEFAULT_POLL_MS, Outcome, ReconcilerDeps } from '../workflow/context';
import { accountLabel, ReconcilerMetrics } from './metrics';
import { OUTCOMES } from '../workflow/outcomes';
import { WorkQueue } from './work-queue';
import { countResults, DaemonPass, Pass, requeue } from './pass';
import { FleetSlots } from './fleet-slots';
import { StackListings, wasInProgress } from './stack-listings';
import { accountOf, Hook, reconcileCluster, WorkflowHooks } from '../workflow/workflow';
import { RolloutCoordinator } from '../../rollout/coordinator';
import { recordedStack } from '../../rollout/report';
import { RolloutPolicySource } from '../../rollout/policy-source';
import { RolloutSignals } from '../../rollout/rollout-signals';

export interface ControllerOptions {
  /** Worker stacks in progress at the same time, fleet-wide (a stack waited on holds no worker). @default 4 */
  readonly concurrency?: number;
  /** Reconciles running at the same time (each is short: it never waits on a stack). @default 4 */
  readonly workers?: number;
  readonly hooks?: readonly Hook[] | WorkflowHooks;
  readonly metrics?: ReconcilerMetrics;
  /** Where the WorkerRolloutPolicy objects are: rolls then go in waves (lib/engines/rollout). @default none: no fleet gating */
  readonly policies?: RolloutPolicySource;
}

export interface PassResult {
  readonly outcomes: ReadonlyMap<string, Outcome>;
  /** Stack listings made for the pass (one paginated listing per account and region). */
  readonly regionsListed: number;
}

/**
 * Runs the workflow per cluster: one at a time per cluster, one cluster's failure never stops the others, and
 * stacks are observed through the shared per-region listing.
 */
export class Controller {
  public readonly slots: FleetSlots;
  public readonly listings: StackListings;
  /** The fleet rollout, when policies are given. */
  public readonly rollout?: RolloutCoordinator;
  /** Its events and wake-ups, from each look at the fleet. */
  private readonly signals?: RolloutSignals;
  private readonly inFlight = new Set<string>();
  /** The deps every reconcile gets: the caller's, with this controller's slots unless the caller brought its own. */
  private readonly reconcileDeps: ReconcilerDeps;
  private templatesVersion?: string;

  constructor(
    public readonly deps: ReconcilerDeps,
    private readonly opts: ControllerOptions = {},
  ) {
    this.slots = new FleetSlots(Math.max(1, opts.concurrency ?? 4));
    this.listings = new StackListings(deps, deps.pollMs ?? DEFAULT_POLL_MS);
    if (opts.policies) {
      // Each calls the other back, never while being built: the closures read consts set before any pass.
      const rollout = new RolloutCoordinator({
        store: deps.store,
        policies: opts.policies,
        // Other clusters' stacks as their own reconciles recorded them, and those in progress from the cheap
        // in-progress listing: a look at the fleet never costs the region's whole listing (the cluster deciding
        // brings its own live stack).
        stackOf: (r) => this.stackForRollout(r),
        templatesDir: deps.templatesDir,
        code: deps.code,
        now: deps.now,
        derived: deps.derived,
        maxAgeMs: deps.pollMs ?? DEFAULT_POLL_MS,
        onSnapshot: (fleet) => signals.observe(fleet),
      });
      const signals = new RolloutSignals({
        log: deps.log,
        source: opts.policies,
        now: deps.now,
        look: () => rollout.snapshot(true),
      });
      this.rollout = rollout;
      this.signals = signals;
    }
    this.reconcileDeps = { ...deps, slots: deps.slots ?? this.slots, rollout: deps.rollout ?? this.rollout };
    opts.metrics?.trackWaiting(() => this.slots.inProgress());
    opts.metrics?.trackSlots(() => this.slots.size);
  }

  private async stackForRollout(r: ClusterRecord): Promise<StackSummary | undefined> {
    const region = regionOf(r);
    const listed = region ? await this.listings.inProgress(region, accountOf(r.raw)) : undefined;
    const busy = listed?.get(workerStackName(r.name));
    const recorded = recordedStack(r);
    // The in-progress listing carries no outputs: the live checksum is the recorded one until the stack settles.
    return busy ? { ...busy, outputs: recorded?.outputs ?? {} } : recorded;
  }

  /**
   * `listener` gets held clusters the fleet rollout can release now (a wave rolled, settled, or its halt lifted; a
   * slot freed; a resume): the daemon queues them at once instead of at their recheck. Returns the unsubscribe.
   */
  public onWake(listener: (names: readonly string[]) => void): () => void {
    return this.signals?.onWake(listener) ?? (() => undefined);
  }

  /** Calls `onChange` when a rollout policy may have changed (the daemon then looks at every cluster). */
  public watchPolicies(onChange: () => void): () => void {
    return this.opts.policies?.watch?.(onChange) ?? (() => undefined);
  }

  /** The templates directory's version, read again on demand (a template edit). */
  public refreshTemplates(): void {
    this.templatesVersion = this.deps.derived ? readTemplatesVersion(this.deps.templatesDir) : undefined;
  }

  /** One reconcile of one cluster by name (the work queue's unit). */
  public async reconcileKey(name: string): Promise<Outcome | undefined> {
    const record = await this.deps.store.get(name);
    if (!record || (record.raw === undefined && record.parseProblems.length === 0)) {
      // Removed (deleted, or outside this daemon's selector): nothing to do, and nothing of it is kept.
      this.slots.release(name);
      this.listings.forget(name);
      return undefined;
    }
    if (this.templatesVersion === undefined) this.refreshTemplates();
    return this.reconcileOne(record, await this.listings.lookup(record));
  }

  /**
   * One pass over every object (or only `names`), with fresh listings: the objects listed go through a work queue
   * (the same path as the daemon's and `--once`'s), each reconciled once; requeues are the caller's.
   */
  public async runPass(names?: ReadonlySet<string>, shouldStop: () => boolean = () => false): Promise<PassResult> {
    const queue = new WorkQueue({ timers: false, now: () => this.deps.now().getTime() });
    const pass = await this.startPass(queue, names);
    await this.drain(queue, pass, shouldStop);
    await this.endPass(pass);
    return { outcomes: pass.outcomes, regionsListed: pass.regionsListed };
  }

  /**
   * `reconcile --once`: the objects listed go through a work queue, requeued as their outcomes ask (the outcome
   * table's `requeue`; a transient error with the queue's per-key backoff), until every cluster settles or
   * `deadlineMs` passes. Between due keys it sleeps, so a stack in progress costs a look per poll, not a waiter.
   */
  public async runUntilSettled(opts: {
    readonly names?: ReadonlySet<string>;
    readonly deadlineMs: number;
    readonly sleep: (ms: number) => Promise<void>;
    readonly now: () => number;
    readonly shouldStop?: () => boolean;
  }): Promise<Map<string, Outcome>> {
    const start = opts.now();
    const stop = opts.shouldStop ?? (() => false);
    const queue = new WorkQueue({
      timers: false,
      now: opts.now,
      baseDelayMs: this.deps.backoff.baseMs,
      maxDelayMs: this.deps.backoff.maxMs,
    });
    const outcomes = new Map<string, Outcome>();
    let pass = await this.startPass(queue, opts.names);
    for (;;) {
      await this.drain(queue, pass, stop, (name, o) => requeue(queue, name, o));
      await this.endPass(pass);
      for (const [n, o] of pass.outcomes) outcomes.set(n, o);
      const next = queue.nextAt();
      if (next === undefined || stop()) return outcomes;
      const wait = Math.max(0, next - opts.now());
      if (opts.now() - start + wait > opts.deadlineMs) return outcomes;
      if (wait > 0) await opts.sleep(wait);
      pass = this.nextPass(pass);
    }
  }

  /** Lists the objects (or `names` of them), queues each, and lists each account's region once, fresh. */
  private async startPass(queue: WorkQueue, names?: ReadonlySet<string>): Promise<Pass> {
    // Read once per pass: a template edited under a running daemon is picked up by the next pass.
    this.refreshTemplates();
    const started = process.hrtime.bigint();
    const all = await this.deps.store.list();
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
    const listed = new Map(records.filter((r) => !this.inFlight.has(r.name)).map((r) => [r.name, r]));
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
  private nextPass(p: Pass): Pass {
    return {
      started: process.hrtime.bigint(),
      all: p.all,
      clusters: p.clusters,
      listed: new Map(),
      outcomes: new Map(),
      regionsListed: 0,
    };
  }

  /**
   * Workers take the keys ready now, one reconcile each (an object just listed is not read again), until none is
   * ready. `after` sees each outcome (requeues); the queue's `done` follows every reconcile, however it ends.
   */
  private async drain(
    queue: WorkQueue,
    pass: Pass,
    shouldStop: () => boolean,
    after?: (name: string, o: Outcome) => void,
  ): Promise<void> {
    const worker = async () => {
      for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) {
        try {
          if (shouldStop()) return;
          const listed = pass.listed.get(key);
          pass.listed.delete(key);
          const outcome = listed
            ? await this.reconcileOne(listed, await this.listings.lookup(listed))
            : await this.reconcileKey(key);
          if (!outcome) continue;
          pass.outcomes.set(key, outcome);
          after?.(key, outcome);
        } finally {
          queue.done(key);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.workers ?? this.opts.concurrency ?? 4) }, worker));
  }

  /** The end of a pass: the fleet's gauges, the pass's duration, and a `pass done` line (for every pass, not only the first). */
  private async endPass(p: Pass): Promise<void> {
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
   * A pass of the daemon's queue: its keys, from `list()`, handed to the queue; `passDone` is called with each
   * reconcile's outcome and says when the last of them is done (then the pass's `pass done` line is written).
   */
  public async queuePass(queue: WorkQueue): Promise<DaemonPass> {
    this.refreshTemplates();
    const started = process.hrtime.bigint();
    const all = await this.deps.store.list();
    const pass: Pass = { started, all, clusters: all.length, listed: new Map(), outcomes: new Map(), regionsListed: 0 };
    const left = new Set(all.map((r) => r.name));
    for (const name of left) queue.add(name);
    return {
      size: left.size,
      reconciled: async (name, outcome) => {
        if (!left.delete(name)) return left.size === 0;
        if (outcome) pass.outcomes.set(name, outcome);
        if (left.size) return false;
        await this.endPass(pass);
        return true;
      },
    };
  }

  public async observeFleet(outcomes: ReadonlyMap<string, Outcome>, fallback: readonly ClusterRecord[]): Promise<void> {
    if (!this.opts.metrics) return;
    const records = await this.deps.store.list().catch(() => fallback);
    // With no pass's outcomes at hand (the daemon's refresh), a pass is good when no cluster is Stalled or Degraded.
    const bad = (r: ClusterRecord) =>
      (r.status?.conditions ?? []).some((c) => (c.type === 'Stalled' || c.type === 'Degraded') && c.status === 'True');
    const ok = outcomes.size ? [...outcomes.values()].every((o) => !OUTCOMES[o.result].error) : !records.some(bad);
    this.opts.metrics.observeFleet(records, this.deps.now(), ok);
  }

  /**
   * A reconcile that stopped before it looked at the stack (an invalid object, a template that does not render) still
   * leaves the slot as the stack is: a roll under way keeps its slot, and a restarted daemon learns it here, so
   * --concurrency still bounds it; the cluster is looked at again after a poll until the roll ends and the slot goes
   * back. (Without this, an object edited to invalid mid-roll held its slot for good, and one invalid after a restart
   * held none.)
   */
  private async followUnlooked(
    record: ClusterRecord,
    listed: { readonly stack: StackSummary | null | undefined; readonly described: boolean },
    outcome: Outcome,
  ): Promise<Outcome> {
    const name = record.name;
    if (this.reconcileDeps.slots !== this.slots) return outcome;
    const pools = await this.followUnlookedPools(record, outcome);
    if (this.slots.lookedAt(name)) return pools;
    outcome = pools;
    const busy = (s: StackSummary | null | undefined) =>
      Boolean(s && isInProgress(s.status) && s.status !== 'REVIEW_IN_PROGRESS');
    let stack = listed.stack;
    // A roll recorded as under way is not shown ended by a listing (it may be older than the roll): the stack is described.
    if (!busy(stack) && !listed.described && wasInProgress(record)) stack = await this.describe(record);
    if (stack === undefined) return outcome;
    const rolling = busy(stack);
    this.slots.observed(name, rolling);
    return rolling
      ? {
          ...outcome,
          requeueAfterMs: outcome.requeueAfterMs ?? this.deps.pollMs ?? DEFAULT_POLL_MS,
          stackInProgress: true,
        }
      : outcome;
  }

  /**
   * As followUnlooked, for the pools' own stacks: one whose roll holds a slot and that this reconcile did not look at
   * (an invalid object, a shared stack that stopped the pools) is described, and its slot goes back once it settles.
   */
  private async followUnlookedPools(record: ClusterRecord, outcome: Outcome): Promise<Outcome> {
    let rolling = false;
    for (const pool of this.slots.poolsInProgress(record.name)) {
      const key = poolSlot(record.name, pool);
      if (this.slots.lookedAt(key)) continue;
      const stack = await this.describe(record, poolStackName(record.name, pool));
      if (stack === undefined) continue;
      const busy = Boolean(stack && isInProgress(stack.status) && stack.status !== 'REVIEW_IN_PROGRESS');
      this.slots.observed(key, busy);
      rolling ||= busy;
    }
    return rolling
      ? {
          ...outcome,
          requeueAfterMs: outcome.requeueAfterMs ?? this.deps.pollMs ?? DEFAULT_POLL_MS,
          stackInProgress: true,
        }
      : outcome;
  }

  /** One of the cluster's stacks as CloudFormation describes it now: null when absent, undefined when it could not be read. */
  private describe(
    record: ClusterRecord,
    stackName = workerStackName(record.name),
  ): Promise<StackSummary | null | undefined> {
    const region = regionOf(record);
    if (!region) return Promise.resolve(undefined);
    return this.deps
      .aws(region, accountOf(record.raw))
      .cfn.describeStack(stackName)
      .then(
        (s) => s ?? null,
        () => undefined,
      );
  }

  private async reconcileOne(
    record: ClusterRecord,
    listed: { readonly stack: StackSummary | null | undefined; readonly described: boolean },
  ): Promise<Outcome> {
    this.inFlight.add(record.name);
    const started = process.hrtime.bigint();
    let outcome: Outcome | undefined;
    this.slots.begin(record.name);
    try {
      outcome = await this.followUnlooked(
        record,
        listed,
        await reconcileCluster(record, this.reconcileDeps, {
          hooks: this.opts.hooks,
          listedStack: listed.stack,
          listedDescribed: listed.described,
          templatesVersion: this.templatesVersion,
          lookupStack: (stackName) => this.listings.lookup(record, false, stackName),
        }),
      );
      this.opts.metrics?.observeReconcile(
        outcome,
        Number(process.hrtime.bigint() - started) / 1e9,
        accountLabel(record.raw),
      );
      if (outcome.rollout) this.opts.metrics?.observeRollout(outcome.rollout);
      const log = {
        cluster: record.name,
        generation: record.generation,
        checksum: outcome.checksum ?? null,
        liveChecksum: record.status?.cloudConfigChecksum ?? null,
      };
      this.deps.log.info(
        { ...log, result: outcome.result, requeueAfterMs: outcome.requeueAfterMs },
        outcome.message ?? outcome.result,
      );
      return outcome;
    } finally {
      this.inFlight.delete(record.name);
      // The one owner of slots gives this reconcile's back on every exit, unless its stack is now in progress.
      if (this.reconcileDeps.slots === this.slots) this.slots.reconciled(record.name);
      // What it wrote (status, or an execute) is newer than every listing at hand: the next look reads after it.
      if (!outcome || !OUTCOMES[outcome.result].quiet) this.listings.wrote(record.name);
      // A reconcile that wrote or saw a stack move may have moved its wave: the fleet rollout reads it again.
      await this.reconcileDeps.rollout?.release(record.name, !outcome || !OUTCOMES[outcome.result].quiet);
    }
  }
}

function regionOf(r: ClusterRecord): string | undefined {
  const region = (r.raw as { spec?: { region?: unknown } } | undefined)?.spec?.region;
  return typeof region === 'string' ? region : undefined;
}
