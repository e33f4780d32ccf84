import { ClusterStatus, ControllerBookkeeping, EMPTY_STATUS, setConditions } from '../../../model/cluster/status';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import type { ReasonedCondition } from './conditions';
import type { Logger } from '../../../core/logger';
import type { ClusterStore } from '../../../model/ports/cluster-store';
import type { EventSink } from './events';
import { eventsFor } from './events';

/** The fields of a status a task may set directly (conditions and the controller's bookkeeping go their own ways). */
type StatusPatch = Partial<Omit<ClusterStatus, 'conditions' | 'controller'>>;

/**
 * What tasks see of the status: the status as this reconcile has changed it so far (read back by the tasks after),
 * and `stage` to change it. Nothing here writes: the workflow writes the staged status once, at the end of the
 * reconcile, on every exit (see reconcileCluster). The one exception is `writeBeforeMutation`, before a stack operation the reconciler counts.
 */
export interface PendingStatus {
  readonly status: ClusterStatus;
  readonly controller: ControllerBookkeeping;
  /** Merges `patch` (and `bookkeeping` into status.controller) and sets `conditions`, in the pending status only. */
  stage(
    patch: StatusPatch,
    conditions?: readonly ReasonedCondition[],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void;
  /**
   * Writes the pending status now, before a stack operation the reconciler counts (ExecuteChangeSet; recovery's
   * DeleteStack and ContinueUpdateRollback): what is about to run (status.controller.executing, recoveryAttempts) must
   * be durable before AWS is touched, so that a crash or a lost leadership right after the call still knows whose
   * operation the stack is running and counts it: retries stay bounded across restarts. A stale read fails here (a
   * ConflictError) and nothing is called. The only write a task may cause (tasks/apply.ts only).
   */
  writeBeforeMutation(): Promise<void>;
}

/**
 * Owns a cluster's status during one reconcile: tasks stage changes (see PendingStatus), the workflow writes them
 * once. Conditions are set with the object's generation; an unchanged status writes nothing (an unchanged pass costs
 * no write). Never writes in a dry run (nothing is staged either, as nothing was ever written there). Events follow
 * a written status only: eventsFor(what was written before, what is written now).
 */

/** What the recorder needs of the reconciler's dependencies (a subset of ReconcilerDeps, so that context.ts, which
 * holds a recorder, and this file do not import each other). */
export interface RecorderDeps {
  readonly store: Pick<ClusterStore, 'writeStatus'>;
  readonly dryRun: boolean;
  readonly now: () => Date;
  readonly events?: EventSink;
  readonly log: Logger;
}

export class StatusRecorder implements PendingStatus {
  private pending: ClusterStatus;
  private written: ClusterStatus;
  private version: string;

  constructor(
    private readonly record: ClusterRecord,
    private readonly deps: RecorderDeps,
  ) {
    this.pending = this.written = record.status ?? EMPTY_STATUS;
    this.version = record.resourceVersion;
  }

  public get status(): ClusterStatus {
    return this.pending;
  }

  public get controller(): ControllerBookkeeping {
    return this.pending.controller ?? {};
  }

  /** True when the pending status differs from the one last written (or read). */
  public get dirty(): boolean {
    return JSON.stringify(this.pending) !== JSON.stringify(this.written);
  }

  public stage(
    patch: StatusPatch,
    conditions: readonly ReasonedCondition[] = [],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void {
    if (this.deps.dryRun) return;
    const controller = bookkeeping ? dropUndefined({ ...this.controller, ...bookkeeping }) : this.pending.controller;
    this.pending = dropUndefined({
      ...this.pending,
      ...patch,
      controller: controller && Object.keys(controller).length ? controller : undefined,
      conditions: setConditions(this.pending.conditions, conditions, this.record.generation, this.deps.now()),
    });
  }

  public writeBeforeMutation(): Promise<void> {
    return this.flush();
  }

  /** Writes the pending status if it changed; the workflow calls this once, at the end of every reconcile. */
  public async flush(): Promise<void> {
    if (!this.dirty) return;
    const next = this.pending;
    try {
      this.version = await this.deps.store.writeStatus(this.record.name, next, this.version);
    } catch (e) {
      // Not written, so not true: what the error path stages goes on top of what is on record (a failed write before
      // ExecuteChangeSet leaves no `executing` behind for a change set that was never executed).
      this.discard();
      throw e;
    }
    const before = this.written;
    this.written = next;
    // Events never hold the reconcile up (a lost event is only a lost event).
    const sink = this.deps.events;
    if (!sink) return;
    for (const e of eventsFor(before, next)) {
      sink
        .emit(this.record.name, e)
        .catch((err: unknown) =>
          this.deps.log.warn(
            { cluster: this.record.name, event: e.reason, err: String(err) },
            'could not record the event',
          ),
        );
    }
  }

  /** Drops what was staged but not written (a write that failed: the next reconcile starts from a fresh read). */
  public discard(): void {
    this.pending = this.written;
  }
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
