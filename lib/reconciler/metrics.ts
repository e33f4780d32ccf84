import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ClusterRecord } from '../stores/cluster-store';
import { Outcome } from './context';

/** Prometheus metrics of the reconciler, on their own registry. */
export class ReconcilerMetrics {
  public readonly registry = new Registry();
  private readonly reconciles = new Counter({ name: 'worker_stacks_reconciles_total', help: 'Reconciles by result and account', labelNames: ['result', 'account'], registers: [this.registry] });
  private readonly duration = new Histogram({
    name: 'worker_stacks_reconcile_duration_seconds',
    help: 'Duration of one cluster reconcile',
    labelNames: ['result'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [this.registry],
  });
  private readonly byCondition = new Gauge({ name: 'worker_stacks_clusters', help: 'Clusters by condition, status and account', labelNames: ['condition', 'status', 'account'], registers: [this.registry] });
  /** Stacks recorded in progress at the last pass, plus those a reconcile is waiting on now (read at scrape time). */
  private recordedInProgress = new Set<string>();
  private waitingNow: () => ReadonlySet<string> = () => new Set();
  private readonly inProgress: Gauge = new Gauge({
    name: 'worker_stacks_stacks_in_progress',
    help: 'Worker stacks in an *_IN_PROGRESS state (recorded, or being waited on now)',
    registers: [this.registry],
    collect: (): void => this.inProgress.set(new Set([...this.recordedInProgress, ...this.waitingNow()]).size),
  });
  private readonly lastPass = new Gauge({ name: 'worker_stacks_last_successful_pass_timestamp_seconds', help: 'End of the last pass in which no cluster errored', registers: [this.registry] });

  /** The controller's live view of the stacks it is waiting on. */
  public trackWaiting(waiting: () => ReadonlySet<string>): void {
    this.waitingNow = waiting;
  }

  /** `account`: the cluster's (one daemon, many accounts: a broken account shows as its own series). */
  public observeReconcile(outcome: Outcome, seconds: number, account = accountLabel(undefined)): void {
    this.reconciles.inc({ result: outcome.result, account });
    this.duration.observe({ result: outcome.result }, seconds);
  }

  /** Refreshed from the store after each pass (level-based, like everything else). */
  public observeFleet(records: readonly ClusterRecord[], now: Date, passOk: boolean): void {
    this.byCondition.reset();
    const inProgress = new Set<string>();
    for (const r of records) {
      for (const c of r.status?.conditions ?? []) this.byCondition.inc({ condition: c.type, status: c.status, account: accountLabel(r.raw) });
      if (r.status?.stackStatus?.endsWith('_IN_PROGRESS')) inProgress.add(r.name);
    }
    this.recordedInProgress = inProgress;
    if (passOk) this.lastPass.set(now.getTime() / 1000);
  }
}

/** The object's spec.account, or "unknown" (an unreadable or invalid object has none to trust). */
export function accountLabel(raw: unknown): string {
  const account = (raw as { spec?: { account?: unknown } } | undefined)?.spec?.account;
  return typeof account === 'string' && /^\d{12}$/.test(account) ? account : 'unknown';
}
