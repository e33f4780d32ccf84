import { ClusterRecord } from '../../../model/ports/cluster-store';
import { Outcome, OUTCOMES } from '../workflow/outcomes';
import { WorkQueue } from './work-queue';

/** One pass over the objects listed (or the keys due again). */
export interface Pass {
  readonly started: bigint;
  /** Every object as listed (the fleet gauges' fallback). */
  readonly all: readonly ClusterRecord[];
  readonly clusters: number;
  /** Objects listed and not reconciled yet in this pass: their first reconcile uses the listed record. */
  readonly listed: Map<string, ClusterRecord>;
  readonly outcomes: Map<string, Outcome>;
  readonly regionsListed: number;
}

/** A pass of the daemon's queue (Controller.queuePass). */
export interface DaemonPass {
  /** Keys queued. */
  readonly size: number;
  /** One of them was reconciled (outcome undefined: removed); true once the pass is complete. */
  reconciled(name: string, outcome: Outcome | undefined): Promise<boolean>;
}

/** Requeues a key as its outcome asks (the outcome table's `requeue`): a transient error with the queue's per-key backoff. */
export function requeue(queue: WorkQueue, name: string, o: Outcome): void {
  if (o.result === 'transient') {
    queue.addRateLimited(name);
    return;
  }
  queue.forget(name);
  if (o.requeueAfterMs !== undefined && (OUTCOMES[o.result].requeue || o.stackInProgress))
    queue.addAfter(name, o.requeueAfterMs);
}

/** `{ applied: 2, unchanged: 98 }`, in a stable key order, for the pass summary line. */
export function countResults(outcomes: ReadonlyMap<string, Outcome>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of [...outcomes.values()].map((o) => o.result).sort()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}
