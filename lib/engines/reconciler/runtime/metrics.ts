import { ROLL_CAUSES } from '../../stacks/roll-key';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CONDITION_TYPES } from '../../../model/cluster/schema/status';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { Outcome } from '../workflow/outcomes';
import type { RefreshReport } from '../../channels';

export interface MetricsOptions {
  /** The process_* and nodejs_* metrics of prom-client (CPU, RSS, heap, event-loop lag, GC). @default true */
  readonly processMetrics?: boolean;
  /** Seconds since the epoch, for the time-in-progress gauge read at scrape time. @default the wall clock */
  readonly now?: () => number;
}

/** Prometheus metrics of the reconciler, on their own registry. */
export class ReconcilerMetrics {
  public readonly registry = new Registry();
  private readonly reconciles = new Counter({
    name: 'worker_stacks_reconciles_total',
    help: 'Reconciles by result and account',
    labelNames: ['result', 'account'],
    registers: [this.registry],
  });
  /** The transient reconciles again, by why: AWS throttling is told from network errors and 5xx (alert WorkerStacksAwsThrottled). */
  private readonly transient = new Counter({
    name: 'worker_stacks_transient_reconciles_total',
    help: 'Reconciles that ended transient (requeued with backoff, not failures), by reason (Throttled, AwsUnavailable, AssumeRoleFailed) and account',
    labelNames: ['reason', 'account'],
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'worker_stacks_reconcile_duration_seconds',
    help: 'Duration of one cluster reconcile',
    labelNames: ['result'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [this.registry],
  });
  private readonly passDuration = new Histogram({
    name: 'worker_stacks_pass_duration_seconds',
    help: 'Duration of one pass over the fleet (or the clusters due), listings included',
    buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [this.registry],
  });
  private readonly byCondition = new Gauge({
    name: 'worker_stacks_clusters',
    help: 'Clusters by condition, status and account',
    labelNames: ['condition', 'status', 'account'],
    registers: [this.registry],
  });
  /** One series per cluster and condition type, like kube-state-metrics' conditions: 1 for the status it has. */
  private readonly clusterCondition = new Gauge({
    name: 'worker_stacks_cluster_condition',
    help: "A cluster's condition: 1 for the status it has now (True, False or Unknown)",
    labelNames: ['cluster', 'condition', 'status'],
    registers: [this.registry],
  });
  /**
   * One series per stack whose nodes are to be replaced and are not yet (its roll key, desired and live, differ), by
   * cause: what a held or failing roll is waiting on, and the alert on a roll stuck for hours.
   */
  private readonly pendingRoll = new Gauge({
    name: 'worker_stacks_pending_roll',
    help: "A stack's pending replacement of nodes (1), by cluster, pool and cause (config, image, instance types, root volume, subnets, capacity, launch template, release)",
    labelNames: ['cluster', 'pool', 'cause'],
    registers: [this.registry],
  });
  /** Stacks recorded in progress at the last pass, plus those a reconcile is waiting on now (read at scrape time). */
  private recordedInProgress = new Set<string>();
  /** Since when each stack in progress is known to be (the execution we started, else when it was first seen so). */
  private inProgressSince = new Map<string, number>();
  private waitingNow: () => ReadonlySet<string> = () => new Set();
  private readonly inProgress: Gauge = new Gauge({
    name: 'worker_stacks_stacks_in_progress',
    help: 'Worker stacks in an *_IN_PROGRESS state (recorded, or being waited on now)',
    registers: [this.registry],
    collect: (): void => this.inProgress.set(new Set([...this.recordedInProgress, ...this.waitingNow()]).size),
  });
  private slotsNow: () => number = () => 0;
  private readonly slotsHeld: Gauge = new Gauge({
    name: 'worker_stacks_slots_held',
    help: '--concurrency slots held now: stacks in progress, and reconciles about to start one',
    registers: [this.registry],
    collect: (): void => this.slotsHeld.set(this.slotsNow()),
  });
  private readonly leader = new Gauge({
    name: 'worker_stacks_leader',
    help: '1 while this replica holds the leader lease (always 1 without leader election)',
    registers: [this.registry],
  });
  private readonly timeInProgress: Gauge = new Gauge({
    name: 'worker_stacks_stack_in_progress_seconds',
    help: 'How long each worker stack in progress has been so (from our change set, else from when it was first seen)',
    labelNames: ['cluster'],
    registers: [this.registry],
    collect: (): void => {
      this.timeInProgress.reset();
      const now = this.now();
      for (const [cluster, since] of this.inProgressSince)
        this.timeInProgress.set({ cluster }, Math.max(0, now - since));
    },
  });
  private readonly lastPass = new Gauge({
    name: 'worker_stacks_last_successful_pass_timestamp_seconds',
    help: 'End of the last pass in which no cluster errored',
    registers: [this.registry],
  });
  /** Clusters of each image channel by the release pinned and whether their live stacks run it (alert WorkerStacksImageChannelStuck). */
  private readonly channelClusters = new Gauge({
    name: 'worker_stacks_image_channel_clusters',
    help: 'Clusters of an image channel by the release they are pinned to and state: runs (their live stacks run it), waits (a roll to it is pending), unpinned (release empty)',
    labelNames: ['channel', 'release', 'state'],
    registers: [this.registry],
  });
  private readonly channelNewestHalted = new Gauge({
    name: 'worker_stacks_image_channel_newest_release_halted',
    help: "1 while an image channel's newest release is halted (a roll to it failed): the fleet stays on the release before until a newer one or channels resume",
    labelNames: ['channel'],
    registers: [this.registry],
  });
  private readonly channelProblems = new Gauge({
    name: 'worker_stacks_image_channel_problems',
    help: "Problems of an image channel's last read (by region: a source that cannot be read, an image refused): nothing new is pinned there",
    labelNames: ['channel'],
    registers: [this.registry],
  });
  private readonly now: () => number;

  constructor(opts: MetricsOptions = {}) {
    this.now = opts.now ?? (() => Date.now() / 1000);
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  private readonly rollsStarted = new Counter({
    name: 'worker_stacks_rollout_rolls_started_total',
    help: 'Rolls the fleet rollout let start, by policy and wave',
    labelNames: ['policy', 'wave'],
    registers: [this.registry],
  });
  private readonly rollsHeld = new Counter({
    name: 'worker_stacks_rollout_holds_total',
    help: 'Looks at a roll that the fleet rollout held, by policy, wave and reason (RolloutHalted: a failed roll stopped the wave)',
    labelNames: ['policy', 'wave', 'reason'],
    registers: [this.registry],
  });
  private readonly timeInWave = new Histogram({
    name: 'worker_stacks_rollout_wait_seconds',
    help: 'Time a roll was held in its wave (first held until let start), by policy and wave',
    labelNames: ['policy', 'wave'],
    buckets: [0, 60, 300, 900, 1800, 3600, 7200, 14_400, 43_200, 86_400, 259_200],
    registers: [this.registry],
  });

  /** A decision of the fleet rollout gate (lib/engines/reconciler/tasks/wait-for-wave.ts). */
  public observeRollout(r: NonNullable<Outcome['rollout']>): void {
    if (r.event === 'held') this.rollsHeld.inc({ policy: r.policy, wave: r.wave, reason: r.reason ?? 'unknown' });
    else {
      this.rollsStarted.inc({ policy: r.policy, wave: r.wave });
      this.timeInWave.observe({ policy: r.policy, wave: r.wave }, (r.waitedMs ?? 0) / 1000);
    }
  }

  public setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  /** The controller's slots held now (read at scrape time). */
  public trackSlots(held: () => number): void {
    this.slotsNow = held;
  }

  /** The controller's live view of the stacks it is waiting on. */
  public trackWaiting(waiting: () => ReadonlySet<string>): void {
    this.waitingNow = waiting;
  }

  /** `account`: the cluster's (one daemon, many accounts: a broken account shows as its own series). */
  public observeReconcile(outcome: Outcome, seconds: number, account = accountLabel(undefined)): void {
    this.reconciles.inc({ result: outcome.result, account });
    if (outcome.result === 'transient') this.transient.inc({ reason: outcome.reason ?? 'Unknown', account });
    this.duration.observe({ result: outcome.result }, seconds);
  }

  /** After each refresh of the image channels (once a pass): level-based, the series of a channel no cluster names go. */
  public observeChannels(r: Pick<RefreshReport, 'census' | 'health'>): void {
    this.channelClusters.reset();
    this.channelNewestHalted.reset();
    this.channelProblems.reset();
    for (const row of r.census)
      this.channelClusters.set({ channel: row.channel, release: row.release, state: row.state }, row.clusters);
    for (const h of r.health) {
      this.channelNewestHalted.set({ channel: h.channel }, h.newestHalted ? 1 : 0);
      this.channelProblems.set({ channel: h.channel }, h.problems);
    }
  }

  public observePass(seconds: number): void {
    this.passDuration.observe(seconds);
  }

  /** Refreshed from the store after each pass (level-based, like everything else). */
  public observeFleet(records: readonly ClusterRecord[], now: Date, passOk: boolean): void {
    this.byCondition.reset();
    this.clusterCondition.reset();
    this.pendingRoll.reset();
    const inProgress = new Set<string>();
    const since = new Map<string, number>();
    for (const r of records) {
      const conditions = r.status?.conditions ?? [];
      for (const c of conditions)
        this.byCondition.inc({ condition: c.type, status: c.status, account: accountLabel(r.raw) });
      for (const type of CONDITION_TYPES) {
        const c = conditions.find((x) => x.type === type);
        this.clusterCondition.set({ cluster: r.name, condition: type, status: c?.status ?? 'Unknown' }, 1);
      }
      const pending = [
        { pool: 'default', cause: r.status?.pendingRoll },
        ...(r.status?.pools ?? []).map((p) => ({ pool: p.name, cause: p.pendingRoll })),
      ];
      for (const p of pending)
        if (p.cause) this.pendingRoll.set({ cluster: r.name, pool: p.pool, cause: causeLabel(p.cause) }, 1);
      if (r.status?.stackStatus?.endsWith('_IN_PROGRESS')) {
        inProgress.add(r.name);
        const started = r.status.controller?.executing?.startedAt;
        since.set(
          r.name,
          started ? Date.parse(started) / 1000 : (this.inProgressSince.get(r.name) ?? now.getTime() / 1000),
        );
      }
    }
    this.recordedInProgress = inProgress;
    this.inProgressSince = since;
    if (passOk) this.lastPass.set(now.getTime() / 1000);
  }
}

/**
 * A pending roll's cause as a label of few values: `release` for a release's change, else the causes without the
 * properties a launch template change names ("image,launch template", never a property list or version).
 */
function causeLabel(cause: string): string {
  if (cause.startsWith('release')) return 'release';
  const named = new Set(cause.split(', ').map((c) => c.split(':')[0]));
  return ROLL_CAUSES.filter((c) => named.has(c)).join(',') || 'unknown';
}

/** The object's spec.account, or "unknown" (an unreadable or invalid object has none to trust). */
export function accountLabel(raw: unknown): string {
  const account = (raw as { spec?: { account?: unknown } } | undefined)?.spec?.account;
  return typeof account === 'string' && /^\d{12}$/.test(account) ? account : 'unknown';
}
