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
  private readonly inProgress = new Gauge({ name: 'worker_stacks_stacks_in_progress', help: 'Worker stacks in an *_IN_PROGRESS state', registers: [this.registry] });
  private readonly lastPass = new Gauge({ name: 'worker_stacks_last_successful_pass_timestamp_seconds', help: 'End of the last pass in which no cluster errored', registers: [this.registry] });

  public observeReconcile(outcome: Outcome, seconds: number): void {
    this.reconciles.inc({ result: outcome.result });
    this.duration.observe({ result: outcome.result }, seconds);
  }

  /** Refreshed from the store after each pass (level-based, like everything else). */
  public observeFleet(records: readonly ClusterRecord[], now: Date, passOk: boolean): void {
    this.byCondition.reset();
    let inProgress = 0;
    for (const r of records) {
      for (const c of r.status?.conditions ?? []) this.byCondition.inc({ condition: c.type, status: c.status });
      if (r.status?.stackStatus?.endsWith('_IN_PROGRESS')) inProgress++;
    }
    this.inProgress.set(inProgress);
    if (passOk) this.lastPass.set(now.getTime() / 1000);
  }
}
