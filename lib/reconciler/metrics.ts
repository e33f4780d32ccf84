import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ClusterRecord } from '../stores/cluster-store';
import { Outcome } from './context';

/** Prometheus metrics of the reconciler, on their own registry. */
export class ReconcilerMetrics {
  public readonly registry = new Registry();
  private readonly reconciles = new Counter({ name: 'worker_stacks_reconciles_total', help: 'Reconciles by result', labelNames: ['result'], registers: [this.registry] });
  private readonly duration = new Histogram({
    name: 'worker_stacks_reconcile_duration_seconds',
    help: 'Duration of one cluster reconcile',
    labelNames: ['result'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [this.registry],
  });
  private readonly byCondition = new Gauge({ name: 'worker_stacks_clusters', help: 'Clusters by condition and status', labelNames: ['condition', 'status'], registers: [this.registry] });
  /** Stacks recorded in progress at the last pass, plus those a reconcile is waiting on now (read at scrape time). */
  private recordedInProgress = new Set<string>();
  private waitingNow: () => ReadonlySet<string> = () => new Set();
  private readonly inProgress: Gauge = new Gauge({
    name: 'worker_stacks_stacks_in_progress',
    help: 'Worker stacks in an *_IN_PROGRESS state (recorded, or being waited on now)',
    registers: [this.registry],
    collect: (): void => this.inProgress.set(new Set([...this.recordedInProgress, ...this.waitingNow()]).size),
  });
  private readonly leader = new Gauge({ name: 'worker_stacks_leader', help: '1 while this replica holds the leader lease (always 1 without leader election)', registers: [this.registry] });
  private readonly lastPass = new Gauge({ name: 'worker_stacks_last_successful_pass_timestamp_seconds', help: 'End of the last pass in which no cluster errored', registers: [this.registry] });

  public setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  /** The controller's live view of the stacks it is waiting on. */
  public trackWaiting(waiting: () => ReadonlySet<string>): void {
    this.waitingNow = waiting;
  }

  public observeReconcile(outcome: Outcome, seconds: number): void {
    this.reconciles.inc({ result: outcome.result });
    this.duration.observe({ result: outcome.result }, seconds);
  }

  /** Refreshed from the store after each pass (level-based, like everything else). */
  public observeFleet(records: readonly ClusterRecord[], now: Date, passOk: boolean): void {
    this.byCondition.reset();
    const inProgress = new Set<string>();
    for (const r of records) {
      for (const c of r.status?.conditions ?? []) this.byCondition.inc({ condition: c.type, status: c.status });
      if (r.status?.stackStatus?.endsWith('_IN_PROGRESS')) inProgress.add(r.name);
    }
    this.recordedInProgress = inProgress;
    if (passOk) this.lastPass.set(now.getTime() / 1000);
  }
}
