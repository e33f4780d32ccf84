import { ChannelPins } from '../../channels';
import { StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { templatesVersion as readTemplatesVersion } from '../../../model/cloudconfig/templates';
import { workerStackName } from '../../../core/naming';
import { DEFAULT_POLL_MS, ReconcilerDeps } from '../workflow/context';
import { Outcome, OUTCOMES } from '../workflow/outcomes';
import { accountLabel, ReconcilerMetrics } from './metrics';
import { WorkQueue } from './work-queue';
import { DaemonPass, Pass, requeue } from './pass';
import { FleetSlots } from './fleet-slots';
import { regionOf, StackListings } from './stack-listings';
import { PassBook } from './pass-book';
import { UnlookedStacks } from './unlooked-stacks';
import { accountOf } from '../compose/workflow';
import { Hook, WorkflowHooks } from '../workflow/task';
import { reconcileCluster } from '../compose/reconcile-cluster';
import { RolloutCoordinator } from '../../rollout/coordinator';
import { recordedStack } from '../../rollout/report';
import { RolloutPolicySource } from '../../rollout/policy-source';
import { RolloutSignals } from '../../rollout/rollout-signals';
import { templateDirectory } from '../../../platform/files/template-directory';

export interface ControllerOptions {
  /** Worker stacks in progress at the same time, fleet-wide (a stack waited on holds no worker). @default 4 */
  readonly concurrency?: number;
  /** Reconciles running at the same time (each is short: it never waits on a stack). @default 4 */
  readonly workers?: number;
  readonly hooks?: readonly Hook[] | WorkflowHooks;
  readonly metrics?: ReconcilerMetrics;
  /** Where the WorkerRolloutPolicy objects are: rolls then go in waves (lib/engines/rollout). @default none: no fleet gating */
  /**
   * The image channels (lib/engines/channels): refreshed at the start of every pass, their pins read by every reconcile.
   * @default none: a pool that names a channel is refused (rule image-channel)
   */
  readonly channels?: ChannelPins;
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
  /** What each pass lists, counts and records. */
  private readonly passes: PassBook;
  /** The slots of stacks a reconcile did not look at. */
  private readonly unlooked: UnlookedStacks;
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
    this.unlooked = new UnlookedStacks(deps, this.slots);
    this.passes = new PassBook(deps, this.listings, {
      metrics: opts.metrics,
      inFlight: this.inFlight,
      refreshTemplates: () => this.refreshTemplates(),
      refreshChannels: opts.channels && ((records) => this.refreshChannels(records)),
    });
    const channels = opts.channels;
    const images = channels && (() => channels.resolver());
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
        images,
        code: deps.code,
        rollKeysOf: deps.code,
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
    this.reconcileDeps = {
      ...deps,
      slots: deps.slots ?? this.slots,
      rollout: deps.rollout ?? this.rollout,
      images: deps.images ?? images,
    };
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
  /** Reads the image channels the records name (once a pass); a failure keeps the last pins and is logged. */
  private async refreshChannels(records: readonly ClusterRecord[]): Promise<void> {
    try {
      const r = await this.opts.channels?.refresh(records);
      for (const p of r?.problems ?? []) this.deps.log.warn({ problem: p }, 'image channel problem');
      if (r) this.opts.metrics?.observeChannels(r);
    } catch (e) {
      this.deps.log.warn({ err: (e as Error).message }, 'image channels not read; the last pins stay');
    }
  }

  public refreshTemplates(): void {
    this.templatesVersion = this.deps.derived
      ? readTemplatesVersion(templateDirectory(this.deps.templatesDir))
      : undefined;
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
    const pass = await this.passes.start(queue, names);
    await this.drain(queue, pass, shouldStop);
    await this.passes.end(pass);
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
    let pass = await this.passes.start(queue, opts.names);
    for (;;) {
      await this.drain(queue, pass, stop, (name, o) => requeue(queue, name, o));
      await this.passes.end(pass);
      for (const [n, o] of pass.outcomes) outcomes.set(n, o);
      const next = queue.nextAt();
      if (next === undefined || stop()) return outcomes;
      const wait = Math.max(0, next - opts.now());
      if (opts.now() - start + wait > opts.deadlineMs) return outcomes;
      if (wait > 0) await opts.sleep(wait);
      pass = this.passes.next(pass);
    }
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

  /** A pass of the daemon's queue (PassBook.queue): the daemon drains it and says when each key is reconciled. */
  public queuePass(queue: WorkQueue): Promise<DaemonPass> {
    return this.passes.queue(queue);
  }

  /** The fleet's gauges from the store as it is now (`outcomes`: the pass's, when one just ended). */
  public observeFleet(outcomes: ReadonlyMap<string, Outcome>, fallback: readonly ClusterRecord[]): Promise<void> {
    return this.passes.observeFleet(outcomes, fallback);
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
      const reconciled = await reconcileCluster(record, this.reconcileDeps, {
        hooks: this.opts.hooks,
        listedStack: listed.stack,
        listedDescribed: listed.described,
        templatesVersion: this.templatesVersion,
        lookupStack: (stackName) => this.listings.lookup(record, false, stackName),
      });
      // Only the slots this controller owns follow the stacks (a caller's own slots are the caller's).
      outcome =
        this.reconcileDeps.slots === this.slots ? await this.unlooked.follow(record, listed, reconciled) : reconciled;
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
